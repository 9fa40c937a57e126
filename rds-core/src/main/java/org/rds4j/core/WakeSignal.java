package org.rds4j.core;

import org.agrona.concurrent.NanoClock;
import org.rds4j.core.spi.IdleWaiter;
import org.rds4j.core.spi.Transport;

import java.util.concurrent.TimeUnit;
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
    /** The shortest a deadline cuts a park to: a timer may run up to this late, as with a fixed 1 ms park. */
    static final long SHORTEST_BOUNDED_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final AtomicBoolean parked = new AtomicBoolean();
    /** The stack's clock, which the agent's deadlines are on. */
    private final NanoClock clock;
    private volatile Thread agent;
    private volatile IdleWaiter waiter;
    private IdleBounds bounds;
    /** The duty cycle's lock, lent for the length of each wait to a sending thread's cycle; null: never lent. */
    private DutyCycleLock lock;
    /**
     * When the thread waiting with the lock lent wakes at the latest, on the stack's clock; written before the lend
     * and read by the borrower, whose cycle must wake it sooner if something is due before then.
     */
    private long sleeperWakeAtNs;
    /**
     * INVOKER mode: the deadline of the blocking call whose thread is idling, on {@link System#nanoTime()} (the
     * application's clock, not the stack's); written and read by that thread.
     */
    private long callerDeadlineNs = Transport.NO_DEADLINE;

    /** @param clock the stack's clock: the agent's deadlines ({@link IdleBounds}) are on it. */
    WakeSignal(final NanoClock clock)
    {
        this.clock = clock;
    }

    void agentThread(final Thread thread)
    {
        agent = thread;
    }

    /** @param waiter the transport's wait, or null to park the thread. */
    void idleWaiter(final IdleWaiter waiter)
    {
        this.waiter = waiter;
    }

    /** Before the agent starts: what can cut a park short (null: nothing but wakes and I/O). */
    void idleBounds(final IdleBounds bounds)
    {
        this.bounds = bounds;
    }

    /** Before the agent starts: lets each wait lend {@code dutyCycle} ({@link DutyCycleLock#lend()}). */
    void lendDuringWaits(final DutyCycleLock dutyCycle)
    {
        this.lock = dutyCycle;
    }

    /** A borrower of the lent lock: the latest time the sleeping thread wakes, on the stack's clock. */
    long sleeperWakeAtNs()
    {
        return sleeperWakeAtNs;
    }

    /**
     * INVOKER mode, the thread holding the duty cycle, before it idles in a blocking call: a park must not pass
     * the call's own deadline (by more than {@link #SHORTEST_BOUNDED_PARK_NS}).
     *
     * @param deadlineNs the call's {@link System#nanoTime()} deadline, or {@link Transport#NO_DEADLINE} for none
     *                   (and after the idle).
     */
    void callerDeadline(final long deadlineNs)
    {
        callerDeadlineNs = deadlineNs;
    }

    /**
     * Agent: parks for up to {@code timeoutNs}, or until woken or (with a waiter) until I/O is ready. Does not
     * park if work was handed over while the agent was deciding to; parks no longer than the next deadline,
     * but not less than {@link #SHORTEST_BOUNDED_PARK_NS} for one. Lends the duty cycle's lock meanwhile, if told to
     * ({@link #lendDuringWaits}), and takes it back before it returns.
     */
    void park(final long timeoutNs)
    {
        parking();
        long parkNs = timeoutNs;
        final IdleBounds current = bounds;
        if (current != null)
        {
            if (hasQueuedInput())
            {
                awake();
                return;
            }
            final long nowNs = clock.nanoTime();
            final long deadlineNs = current.idleDeadlineNs(nowNs);
            long untilNs = deadlineNs == Transport.NO_DEADLINE ? Long.MAX_VALUE : deadlineNs - nowNs;
            if (callerDeadlineNs != Transport.NO_DEADLINE)
            {
                untilNs = Math.min(untilNs, callerDeadlineNs - System.nanoTime());
            }
            if (untilNs != Long.MAX_VALUE)
            {
                parkNs = Math.min(parkNs, Math.max(untilNs, SHORTEST_BOUNDED_PARK_NS));
            }
        }
        final DutyCycleLock lending = lock;
        boolean lent = false;
        if (lending != null)
        {
            // a wait is at least a millisecond (a selector's granularity)
            sleeperWakeAtNs = clock.nanoTime() + Math.max(parkNs, SHORTEST_BOUNDED_PARK_NS);
            lent = lending.lend();
        }
        final IdleWaiter waiting = waiter;
        if (waiting != null)
        {
            waiting.await(parkNs);
        }
        else
        {
            LockSupport.parkNanos(parkNs);
        }
        if (lent)
        {
            lending.reclaim();
        }
        awake();
    }

    void parking()
    {
        parked.set(true);
    }

    /**
     * The thread about to idle, after {@link #parking()}: whether work was handed over that the agent must not sleep
     * through ({@link IdleBounds#hasQueuedInput}, which also tells a driver's clients to ring for what they write).
     * Parked is set (a volatile write) before the queues are read: a hand-off that missed it is seen here.
     */
    boolean hasQueuedInput()
    {
        final IdleBounds current = bounds;
        return current != null && current.hasQueuedInput();
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
