package org.rds4j.transport.tcp;

import org.agrona.concurrent.status.AtomicCounter;

import java.nio.ByteBuffer;

/**
 * The transport's direct buffers: a path borrows a read buffer or a copy stage only while it holds bytes in it (a
 * frame part way in, staged bytes the socket has not yet taken) and gives it back at once when it is empty again,
 * so an idle connection holds none and a reconnect reuses what the dropped connection gave back.
 * <p>
 * Buffers come in size classes that double from {@code smallestClass} up to {@link TcpFrameReader#MAX_FRAME} (the
 * last class is exactly one largest frame). A borrow takes the class's most recently returned buffer (still in
 * cache), or allocates one: every allocation is counted ({@code tcp_buffer_alloc}). Returned buffers are kept idle
 * up to {@code maxIdleBytes} in all; a buffer returned beyond that is left to the garbage collector. The bound keeps
 * what a burst of connections (each mid-frame at once) needed from staying allocated for good, while being large
 * enough that steady traffic over many connections does not allocate again (a miss shows in the counter).
 * <p>
 * Not thread safe: the agent thread owns it, as it owns the transport.
 */
final class TcpBufferPool
{
    /** Bytes of the smallest class in the transport's pool: one duty cycle's read ({@code READ_BYTES_PER_CYCLE}). */
    static final int DEFAULT_SMALLEST_CLASS = 64 * 1024;
    /**
     * Idle bytes the transport's pool keeps: 64 read buffers (16 of a streaming connection's, 256 KiB), or 32 copy
     * stages, or 3 largest frames. A buffer is
     * lent only to a connection that is mid-frame or mid-write, so this covers a burst in which 64 connections are
     * mid-frame at once, or three receive 1 MiB messages at once, without the next such burst allocating; what a
     * larger burst needed is left to the collector (and {@code tcp_buffer_alloc} shows it if that repeats).
     */
    static final long DEFAULT_MAX_IDLE_BYTES = 4L * 1024 * 1024;

    private final int[] capacities;
    private final ByteBuffer[][] idle;
    private final int[] idleCount;
    private final long maxIdleBytes;
    private final AtomicCounter allocationCounter;
    private long idleBytes;
    private long lentBytes;
    private long allocations;

    /**
     * @param smallestClass     bytes of the smallest buffer, clamped to 48..{@link TcpFrameReader#MAX_FRAME}.
     * @param maxIdleBytes      bytes of returned buffers kept for reuse, in all.
     * @param allocationCounter incremented for every buffer allocated ({@code tcp_buffer_alloc}); null for none.
     */
    TcpBufferPool(final int smallestClass, final long maxIdleBytes, final AtomicCounter allocationCounter)
    {
        final int smallest = Math.max(48, Math.min(TcpFrameReader.MAX_FRAME, smallestClass));
        int classes = 1;
        for (long c = smallest; c < TcpFrameReader.MAX_FRAME; c *= 2)
        {
            classes++;
        }
        capacities = new int[classes];
        idle = new ByteBuffer[classes][];
        idleCount = new int[classes];
        long capacity = smallest;
        for (int i = 0; i < classes; i++)
        {
            capacities[i] = (int)Math.min(TcpFrameReader.MAX_FRAME, capacity);
            idle[i] = new ByteBuffer[(int)Math.min(1024, maxIdleBytes / capacities[i])];
            capacity *= 2;
        }
        this.maxIdleBytes = maxIdleBytes;
        this.allocationCounter = allocationCounter;
    }

    /**
     * @param minCapacity bytes wanted, at most {@link TcpFrameReader#MAX_FRAME}.
     * @return a cleared buffer of the smallest class that holds {@code minCapacity}; give it back with
     *         {@link #release}.
     */
    ByteBuffer acquire(final int minCapacity)
    {
        final int c = classOf(minCapacity);
        final ByteBuffer buffer;
        if (idleCount[c] > 0)
        {
            final int top = --idleCount[c];
            buffer = idle[c][top];
            idle[c][top] = null;
            idleBytes -= buffer.capacity();
            buffer.clear();
        }
        else
        {
            buffer = ByteBuffer.allocateDirect(capacities[c]);
            allocations++;
            if (allocationCounter != null)
            {
                allocationCounter.incrementOrdered();
            }
        }
        lentBytes += buffer.capacity();
        return buffer;
    }

    /** @param buffer from {@link #acquire}, not used again by the caller. */
    void release(final ByteBuffer buffer)
    {
        lentBytes -= buffer.capacity();
        final int c = classOf(buffer.capacity());
        if (idleCount[c] < idle[c].length && idleBytes + buffer.capacity() <= maxIdleBytes)
        {
            idle[c][idleCount[c]++] = buffer;
            idleBytes += buffer.capacity();
        }
    }

    /** @return the class index of the smallest class of at least {@code bytes}. */
    private int classOf(final int bytes)
    {
        for (int i = 0; i < capacities.length; i++)
        {
            if (capacities[i] >= bytes)
            {
                return i;
            }
        }
        throw new IllegalArgumentException(bytes + " bytes: larger than one largest frame");
    }

    /**
     * @param minCapacity bytes wanted.
     * @return the capacity {@link #acquire} gives for {@code minCapacity}.
     */
    int capacityFor(final int minCapacity)
    {
        return capacities[classOf(minCapacity)];
    }

    /** @return buffers allocated since the pool was made (the transport's {@code tcp_buffer_alloc}). */
    long allocations()
    {
        return allocations;
    }

    /** @return bytes of the buffers borrowed and not yet returned. */
    long lentBytes()
    {
        return lentBytes;
    }

    /** @return bytes of the returned buffers kept for reuse. */
    long idleBytes()
    {
        return idleBytes;
    }
}
