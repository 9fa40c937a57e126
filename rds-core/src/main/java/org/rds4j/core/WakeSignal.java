package org.rds4j.core;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Lets application threads wake the agent thread when it is parked, with one unpark per park however many
 * threads hand it work meanwhile. The agent's idle strategy calls {@link #parking()} and {@link #awake()}
 * around its park.
 */
final class WakeSignal
{
    private final AtomicBoolean parked = new AtomicBoolean();
    private volatile Thread agent;

    void agentThread(final Thread thread)
    {
        agent = thread;
    }

    void parking()
    {
        parked.set(true);
    }

    void awake()
    {
        parked.lazySet(false);
    }

    /** Any thread: unparks the agent if it is parked and nobody has unparked it yet. */
    void wake()
    {
        if (parked.get() && parked.compareAndSet(true, false))
        {
            LockSupport.unpark(agent);
        }
    }
}
