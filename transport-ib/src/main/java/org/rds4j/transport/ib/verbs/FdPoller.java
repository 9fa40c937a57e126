package org.rds4j.transport.ib.verbs;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * {@code poll(2)} over a set of file descriptors (completion channels, rdma_cm event channels) plus an
 * {@code eventfd} that {@link #wake()} makes readable from any thread, so a thread blocked here can be told to
 * look at a changed set. Only reports readiness: it never reads the watched fds. One thread calls
 * {@link #poll}; {@link #wake()} may be called from any thread. Allocation free.
 */
public final class FdPoller implements AutoCloseable
{
    private static final int POLLFD_SIZE = 8;
    private static final int POLLNVAL = 0x20;

    private final int capacity;
    private final int wakeFd;
    private final NativeBlock block;
    private final UnsafeBuffer view;
    private final long counter;
    private final long wakeWord;
    private boolean closed;

    /** @param capacity the most fds one {@link #poll} may watch, besides the wake fd. */
    public FdPoller(final int capacity)
    {
        this.capacity = capacity;
        wakeFd = LibC.eventfd(0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
        if (wakeFd < 0)
        {
            throw VerbsException.lastError("eventfd");
        }
        block = new NativeBlock((capacity + 1) * POLLFD_SIZE + 16);
        view = block.view();
        counter = block.address() + (long)(capacity + 1) * POLLFD_SIZE;
        wakeWord = counter + 8;
        view.putLong((capacity + 1) * POLLFD_SIZE + 8, 1L);
    }

    /** @return the most fds {@link #poll} takes. */
    public int capacity()
    {
        return capacity;
    }

    /**
     * Blocks until one of {@code fds[0..count)} is readable, {@link #wake()} is called, or the timeout passes.
     *
     * @return a bit set: bit {@code i} (for i below 63) set if {@code fds[i]} is readable (or invalid);
     *         0 on wake-up, timeout or an interrupted call.
     */
    public long poll(final int[] fds, final int count, final int timeoutMs)
    {
        if (count > capacity)
        {
            throw new IllegalArgumentException(count + " fds, at most " + capacity);
        }
        view.putInt(0, wakeFd);
        view.putShort(4, (short)LibC.POLLIN);
        view.putShort(6, (short)0);
        for (int i = 0; i < count; i++)
        {
            final int at = (i + 1) * POLLFD_SIZE;
            view.putInt(at, fds[i]);
            view.putShort(at + 4, (short)LibC.POLLIN);
            view.putShort(at + 6, (short)0);
        }
        final int ready = LibC.poll(block.address(), count + 1, timeoutMs);
        if (ready <= 0)
        {
            return 0;
        }
        if (view.getShort(6) != 0)
        {
            LibC.read(wakeFd, counter, 8); // drain the eventfd
        }
        long mask = 0;
        for (int i = 0; i < count && i < 63; i++)
        {
            final short revents = view.getShort((i + 1) * POLLFD_SIZE + 6);
            if ((revents & (LibC.POLLIN | POLLNVAL)) != 0 || revents != 0)
            {
                mask |= 1L << i;
            }
        }
        return mask;
    }

    /** Any thread: ends the current or the next {@link #poll}. */
    public void wake()
    {
        LibC.write(wakeFd, wakeWord, 8);
    }

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            LibC.close(wakeFd);
        }
    }
}
