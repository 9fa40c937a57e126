package org.rds4j.core;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The lock of the threads taking from one socket's receive queue, and of the threads writing a driver's client's
 * frames: reentrant, and as cheap as a kernel spinlock when nobody else wants it, which is nearly always (one thread
 * receives or sends, or a few take turns). It is taken with one compare-and-set and given back with an ordered
 * store, without the full fence a {@code ReentrantLock}'s release costs (a receiving thread spent about 15 % of its
 * time there at 64 B one-way).
 * <p>
 * The price is paid only by a thread that finds the lock held: with no fence on release, the holder cannot see
 * such a thread in time to wake it, so it waits by itself: it spins {@link #SPINS} times (a take or a write holds
 * the lock for a copy), yields {@link #YIELDS} times, then parks for a period that doubles from 1 µs up to
 * {@link #MAX_PARK_NS} while the lock stays held (a poll holds it while the application's handler runs, a write
 * while the driver's connection is full). So a thread kept waiting for long looks at most once a millisecond.
 */
final class TakeLock
{
    private static final int SPINS = 100;
    private static final int YIELDS = 10;
    private static final long MAX_PARK_NS = 1_000_000;

    private final AtomicReference<Thread> owner = new AtomicReference<>();
    /** How many times the owner holds it; written by the owner only. */
    private int holds;

    /** Takes the lock, waiting as long as it takes; not interrupted. */
    void lock()
    {
        if (!tryLock())
        {
            waitForLock();
        }
    }

    /** @return true if the lock is now held by the calling thread (it was free, or the caller held it already). */
    boolean tryLock()
    {
        final Thread me = Thread.currentThread();
        if (owner.get() == me)
        {
            holds++; // looked at first: a compare-and-set that fails costs as much as one that succeeds
            return true;
        }
        if (owner.compareAndSet(null, me))
        {
            holds = 1;
            return true;
        }
        return false;
    }

    /** Gives back one hold; the caller holds the lock. */
    void unlock()
    {
        if (owner.get() != Thread.currentThread())
        {
            throw new IllegalMonitorStateException("the take lock is not held by " + Thread.currentThread());
        }
        if (--holds == 0)
        {
            owner.setRelease(null);
        }
    }

    private void waitForLock()
    {
        long parkNs = 1_000;
        for (int i = 0; !tryLock(); i++)
        {
            if (i < SPINS)
            {
                Thread.onSpinWait();
            }
            else if (i < SPINS + YIELDS)
            {
                Thread.yield();
            }
            else
            {
                LockSupport.parkNanos(this, parkNs);
                parkNs = Math.min(parkNs * 2, MAX_PARK_NS);
            }
        }
    }
}
