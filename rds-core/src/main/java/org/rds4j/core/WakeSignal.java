package org.rds4j.core;

import org.rds4j.core.spi.IdleWaiter;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Lets application threads wake the agent thread when it is parked, with one wake-up per park however many
 * threads hand it work meanwhile. The agent's idle strategy parks through {@link #park(long)}: in a
 * transport's {@link IdleWaiter} when there is one (so network input ends the park too), else with
 * {@link LockSupport#parkNanos}.
 */
final class WakeSignal
{
    private final AtomicBoolean parked = new AtomicBoolean();
    private volatile Thread agent;
    private volatile IdleWaiter waiter;

    void agentThread(final Thread thread)
    {
        agent = thread;
    }

    /** @param waiter the transport's wait, or null to park the thread. */
    void idleWaiter(final IdleWaiter waiter)
    {
        this.waiter = waiter;
    }

    /** Agent: parks for up to {@code timeoutNs}, or until woken or (with a waiter) until I/O is ready. */
    void park(final long timeoutNs)
    {
        parking();
        final IdleWaiter current = waiter;
        if (current != null)
        {
            current.await(timeoutNs);
        }
        else
        {
            LockSupport.parkNanos(timeoutNs);
        }
        awake();
    }

    void parking()
    {
        parked.set(true);
    }

    void awake()
    {
        parked.lazySet(false);
    }

    /** Any thread: wakes the agent if it is parked and nobody has woken it yet. */
    void wake()
    {
        if (parked.get() && parked.compareAndSet(true, false))
        {
            final IdleWaiter current = waiter;
            if (current != null)
            {
                current.wake();
            }
            else
            {
                LockSupport.unpark(agent);
            }
        }
    }
}
