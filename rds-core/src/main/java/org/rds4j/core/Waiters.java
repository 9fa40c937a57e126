package org.rds4j.core;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Threads parked until the agent changes something they wait for (room in a send buffer, a message to
 * receive). Application threads register and deregister (rare: only when a call must wait); the agent
 * wakes them without taking a lock.
 * <p>
 * A waiter registers, re-checks its condition, then parks with a deadline; a wake between the check and the
 * park leaves the park permit set, so no wake-up is lost.
 */
final class Waiters
{
    private static final Thread[] NONE = new Thread[0];

    private volatile Thread[] threads = NONE;

    synchronized void add(final Thread thread)
    {
        final Thread[] old = threads;
        final Thread[] now = Arrays.copyOf(old, old.length + 1);
        now[old.length] = thread;
        threads = now;
    }

    synchronized void remove(final Thread thread)
    {
        final Thread[] old = threads;
        for (int i = 0; i < old.length; i++)
        {
            if (old[i] == thread)
            {
                final Thread[] now = new Thread[old.length - 1];
                System.arraycopy(old, 0, now, 0, i);
                System.arraycopy(old, i + 1, now, i, old.length - i - 1);
                threads = now;
                return;
            }
        }
    }

    boolean isEmpty()
    {
        return threads.length == 0;
    }

    /** Unparks every registered thread; costs one volatile read when there is none. */
    void wakeAll()
    {
        for (final Thread thread : threads)
        {
            LockSupport.unpark(thread);
        }
    }
}
