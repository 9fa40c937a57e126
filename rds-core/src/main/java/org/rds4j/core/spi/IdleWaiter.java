package org.rds4j.core.spi;

/**
 * How the stack's agent waits when it has nothing to do, for a transport that can block until its own I/O
 * is ready (TCP: its selector). Waiting here instead of parking the thread means a frame arriving from the
 * network wakes the agent at once rather than at the end of a park period.
 */
public interface IdleWaiter
{
    /**
     * Agent thread: blocks until the transport has I/O ready, {@link #wake()} is called, or the timeout
     * passes, whichever is first. Returns at once if {@link #wake()} was called since the last wait.
     *
     * @param timeoutNs the longest wait, at least 1 ms is honoured as 1 ms granularity may apply.
     */
    void await(long timeoutNs);

    /** Any thread: ends the current or the next {@link #await}. */
    void wake();
}
