package org.rds4j.transport.tcp;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.Connection;
import org.rds4j.core.StackCounters;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * One TCP connection under an RDS connection: frames are a header then the payload, back to back. Writes
 * gather many frames per system call and resume a partly written frame; reads parse frames in place and
 * validate every header before its payload is awaited. Agent thread only.
 */
final class TcpPath implements TransportPath
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpPath.class);
    private static final int FRAMES_PER_WRITE = 64;
    private static final int WRITES_PER_TRANSMIT = 16;
    private static final int READS_PER_CYCLE = 4;
    private static final int INITIAL_READ_BUFFER = 256 * 1024;
    private static final int MAX_FRAME = RdsHeader.LENGTH + RdsHeader.MAX_PAYLOAD;

    private final Connection connection;
    private final SocketChannel channel;
    private final StackCounters counters;
    private final ByteBuffer[] frames = new ByteBuffer[FRAMES_PER_WRITE];
    private ByteBuffer readBuffer = ByteBuffer.allocateDirect(INITIAL_READ_BUFFER);
    private final UnsafeBuffer readView = new UnsafeBuffer(readBuffer);
    private SelectionKey key;
    private boolean waitingForRoom;
    private boolean closed;

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
            try
            {
                channel.write(frames, 0, count);
            }
            catch (final IOException ex)
            {
                fail("write failed: " + ex);
                return done;
            }
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

    /** The socket has room again after a partial write. */
    int onWritable()
    {
        waitingForRoom = false;
        key.interestOps(SelectionKey.OP_READ);
        return transmit();
    }

    /** Reads what arrived and hands each complete frame to the connection. */
    int onReadable()
    {
        int frameCount = 0;
        for (int i = 0; i < READS_PER_CYCLE && !closed; i++)
        {
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
            frameCount += parseFrames();
            if (readBuffer.hasRemaining())
            {
                break;
            }
        }
        return frameCount;
    }

    private int parseFrames()
    {
        final int end = readBuffer.position();
        int offset = 0;
        int count = 0;
        // a frame may drop the connection (a restarted peer): nothing after it is for this connection
        while (end - offset >= RdsHeader.LENGTH && !closed)
        {
            final int verdict = RdsHeader.validate(readView, offset);
            if (verdict != RdsHeader.VALID)
            {
                counters.connBadFrame.incrementOrdered();
                LOG.warn("{} dropped: {}", connection, RdsHeader.describeValidation(verdict));
                fail("bad frame: " + RdsHeader.describeValidation(verdict));
                return count;
            }
            final int frameLength = RdsHeader.LENGTH + (int)RdsHeader.length(readView, offset);
            if (end - offset < frameLength)
            {
                break;
            }
            connection.onFrame(readView, offset);
            offset += frameLength;
            count++;
        }
        readBuffer.limit(end).position(offset);
        readBuffer.compact();
        if (end - offset >= RdsHeader.LENGTH)
        {
            final int needed = RdsHeader.LENGTH + (int)RdsHeader.length(readView, 0);
            if (needed > readBuffer.capacity())
            {
                grow(needed);
            }
        }
        return count;
    }

    private void grow(final int needed)
    {
        final ByteBuffer bigger = ByteBuffer.allocateDirect(Math.min(MAX_FRAME, Math.max(needed, readBuffer.capacity() * 2)));
        readBuffer.flip();
        bigger.put(readBuffer);
        readBuffer = bigger;
        readView.wrap(readBuffer);
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
        close();
        connection.onPathDown(this, reason);
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
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
