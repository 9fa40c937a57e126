package org.rds4j.core;

import java.lang.invoke.VarHandle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Threads parked until the agent changes something they wait for (room in a send buffer, a message to
 * receive). Application threads register and deregister around a wait; the agent wakes them without a lock.
 * <p>
 * A waiter registers, re-checks its condition, then parks with a deadline; a wake between the check and the
 * park leaves the park permit set, so no wake-up is lost. The first {@value #SLOTS} waiters take fixed slots
 * with a compare-and-set, so waiting allocates nothing; more wait in an overflow list.
 */
final class Waiters
{
    private static final int SLOTS = 8;

    private final AtomicReferenceArray<Thread> slots = new AtomicReferenceArray<>(SLOTS);
    private final CopyOnWriteArrayList<Thread> overflow = new CopyOnWriteArrayList<>();
    /**
     * Threads registered or registering: counted before a slot is taken and after it is left, so a waker that reads 0
     * after its volatile write may stop there (a registering thread's re-check sees that write). One read where a
     * wake with no waiter read every slot: a sender that appends wakes followers after every message.
     */
    private final AtomicInteger registered = new AtomicInteger();

    void add(final Thread thread)
    {
        registered.incrementAndGet();
        for (int i = 0; i < SLOTS; i++)
        {
            if (slots.get(i) == null && slots.compareAndSet(i, null, thread))
            {
                return;
            }
        }
        overflow.add(thread);
    }

    void remove(final Thread thread)
    {
        for (int i = 0; i < SLOTS; i++)
        {
            if (slots.get(i) == thread)
            {
                slots.set(i, null);
                registered.decrementAndGet();
                return;
            }
        }
        if (overflow.remove(thread))
        {
            registered.decrementAndGet();
        }
    }

    /**
     * Unparks every registered thread; a fence and one volatile read when there is none. The fence keeps the
     * reads of the slots after the stores that published what the waiters wait for (a ring's position is an ordered
     * store, which may otherwise still be in this core's store buffer): with the waiter's compare-and-set before its
     * re-check, either the waker sees the waiter or the waiter sees what was published.
     */
    void wakeAll()
    {
        VarHandle.fullFence();
        if (registered.get() == 0)
        {
            return;
        }
        for (int i = 0; i < SLOTS; i++)
        {
            final Thread thread = slots.get(i);
            if (thread != null)
            {
                LockSupport.unpark(thread);
            }
        }
        if (!overflow.isEmpty())
        {
            for (final Thread thread : overflow)
            {
                LockSupport.unpark(thread);
            }
        }
    }

    /** Unparks one registered thread, if any: the next leader of a duty cycle, not all who wait for it. */
    void wakeOne()
    {
        // no fence, unlike wakeAll: every caller has just made a volatile write of what a follower re-checks (the duty
        // cycle's lock, the count of waiting calls), and volatile accesses are ordered among themselves, so either
        // these reads see a follower's slot or its re-check after taking the slot sees that write. The exception is a
        // sender's hold, given back after every message it appends with an ordered store: a follower that finds the
        // lock held for one parks for a bounded time instead (Invoker.await)
        if (registered.get() == 0)
        {
            return;
        }
        for (int i = 0; i < SLOTS; i++)
        {
            final Thread thread = slots.get(i);
            if (thread != null)
            {
                LockSupport.unpark(thread);
                return;
            }
        }
        for (final Thread thread : overflow)
        {
            LockSupport.unpark(thread);
            return;
        }
    }
}
