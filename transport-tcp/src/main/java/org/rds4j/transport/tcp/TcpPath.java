package org.rds4j.transport.tcp;

import org.agrona.DirectBuffer;
import org.rds4j.core.Connection;
import org.rds4j.core.StackCounters;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * One TCP connection under an RDS connection: frames are a header then the payload, back to back. Writes
 * gather many frames per system call and resume a partly written frame; reads go through a
 * {@link TcpFrameReader}, which validates every header before its payload is awaited. Agent thread only.
 */
final class TcpPath implements TransportPath
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpPath.class);
    private static final int FRAMES_PER_WRITE = 64;
    private static final int WRITES_PER_TRANSMIT = 16;
    private static final int READS_PER_CYCLE = 4;

    private final Connection connection;
    private final SocketChannel channel;
    private final StackCounters counters;
    private final ByteBuffer[] frames = new ByteBuffer[FRAMES_PER_WRITE];
    private final TcpFrameReader reader = new TcpFrameReader();
    private final TcpFrameReader.FrameHandler onFrame = this::deliver;
    /** A frame has started and not completed; since when (agent clock). */
    private boolean partialFrame;
    private long partialSinceNs;
    private SelectionKey key;
    private boolean waitingForRoom;
    private boolean closed;
    /** Set while the peer sends no RDS acks: TCP's acks stand in for them (kernel rds_tcp's rule). */
    private TcpUnackedBytes unackedBytes;
    private final TcpAckedFrames writtenFrames = new TcpAckedFrames();
    /** Where each frame of a write started, while TCP acks stand in for RDS acks. */
    private final int[] startPositions = new int[FRAMES_PER_WRITE];
    /** Bytes written to the socket since it connected. */
    private long bytesWritten;
    /** Bytes read from the socket since it connected. */
    private long bytesRead;
    private boolean draining;

    TcpPath(final Connection connection, final SocketChannel channel, final StackCounters counters)
    {
        this.connection = connection;
        this.channel = channel;
        this.counters = counters;
    }

    void attach(final SelectionKey key)
    {
        this.key = key;
        key.attach(this);
        key.interestOps(SelectionKey.OP_READ);
    }


    @Override
    public int transmit()
    {
        if (waitingForRoom || closed)
        {
            return 0;
        }
        int done = 0;
        for (int i = 0; i < WRITES_PER_TRANSMIT; i++)
        {
            final int count = connection.fillTransmit(frames, FRAMES_PER_WRITE);
            if (count == 0)
            {
                break;
            }
            final boolean tracking = unackedBytes != null;
            if (tracking)
            {
                for (int f = 0; f < count; f++)
                {
                    startPositions[f] = frames[f].position();
                }
            }
            final long written;
            try
            {
                written = channel.write(frames, 0, count);
            }
            catch (final IOException ex)
            {
                fail("write failed: " + ex);
                return done;
            }
            if (tracking)
            {
                recordFrameEnds(count);
            }
            bytesWritten += written;
            final int completed = connection.onTransmitted(frames, count);
            done += completed;
            if (completed < count)
            {
                waitingForRoom = true;
                key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                break;
            }
        }
        return done;
    }

    /**
     * While TCP acks stand in for RDS acks: records where each sequenced frame the write finished ends in the
     * stream. Call before {@link #bytesWritten} counts the write.
     */
    private void recordFrameEnds(final int count)
    {
        long end = bytesWritten;
        for (int f = 0; f < count; f++)
        {
            final ByteBuffer frame = frames[f];
            end += frame.position() - startPositions[f];
            if (frame.hasRemaining())
            {
                break;
            }
            final long raw = frame.getLong(0); // h_sequence, header at index 0
            final long sequence = frame.order() == ByteOrder.BIG_ENDIAN ? raw : Long.reverseBytes(raw);
            if (sequence != 0)
            {
                writtenFrames.onWritten(end, sequence);
            }
        }
    }

    @Override
    public boolean reportTransportAcks(final boolean on)
    {
        if (!on || closed)
        {
            unackedBytes = null;
            return false;
        }
        if (unackedBytes == null)
        {
            try
            {
                unackedBytes = TcpUnackedBytes.of(channel);
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.warn("{}: cannot read what TCP acked ({}); messages to this peer, which sends no RDS acks, " +
                    "stay queued until the send buffer fills", connection, ex.getMessage());
                return false;
            }
        }
        return true;
    }

    /**
     * While TCP acks stand in for RDS acks: frames the peer's host has whole are acked to the connection.
     *
     * @return 1 if some were, else 0.
     */
    int pollTransportAcks()
    {
        if (unackedBytes == null || writtenFrames.size() == 0 || closed)
        {
            return 0;
        }
        final int unacked = unackedBytes.unacked();
        if (unacked < 0)
        {
            return 0; // the socket is failing: the read or write that sees it reports it
        }
        final long sequence = writtenFrames.ackedUpTo(bytesWritten - unacked);
        if (sequence == 0)
        {
            return 0;
        }
        connection.onPeerAck(sequence);
        return 1;
    }

    /** The socket has room again after a partial write. */
    int onWritable()
    {
        waitingForRoom = false;
        key.interestOps(SelectionKey.OP_READ);
        return transmit();
    }

    /**
     * Reads what arrived and hands each complete frame to the connection; a frame that fails validation drops
     * the connection ({@code conn_bad_frame}, one WARN line).
     *
     * @param nowNs the agent's clock, which starts the frame timeout of a frame left incomplete.
     */
    int onReadable(final long nowNs)
    {
        int frameCount = 0;
        for (int i = 0; i < READS_PER_CYCLE && !closed; i++)
        {
            final ByteBuffer readBuffer = reader.buffer();
            final int read;
            try
            {
                read = channel.read(readBuffer);
            }
            catch (final IOException ex)
            {
                fail("read failed: " + ex);
                return frameCount;
            }
            if (read < 0)
            {
                fail("closed by peer");
                return frameCount;
            }
            if (read == 0)
            {
                break;
            }
            bytesRead += read;
            final int frames = reader.parse(onFrame);
            frameCount += frames;
            final int verdict = reader.invalidVerdict();
            if (verdict != RdsHeader.VALID)
            {
                counters.connBadFrame.incrementOrdered();
                misbehaved("bad frame: " + RdsHeader.describeValidation(verdict));
                return frameCount;
            }
            if (reader.buffered() == 0)
            {
                partialFrame = false;
            }
            else if (!partialFrame || frames > 0)
            {
                // a new frame started: its time starts now
                partialFrame = true;
                partialSinceNs = nowNs;
            }
            if (reader.buffer() != readBuffer || readBuffer.hasRemaining())
            {
                break;
            }
        }
        return frameCount;
    }

    /**
     * Reads until the socket has nothing more: the kernel hands over every byte it received (and acked)
     * before it reports a reset, so nothing TCP acked is left behind when the path closes.
     */
    @Override
    public void drainReceived()
    {
        if (draining || closed)
        {
            return;
        }
        draining = true;
        try
        {
            long before;
            do
            {
                before = bytesRead;
                onReadable(System.nanoTime());
            }
            while (bytesRead > before && !closed);
        }
        finally
        {
            draining = false;
        }
    }

    private boolean deliver(final DirectBuffer buffer, final int offset, final int frameLength)
    {
        if (closed)
        {
            return false;
        }
        connection.onFrame(buffer, offset);
        return true;
    }

    /**
     * @param nowNs     the agent's clock.
     * @param timeoutNs the longest a started frame may take to complete.
     * @return true if a frame has been incomplete for {@code timeoutNs} or more.
     */
    boolean isFrameOverdue(final long nowNs, final long timeoutNs)
    {
        return partialFrame && !closed && nowNs - partialSinceNs >= timeoutNs;
    }

    /** Drops the connection because a frame did not complete in time (a stalled or slowloris peer). */
    void dropForFrameTimeout(final long timeoutNs)
    {
        counters.connFrameTimeout.incrementOrdered();
        misbehaved("a frame stayed incomplete (" + reader.buffered() + " of its bytes received) for " +
            TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms");
    }

    /** @return bytes of the read buffer, for tests: memory stays bounded whatever a peer announces. */
    int readBufferCapacity()
    {
        return reader.capacity();
    }

    /** Resets the connection (RST, no FIN) and reports it down: fault injection. */
    void abort()
    {
        try
        {
            channel.setOption(StandardSocketOptions.SO_LINGER, 0);
        }
        catch (final IOException ex)
        {
            LOG.debug("SO_LINGER on abort", ex);
        }
        fail("aborted");
    }

    private void fail(final String reason)
    {
        connection.onPathDown(this, reason); // drains what arrived (drainReceived), then closes this path
        close();
    }

    private void misbehaved(final String reason)
    {
        close();
        connection.onPeerMisbehaved(this, reason);
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        unackedBytes = null;
        if (key != null)
        {
            key.cancel();
        }
        TcpTransport.closeQuietly(channel);
    }

    boolean isClosed()
    {
        return closed;
    }
}
