package org.rds4j.transport.tcp;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.TransportCounters;
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
 * One TCP connection under an RDS connection: frames are a header then the payload, back to back. A frame of
 * {@link #DIRECT_WRITE_BYTES} or more is written from its own buffer (a gathering write, with the frames behind
 * it). Smaller frames are staged, copied into a buffer that one system call writes (a small frame then costs a
 * copy of its bytes instead of an iovec of its own): the path's {@link TcpSendRing} while it has room, whose
 * stage of {@link #ZERO_COPY_MIN_BYTES} or more is sent with {@code sendfile}, so the kernel copies nothing;
 * else a buffer of the path's own. A write the socket takes only in part resumes when it has room. Reads go
 * through a {@link TcpFrameReader}, which validates every header before its payload is awaited.
 * <p>
 * Memory: the read buffer and the copy stage are borrowed from the transport's {@link TcpBufferPool} only while
 * they hold bytes (a frame part way in; staged bytes the socket has not yet taken) and given back as soon as they
 * are empty, so an idle connection holds neither; what a closed path still holds goes back in
 * {@link #releaseBuffersIfClosed}. Agent thread only.
 */
final class TcpPath implements TransportPath
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpPath.class);
    /** Frames taken from the connection per fill of the stage. */
    private static final int FRAMES_PER_FILL = 64;
    /**
     * Frames taken per fill while the path writes large frames from their own buffers: one gathering write of 256
     * (about 270 KiB at 1 KiB) carried 7-12 % more 1 KiB messages than 64 did, where 256 for the stage too made
     * 64 B about 3 % slower (benchmarks.md, 2026-11-28).
     */
    private static final int FRAMES_PER_DIRECT_FILL = 256;
    /** Bytes staged per write: big enough that the per-write costs vanish, small enough to stay in cache. */
    static final int STAGE_BYTES = 128 * 1024;
    /**
     * Frames this large are written from their own buffers, not staged: from about 1 KiB an iovec costs less
     * than copying the frame into the stage (at 1 KiB, about 25 ns of the sender's CPU per message), and the
     * kernel's one copy from the frame's buffer less than ours into the send ring and its {@code sendfile}
     * (1 KiB one-way +15 %: benchmarks.md, 2026-11-28).
     */
    static final int DIRECT_WRITE_BYTES = 1024;
    private static final int WRITES_PER_TRANSMIT = 16;
    /** The least contiguous room in the send ring worth staging in; with less, frames are staged for a copy. */
    private static final int RING_MIN_CLAIM = 16 * 1024;
    /**
     * Staged bytes from which {@code sendfile} from the send ring costs less than a copying write; a smaller
     * stage (a ping-pong's one frame) is copied, and its ring memory is used again at once.
     */
    static final int ZERO_COPY_MIN_BYTES = 4096;
    /**
     * Bytes a read asks for, one read per duty cycle, when the last read found less waiting: the pool's smallest
     * class, which is all a connection with little traffic borrows. A cycle's frames go into the sockets' receive
     * rings before the next read: a bounded batch keeps them in cache, and acks go out between batches instead of
     * after a megabyte.
     */
    private static final int READ_BYTES_PER_CYCLE = TcpBufferPool.DEFAULT_SMALLEST_CLASS;
    /**
     * Bytes a read asks for while the connection streams (the last read took all it asked for, so more was
     * waiting): a quarter of the reads and duty cycles per byte (one-way 1 KiB about +4 %, 64 B +1.6 %, fan-out
     * +3 % by alternated pairs; benchmarks.md). Still a batch that stays in the L2 cache.
     */
    static final int READ_BYTES_STREAMING = 256 * 1024;

    private final ConnectionPath connection;
    private final SocketChannel channel;
    private final TransportCounters counters;
    private final AtomicCounter sndbufFull;
    private final AtomicCounter zeroCopyBytes;
    private final ByteBuffer[] frames = new ByteBuffer[FRAMES_PER_DIRECT_FILL];
    private final TcpBufferPool buffers;
    /** The stage while nothing is staged: empty, never written to. */
    private final ByteBuffer noStage = ByteBuffer.allocate(0);
    /**
     * Where frames are staged for a copying write when the send ring is off, unavailable or full: borrowed from
     * {@link #buffers} when a fill begins, given back once the socket has taken all of it; null while not held.
     */
    private ByteBuffer copyStage;
    /**
     * Staged bytes not yet written, between position and limit (read mode): {@link #copyStage}, the send ring's
     * claimed memory, or {@link #noStage}.
     */
    private ByteBuffer stage = noStage;
    /** The last fill began with a large frame, written from its own buffer: the next fill takes more frames. */
    private boolean writingDirect;
    /** The stage is a committed region of the send ring, written with {@code sendfile}. */
    private boolean stageZeroCopy;
    /** Bytes of shared memory for the send ring; 0: frames are always copied into the socket. */
    private final int sendRingBytes;
    /**
     * Created once {@link #bulkBytesCopied} reaches a quarter of {@link #sendRingBytes}; null before, or if
     * shared memory is unavailable.
     */
    private TcpSendRing sendRing;
    private boolean sendRingUnavailable;
    /**
     * Bytes of staged frames copied into the socket in writes of {@link #ZERO_COPY_MIN_BYTES} or more while the
     * path had no ring: bulk traffic, which the ring's memory is worth taking for (a congestion map now and then
     * is not).
     */
    private long bulkBytesCopied;
    private final TcpFrameReader reader;
    /** A read's frames are one batch for the stack, which queues a socket's frames of it in one run. */
    private final TcpFrameReader.FrameHandler onFrame = new TcpFrameReader.FrameHandler()
    {
        @Override
        public boolean onFrame(final DirectBuffer buffer, final int offset, final int frameLength)
        {
            return deliver(buffer, offset);
        }

        @Override
        public void onFramesEnd()
        {
            connection.onBatchEnd();
        }
    };
    /** What the next read asks for: {@link #READ_BYTES_STREAMING} after a read that took all it asked for. */
    private int readBytes = READ_BYTES_PER_CYCLE;
    /** A frame has started and not completed; since when (agent clock). */
    private boolean partialFrame;
    private long partialSinceNs;
    private SelectionKey key;
    private boolean waitingForRoom;
    private boolean closed;
    /** Set while the peer sends no RDS acks: TCP's acks stand in for them (kernel rds_tcp's rule). */
    private TcpUnackedBytes unackedBytes;
    private final TcpAckedFrames writtenFrames = new TcpAckedFrames();
    /** Where each frame of a direct write started, while its frames' ends are wanted. */
    private final int[] startPositions = new int[FRAMES_PER_DIRECT_FILL];
    /** Bytes staged or written directly since the socket connected: the stream offset of the next byte. */
    private long bytesQueued;
    /** Bytes written to the socket since it connected. */
    private long bytesWritten;
    /** Bytes read from the socket since it connected. */
    private long bytesRead;
    private boolean draining;
    /**
     * Frames are being appended ({@link #append}): the stage is a claim of the send ring in write mode, from
     * {@link #appendStart}, whose first byte is ring position {@link #appendPosition}.
     */
    private boolean appending;
    private int appendStart;
    private long appendPosition;
    private long lastAppendedSequence;
    /** Frames appended since the path connected, and that count when {@link #transmit} last looked. */
    private long appendCount;
    private long appendCountSeen;
    private final UnsafeBuffer appendView = new UnsafeBuffer(0, 0);

    /**
     * @param buffers       the transport's pool, which lends the read buffer and the copy stage.
     * @param sendRingBytes bytes of shared memory to stage frames in for zero-copy writes, 0 for none.
     */
    TcpPath(final ConnectionPath connection, final SocketChannel channel, final TransportCounters counters,
        final AtomicCounter sndbufFull, final AtomicCounter zeroCopyBytes, final TcpBufferPool buffers,
        final int sendRingBytes)
    {
        this.buffers = buffers;
        this.reader = new TcpFrameReader(buffers);
        this.zeroCopyBytes = zeroCopyBytes;
        this.sendRingBytes = sendRingBytes;
        this.sndbufFull = sndbufFull;
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
        if (appending)
        {
            if (appendCount != appendCountSeen)
            {
                // a sender is appending a stream and sends it in batches itself; a cycle later they are stale
                appendCountSeen = appendCount;
                return 0;
            }
            flushAppended();
            if (waitingForRoom || closed)
            {
                return 0;
            }
        }
        int done = 0;
        for (int i = 0; i < WRITES_PER_TRANSMIT && !closed; i++)
        {
            if (!stage.hasRemaining())
            {
                final int count =
                    connection.fillTransmit(frames, writingDirect ? FRAMES_PER_DIRECT_FILL : FRAMES_PER_FILL);
                if (count == 0)
                {
                    break;
                }
                writingDirect = frames[0].remaining() >= DIRECT_WRITE_BYTES;
                if (writingDirect)
                {
                    final int completed = writeDirect(count);
                    done += Math.max(0, completed);
                    if (completed < count)
                    {
                        break;
                    }
                    continue;
                }
                final ByteBuffer claimed = claimSendRing();
                stage = claimed != null ? claimed : borrowCopyStage();
                final int start = stage.position();
                done += stageFrames(count);
                final int staged = stage.position() - start;
                stageZeroCopy = claimed != null && staged >= ZERO_COPY_MIN_BYTES;
                if (stageZeroCopy)
                {
                    sendRing.commit();
                }
                else
                {
                    stage.limit(stage.position()).position(start);
                    countCopied(staged);
                }
            }
            if (!writeStage())
            {
                break;
            }
        }
        return done;
    }

    @Override
    public long append(final long sequence, final long ack, final int flags, final int sport, final int dport,
        final ByteBuffer payload, final int length)
    {
        // frame ends are tracked per frame while TCP acks stand in for RDS acks: those frames go the usual way
        if (closed || waitingForRoom || unackedBytes != null || sendRingBytes == 0)
        {
            return -1;
        }
        final int frameLength = RdsHeader.LENGTH + length;
        if (appending && stage.remaining() < frameLength)
        {
            flushAppended();
            if (waitingForRoom || closed)
            {
                return -1;
            }
        }
        if (!appending && !claimForAppend(frameLength))
        {
            return -1;
        }
        final int index = stage.position();
        RdsHeader.write(appendView, index, sequence, ack, length, sport, dport, flags, 0);
        appendView.putBytes(index + RdsHeader.LENGTH, payload, payload.position(), length);
        stage.position(index + frameLength);
        bytesQueued += frameLength;
        lastAppendedSequence = sequence;
        appendCount++;
        return appendPosition + index - appendStart;
    }

    /** @return whether the stage is now a claim of the send ring with room for the frame. */
    private boolean claimForAppend(final int frameLength)
    {
        if (stage.hasRemaining())
        {
            return false; // a write in progress
        }
        final ByteBuffer claimed = openSendRing() ? sendRing.claim(RING_MIN_CLAIM, STAGE_BYTES) : null;
        if (claimed == null || claimed.remaining() < frameLength)
        {
            return false;
        }
        stage = claimed;
        appendView.wrap(claimed);
        appendStart = claimed.position();
        appendPosition = sendRing.claimStart();
        appending = true;
        return true;
    }

    @Override
    public boolean appends()
    {
        return sendRingBytes > 0 && unackedBytes == null && !sendRingUnavailable;
    }

    @Override
    public int appendedBytes()
    {
        return appending ? stage.position() - appendStart : 0;
    }

    @Override
    public void flushAppended()
    {
        if (!appending)
        {
            return;
        }
        appending = false;
        if (stage.position() == appendStart)
        {
            stage = noStage;
            return;
        }
        final int appended = stage.position() - appendStart;
        // kept until acked whichever way it is written: after a lost connection its frames are read back from it
        sendRing.commit();
        sendRing.onFrameEnded(lastAppendedSequence); // the region's last frame ends at its end
        // a few frames (a reply) cost less copied by a write than lent by sendfile, as a small stage does
        stageZeroCopy = appended >= ZERO_COPY_MIN_BYTES;
        connection.onAppendedFlushed(lastAppendedSequence);
        writeStage();
    }

    @Override
    public void readAppended(final long position, final int length, final MutableDirectBuffer dst, final int offset)
    {
        if (closed)
        {
            throw new IllegalStateException("the path's memory is released: appended frames are read before close");
        }
        sendRing.read(position, length, dst, offset);
    }

    private ByteBuffer borrowCopyStage()
    {
        if (copyStage == null)
        {
            copyStage = buffers.acquire(STAGE_BYTES);
        }
        return copyStage.clear();
    }

    /** Gives the copy stage back to the pool: it is empty (all written) or the path is closed. */
    private void releaseCopyStage()
    {
        if (copyStage != null)
        {
            if (stage == copyStage)
            {
                stage = noStage;
            }
            buffers.release(copyStage);
            copyStage = null;
        }
    }

    /** A copying write of {@code bytes} of staged frames: a large one is bulk traffic, which the ring is taken for. */
    private void countCopied(final long bytes)
    {
        if (bytes >= ZERO_COPY_MIN_BYTES)
        {
            bulkBytesCopied += bytes;
        }
    }

    /**
     * @return the send ring's free memory to stage in (write mode), or null to stage for a copy: no ring (yet),
     *         too little free, or TCP acks stand in for RDS acks (they do not say the peer has read the ring).
     */
    private ByteBuffer claimSendRing()
    {
        if (sendRingBytes == 0 || unackedBytes != null)
        {
            return null;
        }
        if (sendRing == null && bulkBytesCopied < sendRingBytes / 4)
        {
            return null;
        }
        return openSendRing() ? sendRing.claim(RING_MIN_CLAIM, STAGE_BYTES) : null;
    }

    /** @return whether the send ring is there, opened now if it was not, with the regions the peer has read freed. */
    private boolean openSendRing()
    {
        if (sendRing == null)
        {
            if (sendRingUnavailable)
            {
                return false;
            }
            sendRing = TcpSendRing.open(sendRingBytes);
            sendRingUnavailable = sendRing == null;
            if (sendRingUnavailable)
            {
                return false;
            }
        }
        sendRing.release(connection.sequenceReadOnPath());
        return true;
    }

    /**
     * Copies small frames into the empty stage (write mode), taking more from the connection until the stage
     * is full, the connection has nothing more or a large frame comes, which is left for a direct write.
     *
     * @param count frames the connection just gave, in {@link #frames}.
     * @return frames completed.
     */
    private int stageFrames(final int count)
    {
        int done = 0;
        int given = count;
        while (true)
        {
            for (int f = 0; f < given && stage.hasRemaining() && frames[f].remaining() < DIRECT_WRITE_BYTES; f++)
            {
                copyToStage(frames[f]);
            }
            final int completed = connection.onTransmitted(frames, given);
            done += completed;
            if (completed < given || !stage.hasRemaining())
            {
                return done;
            }
            given = connection.fillTransmit(frames, FRAMES_PER_FILL);
            if (given == 0)
            {
                return done;
            }
        }
    }

    private void copyToStage(final ByteBuffer frame)
    {
        final int start = frame.position();
        final int length = Math.min(frame.remaining(), stage.remaining());
        stage.put(stage.position(), frame, start, length);
        stage.position(stage.position() + length);
        frame.position(start + length);
        bytesQueued += length;
        if (!frame.hasRemaining())
        {
            frameEnded(frame, bytesQueued);
        }
    }

    /** @return false if the stage could not be written out: the socket has no room, or it failed. */
    private boolean writeStage()
    {
        try
        {
            if (stageZeroCopy)
            {
                final long sent = sendRing.send(channel);
                bytesWritten += sent;
                zeroCopyBytes.getAndAddOrdered(sent);
            }
            else
            {
                bytesWritten += channel.write(stage);
            }
        }
        catch (final IOException ex)
        {
            fail("write failed: " + ex);
            return false;
        }
        if (stage.hasRemaining())
        {
            waitForRoom();
            return false;
        }
        if (stage == copyStage)
        {
            releaseCopyStage();
        }
        else
        {
            // the send ring's view is claimed again by the next stage or append: a claim an append then refused
            // (too small for its frame) must not look like bytes left to send
            stage = noStage;
        }
        return true;
    }

    /**
     * Writes frames led by a large one straight from their buffers (a gathering write): copying them would
     * cost more than the system call saved.
     *
     * @return frames completed, or -1 if the socket failed.
     */
    private int writeDirect(final int count)
    {
        // frame ends matter while TCP acks stand in for RDS acks, or while the send ring waits for one
        final boolean endsWanted = unackedBytes != null || (sendRing != null && sendRing.awaitsFrameEnd());
        if (endsWanted)
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
            return -1;
        }
        if (endsWanted)
        {
            long end = bytesQueued;
            for (int f = 0; f < count; f++)
            {
                final ByteBuffer frame = frames[f];
                end += frame.position() - startPositions[f];
                if (frame.hasRemaining())
                {
                    break;
                }
                frameEnded(frame, end);
            }
        }
        bytesWritten += written;
        bytesQueued += written;
        final int completed = connection.onTransmitted(frames, count);
        if (completed < count)
        {
            waitForRoom();
        }
        return completed;
    }

    /**
     * A frame's last byte was staged or written, at stream offset {@code end - 1}: while TCP acks stand in for RDS
     * acks, a sequenced frame is tracked until TCP acks that byte; a sequenced frame releases the send ring's
     * regions before it once the peer acks it.
     */
    private void frameEnded(final ByteBuffer frame, final long end)
    {
        final boolean tracking = unackedBytes != null;
        final boolean ringWaits = sendRing != null && sendRing.awaitsFrameEnd();
        if (!tracking && !ringWaits)
        {
            return;
        }
        final long raw = frame.getLong(0); // h_sequence, header at index 0
        final long sequence = frame.order() == ByteOrder.BIG_ENDIAN ? raw : Long.reverseBytes(raw);
        if (sequence == 0)
        {
            return;
        }
        if (tracking)
        {
            writtenFrames.onWritten(end, sequence);
        }
        if (ringWaits)
        {
            sendRing.onFrameEnded(sequence);
        }
    }

    private void waitForRoom()
    {
        sndbufFull.incrementOrdered();
        waitingForRoom = true;
        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
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

    /**
     * @return true while this path needs duty cycles that no I/O brings: a frame is part way in (its timeout
     *         runs), or TCP's acks stand in for the peer's RDS acks and written frames wait for them.
     */
    boolean isPolled()
    {
        return !closed && (partialFrame || (unackedBytes != null && writtenFrames.size() > 0));
    }

    /** The socket has room again after a partial write. */
    int onWritable()
    {
        waitingForRoom = false;
        key.interestOps(SelectionKey.OP_READ);
        return transmit();
    }

    /**
     * Reads what arrived, at most {@link #READ_BYTES_PER_CYCLE} (or {@link #READ_BYTES_STREAMING} while the
     * connection streams) or the rest of a frame begun, and hands each
     * complete frame to the connection; a frame that fails validation drops the connection
     * ({@code conn_bad_frame}, one WARN line).
     *
     * @param nowNs the agent's clock, which starts the frame timeout of a frame left incomplete.
     * @return the frames handed over, at least 1 if any byte was read; 0 if none.
     */
    int onReadable(final long nowNs)
    {
        if (closed)
        {
            return 0;
        }
        final ByteBuffer readBuffer = reader.buffer(readBytes);
        final int read;
        // at least the rest of a frame begun: a large frame arrives in one read, not in cycles of a batch each
        final int asked = Math.min(readBuffer.remaining(), Math.max(readBytes, reader.bytesToCompleteFrame()));
        readBuffer.limit(readBuffer.position() + asked);
        try
        {
            read = channel.read(readBuffer);
        }
        catch (final IOException ex)
        {
            readBuffer.limit(readBuffer.capacity());
            reader.releaseIfEmpty();
            fail("read failed: " + ex);
            return 0;
        }
        readBuffer.limit(readBuffer.capacity());
        readBytes = read == asked ? READ_BYTES_STREAMING : READ_BYTES_PER_CYCLE;
        if (read <= 0)
        {
            reader.releaseIfEmpty(); // nothing held: an idle connection keeps no read buffer
            if (read < 0)
            {
                fail("closed by peer");
            }
            return 0;
        }
        bytesRead += read;
        final int frames = reader.parse(onFrame);
        final int verdict = reader.invalidVerdict();
        if (verdict != RdsHeader.VALID)
        {
            counters.connBadFrame().incrementOrdered();
            misbehaved("bad frame: " + RdsHeader.describeValidation(verdict));
            return frames;
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
        // bytes that completed no frame are work too: the rest of the frame may be waiting
        return Math.max(frames, 1);
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

    private boolean deliver(final DirectBuffer buffer, final int offset)
    {
        if (closed)
        {
            return false;
        }
        connection.onBatchFrame(buffer, offset);
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
        counters.connFrameTimeout().incrementOrdered();
        misbehaved("a frame stayed incomplete (" + reader.buffered() + " of its bytes received) for " +
            TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms");
    }

    /**
     * @return bytes of the largest read buffer this path has had, for tests: memory stays bounded whatever a peer
     *         announces.
     */
    int readBufferHighWater()
    {
        return reader.largestCapacity();
    }

    /** @return bytes of the pool's buffers this path holds now: its read buffer and copy stage, if held. */
    int bufferBytes()
    {
        return reader.capacity() + (copyStage != null ? copyStage.capacity() : 0);
    }

    /**
     * Gives back to the pool what a closed path still holds (a frame it was receiving, bytes it had staged). Called
     * by the transport when it forgets the path, outside the path's own calls, so no read or write of the path is
     * under way.
     *
     * @param path a path of the transport.
     * @return true if the path is closed, and so forgotten.
     */
    static boolean releaseBuffersIfClosed(final TcpPath path)
    {
        if (!path.closed)
        {
            return false;
        }
        path.reader.release();
        path.releaseCopyStage();
        return true;
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
        // the connection takes back the frames appended to this path before it closes it (and its memory)
        connection.onPeerMisbehaved(this, reason);
        close();
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
        if (sendRing != null)
        {
            sendRing.close();
        }
        if (key != null)
        {
            key.cancel();
        }
        TcpTransport.closeQuietly(channel);
    }

    /** @return true while a partial write waits for the socket to have room (OP_WRITE). */
    boolean isWaitingForRoom()
    {
        return waitingForRoom;
    }

    boolean isClosed()
    {
        return closed;
    }
}
