package org.rds4j.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The lock of the {@link Invoker}'s duty cycle: only ever tried (except by {@link #acquire()}, for a close), held
 * either to run duty cycles ({@link #CYCLE}) or by a sending thread that writes its own frame ({@link #HOLD}).
 * <pre>
 *   FREE --tryAcquire(false)--> CYCLE --release()-----> FREE   (a volatile store: a follower's wake-up is ordered)
 *   FREE --tryAcquire(true)---> HOLD  --releaseHold()--> FREE  (an ordered store: no fence)
 *   CYCLE --lend()--> IDLE --reclaim()--> CYCLE                (the owner, around its wait in the transport)
 *   IDLE --tryBorrow()--> BORROWED --giveBack()--> IDLE        (another thread, for one duty cycle)
 * </pre>
 * While its owner sleeps in the transport's idle wait the lock is lent ({@link #IDLE}): a sending thread may then
 * run one duty cycle on it ({@link #BORROWED}), as the kernel's {@code rds_sendmsg} transmits in its caller, instead
 * of waking the sleeper to transmit for it. The owner stays the owner: others see the lock held, as before, and
 * the sleeper takes it back when its wait ends, after the borrower's cycle if one runs.
 * A hold is given back once per message sent, and a volatile store there (a fence on x86: it waits for the frame's
 * stores to the send ring, lines the receiving CPU has read) cost the appending sender about a sixth of its rate.
 * Without it, a thread that registers as a follower while a hold ends may not be seen by the holder's look for
 * followers; so a follower that finds the lock held for a hold parks for at most {@link #HOLD_FOLLOWER_PARK_NS}
 * ({@link Invoker#await}) rather than until woken. The owner may take the lock again while it holds it
 * ({@link #holdCount()} tells how deep), as {@code ReentrantLock} allowed. A socket's {@link TakeLock} is the same
 * trade for receivers, who wait for it themselves; this one is tried, and others must tell a hold from a cycle.
 */
final class DutyCycleLock
{
    static final int FREE = 0;
    static final int CYCLE = 1;
    static final int HOLD = 2;
    static final int IDLE = 3;
    static final int BORROWED = 4;

    /** The longest park of a follower that found a hold, in case the hold's end missed it. */
    static final long HOLD_FOLLOWER_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);

    /** How long {@link #acquire()} parks between tries. */
    private static final long ACQUIRE_RETRY_NS = TimeUnit.MICROSECONDS.toNanos(50);

    private final AtomicInteger state = new AtomicInteger(FREE);

    // Written by the owner only; another thread reads them to find it is not the owner, which a stale value also says
    // (a thread never reads itself as owner after its own release, which cleared the field before the state).
    private Thread owner;
    private int depth;

    /**
     * @param hold true for a sending thread's hold, false for duty cycles.
     * @return true if taken (or already held by the calling thread, one level deeper).
     */
    boolean tryAcquire(final boolean hold)
    {
        final Thread me = Thread.currentThread();
        if (owner == me)
        {
            depth++;
            return true;
        }
        if (state.get() == FREE && state.compareAndSet(FREE, hold ? HOLD : CYCLE))
        {
            owner = me;
            depth = 1;
            return true;
        }
        return false;
    }

    /** Waits until the lock is taken for duty cycles; only for a close, which must wait for a cycle in progress. */
    void acquire()
    {
        while (!tryAcquire(false))
        {
            LockSupport.parkNanos(this, ACQUIRE_RETRY_NS);
        }
    }

    /** @return how many times the calling thread holds the lock (0: not at all). */
    int holdCount()
    {
        return owner == Thread.currentThread() ? depth : 0;
    }

    /** Gives back one level; the last one frees the lock with a volatile store. */
    void release()
    {
        if (--depth == 0)
        {
            owner = null;
            state.set(FREE);
        }
    }

    /** Gives back one level of a hold; the last one frees the lock with an ordered store (no fence). */
    void releaseHold()
    {
        if (--depth == 0)
        {
            owner = null;
            state.lazySet(FREE);
        }
    }

    /**
     * The owner, holding the lock once for duty cycles, is about to sleep in the transport's idle wait: lends it.
     *
     * @return whether lent ({@link #reclaim()} must follow); not when held more deeply or for a hold.
     */
    boolean lend()
    {
        if (depth != 1 || owner != Thread.currentThread() || state.get() != CYCLE)
        {
            return false;
        }
        state.set(IDLE); // volatile: a borrower sees everything the owner wrote before
        return true;
    }

    /** The owner, its wait over: takes the lent lock back, waiting for a borrower's cycle to end if one runs. */
    void reclaim()
    {
        while (!state.compareAndSet(IDLE, CYCLE))
        {
            Thread.yield(); // a borrower runs one duty cycle: microseconds, unless it lost its core
        }
    }

    /** @return whether the calling thread (not the owner) may now run one duty cycle on the lent lock. */
    boolean tryBorrow()
    {
        return state.get() == IDLE && state.compareAndSet(IDLE, BORROWED);
    }

    /** The borrower's cycle is over: the lock is lent again (a volatile store: the owner sees the cycle's writes). */
    void giveBack()
    {
        state.set(IDLE);
    }

    /** @return {@link #FREE}, {@link #CYCLE}, {@link #HOLD}, {@link #IDLE} or {@link #BORROWED} (any thread; racy). */
    int state()
    {
        return state.get();
    }
}
