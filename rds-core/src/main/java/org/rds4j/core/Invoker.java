package org.rds4j.core;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;
import org.rds4j.RdsResult;
import org.rds4j.core.spi.Transport;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs a stack's agent duty cycle on whichever thread should run it, as agrona's {@code AgentInvoker} does,
 * plus what agrona leaves to the caller: waiting threads drive the stack. In {@link org.rds4j.Threading#INVOKER}
 * mode only application threads do; in AGENT mode the stack's agent thread also does, whenever no application
 * thread is waiting in a call ({@link #runAgent}, with the policy of {@link AgentTurns}).
 * <p>
 * One duty cycle runs at a time, under a lock that is only ever tried, never waited for (except by
 * {@link #close()}). The thread holding it is the leader: it runs a duty cycle and, if the cycle did no work,
 * idles once with the stack's idle strategy while still holding it, as the agent thread would (the default
 * backoff waits in the TCP selector, which only one thread can use at a time, and which application threads
 * handing the stack work wake through the {@link WakeSignal}); only the default's yields go without it, since a
 * yield gives the core away and a sending thread may spin to take the lock meanwhile ({@link #tryHold}). While it
 * sleeps in the transport's wait it lends the lock ({@link DutyCycleLock#lend()}): a blocking send runs its cycle on
 * it, without the transports' work, and wakes the sleeper only if that cycle leaves it something ({@link #tryInvoke()}). A
 * waiting thread that finds another leading
 * is a follower: it parks until woken by what it waits for (its socket's waiters, a command's completion),
 * by a leader whose wait has ended ({@link #endCall()}), by the agent thread stepping aside, or by a thread
 * that ran a single duty cycle ({@link #invoke()}, {@link #tryInvoke()}), and then tries again. So whoever lets
 * the duty cycle go for good wakes one follower, and a follower never needs to come back by itself. Followers
 * are not woken between a leader's duty cycles: the leader's cycles are what they wait for, and waking them on
 * every cycle would cost a system call per cycle.
 * The agent's data structures, queues and wake-ups are the same whoever runs the duty cycle.
 */
final class Invoker
{
    /** How long a thread that finds the stack closed parks before it looks again. */
    private static final long CLOSED_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private static final int AGENT_LEADING = 0;
    private static final int AGENT_STANDING_BY = 1;
    private static final int AGENT_DORMANT = 2;

    private final Agent agent;
    private final IdleStrategy idle;
    /** {@link #idle} if it is the default backoff, whose yields the leader makes without the lock; else null. */
    private final ParkingBackoffIdleStrategy backoff;
    private final WakeSignal signal;
    private final ErrorHandler errorHandler;
    private final boolean agentMode;
    /** Run as the agent thread stops running duty cycles: it parks while another thread leads, or stands aside. */
    private final Runnable agentStops;
    /** When the agent thread leads, stands by or sleeps: its own. */
    private final AgentTurns turns;
    private final DutyCycleLock lock = new DutyCycleLock();
    /** Runs a sending thread's duty cycle on the lock a sleeping leader lent; null: the lock is never lent. */
    private final BorrowedCycle borrowedCycle;
    /** Threads waiting to lead: unparked when a waiting thread's wait ends, and on close. */
    private final Waiters followers = new Waiters();
    /** Written under the lock; read under it too, and racily by {@link #isClosed()}. */
    private volatile boolean closed;

    // Application threads write, the agent thread reads (AGENT mode).
    /** Application threads now in a blocking call that had to wait. */
    private final AtomicInteger waitingCalls = new AtomicInteger();
    /** Blocking calls that had to wait and have ended. */
    private final AtomicLong endedCalls = new AtomicLong();
    /** Work was handed to the stack while the agent thread stood by or slept; set once per wake-up. */
    private final AtomicBoolean handedOver = new AtomicBoolean();
    /** {@link #endedCalls} at the last empty look that did not hand over ({@link #foundNothing}); -1 before any. */
    private volatile long endedAtEmptyLook = -1;

    // The agent thread writes (AGENT mode), application threads read.
    /** The stack's agent thread; null in INVOKER mode. */
    private volatile Thread agentThread;
    /** What the agent thread is doing: {@link #AGENT_LEADING}, {@link #AGENT_STANDING_BY}, {@link #AGENT_DORMANT}. */
    private volatile int agentState = AGENT_LEADING;
    /** A sending thread waits to take the lock for its message ({@link #holdWanted(boolean)}). */
    private volatile boolean holdWanted;

    // The thread holding the lock for a message (tryHold to unhold) writes and reads.
    /** The hold is on the lock a sleeping leader lent ({@link DutyCycleLock#tryBorrow()}), not a lock taken. */
    private boolean holdBorrowed;
    /** A borrowed hold's cycles left the sleeper something to do: it is woken as the hold ends. */
    private boolean wakeSleeper;

    /** A duty cycle on the lock a thread sleeping in the transport's idle wait has lent ({@link DutyCycleLock#lend()}). */
    @FunctionalInterface
    interface BorrowedCycle
    {
        /**
         * Runs a duty cycle that leaves the transports to the sleeper, whose wait may be in one of them.
         *
         * @param sleeperWakeAtNs the latest time the sleeper wakes, on the stack's clock.
         * @return whether the sleeper must be woken: the cycle did what a waiting thread must see (a command's
         *         completion, a socket's wake-up), or left something due before the sleeper would wake.
         */
        boolean run(long sleeperWakeAtNs);
    }

    /**
     * @param agentMode  the stack has an agent thread ({@link #runAgent}), so followers need not come back to
     *                   lead on their own: they park until woken.
     * @param agentStops run on the agent thread as it stops running duty cycles other than by idling (which its
     *                   idle strategy reports): it stands aside, or parks while another thread leads.
     * @param turns      the agent thread's policy ({@link #runAgent}).
     * @param borrowedCycle what a sending thread runs on the lock the leader lends while it sleeps in the
     *                   transport's idle wait ({@link #tryInvoke()}); null for a lock never lent.
     */
    Invoker(
        final Agent agent, final IdleStrategy idle, final WakeSignal signal, final ErrorHandler errorHandler,
        final boolean agentMode, final Runnable agentStops, final AgentTurns turns, final BorrowedCycle borrowedCycle)
    {
        this.turns = turns;
        this.borrowedCycle = borrowedCycle;
        if (borrowedCycle != null)
        {
            signal.lendDuringWaits(lock);
        }
        this.agentMode = agentMode;
        this.agentStops = agentStops;
        this.agent = agent;
        this.idle = idle;
        this.backoff = idle instanceof ParkingBackoffIdleStrategy ? (ParkingBackoffIdleStrategy)idle : null;
        this.signal = signal;
        this.errorHandler = errorHandler;
        try
        {
            agent.onStart();
        }
        catch (final Exception ex)
        {
            errorHandler.onError(ex);
        }
    }

    /**
     * {@link org.rds4j.RdsStack#invoke()}: one duty cycle if no other thread is running one.
     *
     * @return the work count, 0 if another thread holds the duty cycle or the stack is closed.
     */
    int invoke()
    {
        if (!lock.tryAcquire(false))
        {
            return 0;
        }
        try
        {
            // the duty cycle runs no application code, so this is only a guard against a re-entrant call
            return closed || lock.holdCount() > 1 ? 0 : doWork();
        }
        finally
        {
            release();
            // a waiting thread that found this cycle running parked as a follower until woken: it leads now
            followers.wakeOne();
        }
    }

    /** @return true if the stack has an agent thread (AGENT mode). */
    boolean hasAgentThread()
    {
        return agentMode;
    }

    /**
     * Takes the duty cycle's lock without running a cycle, for a sending thread that writes its message into the
     * stack's state itself ({@link RdsSocketImpl}'s append); {@link #unhold} gives it back.
     *
     * @return false if another thread holds it, or the stack is closed.
     */
    boolean tryHold()
    {
        if (lock.tryAcquire(true))
        {
            if (closed || lock.holdCount() > 1)
            {
                lock.release();
                return false;
            }
        }
        else if (borrowedCycle != null && lock.tryBorrow())
        {
            // a leader asleep in the transport's wait lent the lock: the sender appends on it, as it runs its cycle
            if (closed)
            {
                lock.giveBack();
                return false;
            }
            holdBorrowed = true;
        }
        else
        {
            return false;
        }
        if (holdWanted)
        {
            holdWanted = false; // taken either way: an agent stepping aside for the wish leads again
        }
        return true;
    }

    /** @return whether a sending thread's wish for the lock stands ({@link #holdWanted(boolean)}); any thread. */
    boolean isHoldWanted()
    {
        return holdWanted;
    }

    /**
     * A sending thread wants the lock ({@link #tryHold}) and found it held: an agent thread that leads steps aside
     * (it is woken from its idle wait, which it spends holding the lock, and leads no cycle while the wish stands),
     * until the sender takes the lock or gives up ({@link #holdWanted(boolean)} false).
     *
     * @param wanted whether the wish stands.
     */
    void holdWanted(final boolean wanted)
    {
        holdWanted = wanted;
        if (wanted && agentState == AGENT_LEADING && agentThread != null)
        {
            signal.wake();
        }
    }

    /**
     * Runs one duty cycle under the lock {@link #tryHold} took; on a borrowed lock the borrowed cycle, which leaves the
     * transports to the sleeper.
     */
    void cycleHeld()
    {
        if (!holdBorrowed)
        {
            doWork();
            return;
        }
        try
        {
            wakeSleeper |= borrowedCycle.run(signal.sleeperWakeAtNs());
        }
        catch (final Throwable ex)
        {
            errorHandler.onError(ex);
            wakeSleeper = true;
        }
    }

    /**
     * Gives back the lock {@link #tryHold} took, without a fence (once per message a sender appends), waking a thread
     * that waits to lead if asked to and this look sees one; one that registered at this moment, or is not woken,
     * comes back by itself ({@link #await}).
     *
     * @param wakeFollower whether to wake one ({@link FollowerWakes}: not while the sender streams whole batches).
     */
    void unhold(final boolean wakeFollower)
    {
        if (holdBorrowed)
        {
            final boolean wake = wakeSleeper;
            holdBorrowed = false;
            wakeSleeper = false;
            lock.giveBack();
            if (wake)
            {
                signal.wake();
            }
            return;
        }
        lock.releaseHold();
        if (wakeFollower)
        {
            followers.wakeOne();
        }
    }

    /**
     * A blocking send has queued its message: runs one duty cycle on the calling thread if no other thread is
     * running one (as the kernel's {@code rds_sendmsg} transmits in the caller), so the message is written now; also
     * while the leader sleeps in the transport's idle wait, on the lock it lent, without waking it.
     *
     * @return true if a duty cycle ran; false if another thread holds it (and will need waking).
     */
    boolean tryInvoke()
    {
        if (!lock.tryAcquire(false))
        {
            return borrowedCycle != null && tryBorrowedCycle();
        }
        try
        {
            if (closed || lock.holdCount() > 1)
            {
                return false;
            }
            doWork();
            return true;
        }
        finally
        {
            release();
            // a waiting thread that found this cycle running parked as a follower until woken: it leads now
            followers.wakeOne();
        }
    }

    /**
     * Runs a duty cycle on the lock a leader sleeping in the transport's idle wait has lent, and wakes the sleeper
     * only if the cycle says it must: a blocking request sent while another thread waits in {@code receive} leaves
     * without a wake-up of that thread, which its reply then wakes, as with blocking NIO.
     */
    private boolean tryBorrowedCycle()
    {
        if (!lock.tryBorrow())
        {
            return false;
        }
        boolean wakeSleeper = true;
        try
        {
            wakeSleeper = borrowedCycle.run(signal.sleeperWakeAtNs());
        }
        catch (final Throwable ex)
        {
            errorHandler.onError(ex);
        }
        finally
        {
            lock.giveBack();
            if (wakeSleeper)
            {
                signal.wake();
            }
        }
        return true;
    }

    /**
     * A blocking call must wait: from now until {@link #endCall()} its thread drives the stack (leading) or
     * waits for the thread that does. In AGENT mode an agent thread idling as leader is woken, so that it
     * steps aside for this thread.
     */
    void beginCall()
    {
        waitingCalls.incrementAndGet();
        if (agentState == AGENT_LEADING && agentThread != null)
        {
            signal.wake();
        }
    }

    /**
     * A blocking call's wait has ended (its call returns): if it was leading, a follower must take over now
     * rather than after its park times out, so one is woken (the next leader; the others keep waiting for what
     * they wait for, which the leader's cycles wake them for); if it was the last, a dormant agent thread
     * resumes. A few volatile reads when nobody follows.
     */
    void endCall()
    {
        endedCalls.incrementAndGet();
        if (waitingCalls.decrementAndGet() == 0 && agentState == AGENT_DORMANT)
        {
            LockSupport.unpark(agentThread);
        }
        followers.wakeOne();
    }

    /**
     * Any thread has handed the stack work (a message, a command) and woken the leader through the
     * {@link WakeSignal}. An agent thread standing by takes over at once if no application thread is waiting in
     * a call; while one is, that thread leads and does the work, and a dormant agent thread is left asleep (it
     * takes the work over when the last waiting call ends). Once per wake-up of the agent thread however many
     * hand-offs: a thread streaming sends while another is blocked in {@code receive} pays no system call per
     * message.
     */
    void handOver()
    {
        final Thread thread = agentThread;
        if (thread != null && agentState != AGENT_LEADING && !handedOver.get() && handedOver.compareAndSet(false, true) &&
            waitingCalls.get() == 0)
        {
            LockSupport.unpark(thread);
        }
    }

    /**
     * A non-blocking call found nothing to take. An agent thread standing by for application threads that made
     * blocking calls takes over at the second such look with no blocking call ended between the two, if none is in
     * one: the application polls now, and does not drive the stack, so without this what arrives would wait in the
     * kernel until the stand-by period ends (up to {@link AgentTurns#MAX_STAND_BY_NS}). Not at the first: a thread
     * that looks before it waits ({@code poll}, then a blocking {@code receive} if it found nothing) drives the stack
     * in the wait, and waking the agent at every look took such a ping-pong ({@code rds stress}) from about 38,000
     * round trips a second to 15,000. One volatile read while the agent leads, as it does for a polling application;
     * a dormant agent is left asleep (a thread waiting in a call leads).
     */
    void foundNothing()
    {
        if (agentState == AGENT_STANDING_BY && waitingCalls.get() == 0)
        {
            final long ended = endedCalls.get();
            if (ended == endedAtEmptyLook)
            {
                handOver();
            }
            else
            {
                endedAtEmptyLook = ended;
            }
        }
    }

    /**
     * AGENT mode: the agent thread's loop, until {@link #close()}: leads while no application thread waits in
     * a call, stands by or sleeps while one does (see {@link AgentTurns}).
     */
    void runAgent()
    {
        final Thread me = Thread.currentThread();
        agentThread = me;
        while (!closed)
        {
            // read before it is cleared, so that a duty cycle that found nothing handed over costs no atomic write
            switch (turns.next(waitingCalls.get(), endedCalls.get(), handedOver.get() && handedOver.getAndSet(false)))
            {
                case LEAD:
                    agentState = AGENT_LEADING;
                    if (waitingCalls.get() == 0 && (holdWanted || !lead(me, Transport.NO_DEADLINE)))
                    {
                        // an application thread runs a cycle after its send: it is short
                        agentStops.run();
                        LockSupport.parkNanos(this, AgentTurns.MIN_STAND_BY_NS);
                    }
                    break;
                case STAND_BY:
                    stepAside(AGENT_STANDING_BY);
                    LockSupport.parkNanos(this, turns.standByNs());
                    break;
                default:
                    stepAside(AGENT_DORMANT);
                    // a call that ended after the count was read saw DORMANT, or is seen here
                    if (waitingCalls.get() > 0 && !handedOver.get())
                    {
                        LockSupport.park(this);
                    }
                    break;
            }
        }
    }

    private void stepAside(final int state)
    {
        final boolean wasLeading = agentState == AGENT_LEADING;
        agentState = state;
        agentStops.run();
        if (wasLeading)
        {
            // a waiting thread parked as a follower while this thread led: it leads from now on
            followers.wakeOne();
        }
    }

    /**
     * One step of a wait, in place of parking: leads one duty cycle (idling after it if it did no work) or, if
     * another thread leads, parks briefly as a follower. The caller re-checks its condition after each step.
     *
     * @param timeoutNs  the wait's timeout, 0 for none.
     * @param deadlineNs when it expires (with a timeout).
     * @return 0 to check again, {@link RdsResult#EINTR} if the thread is interrupted, or
     *         {@link RdsResult#ETIMEDOUT} after the deadline.
     */
    int await(final long timeoutNs, final long deadlineNs)
    {
        final Thread me = Thread.currentThread();
        if (me.isInterrupted())
        {
            return RdsResult.EINTR;
        }
        // whoever holds the duty cycle wakes a follower when it lets it go (endCall, invoke, tryInvoke, stepAside)
        long parkNs = Long.MAX_VALUE;
        if (timeoutNs != 0)
        {
            // the caller's timeout is the application's, on System.nanoTime, not on the stack's clock
            final long remainingNs = deadlineNs - System.nanoTime();
            if (remainingNs <= 0)
            {
                return RdsResult.ETIMEDOUT;
            }
            parkNs = Math.min(parkNs, remainingNs);
        }
        final long callerDeadlineNs = timeoutNs != 0 ? deadlineNs : Transport.NO_DEADLINE;
        if (lead(me, callerDeadlineNs))
        {
            return 0;
        }
        followers.add(me);
        try
        {
            // the leader may have let go between the try above and registering: try once more
            if (!lead(me, callerDeadlineNs))
            {
                final int state = lock.state();
                if (state == DutyCycleLock.HOLD)
                {
                    // a hold's end does not wait for its look for followers to see this one: come back by itself
                    LockSupport.parkNanos(this, Math.min(parkNs, DutyCycleLock.HOLD_FOLLOWER_PARK_NS));
                }
                else if (state != DutyCycleLock.FREE)
                {
                    // a leader: running cycles, or asleep with the lock lent
                    if (parkNs == Long.MAX_VALUE)
                    {
                        LockSupport.park(this);
                    }
                    else
                    {
                        LockSupport.parkNanos(this, parkNs);
                    }
                }
                // FREE: let go since the try (a hold's end may not have seen this follower): the caller tries again
            }
        }
        finally
        {
            followers.remove(me);
        }
        return 0;
    }

    /**
     * @param callerDeadlineNs when the caller's wait times out ({@link Transport#NO_DEADLINE}: never); an idle
     *                         park ends by then.
     * @return false if another thread holds the duty cycle; true after running one (and idling if idle).
     */
    private boolean lead(final Thread me, final long callerDeadlineNs)
    {
        if (!lock.tryAcquire(false))
        {
            return false;
        }
        boolean held = true;
        try
        {
            if (closed)
            {
                // nothing will change any more: do not spin while the caller finds out its socket is closed
                LockSupport.parkNanos(this, CLOSED_PARK_NS);
                return true;
            }
            final int work = doWork();
            if (work > 0)
            {
                idle.idle(work);
            }
            else if (backoff != null && backoff.takeYield())
            {
                // held through a yield, the lock made a sender that wants it (tryHold) spin while this thread was
                // off its core: a seventh of a 64 B stream's sending time in 100 us spins that timed out. The yield is
                // taken under the lock: deciding here and counting it after the release let the next leader use up
                // the yields meanwhile, and this thread then parked without the lock, in the selector beside it
                held = false;
                release();
                backoff.yieldNow();
            }
            else
            {
                // a strategy that parks the thread (no transport waiter) is woken through the signal
                signal.agentThread(me);
                signal.callerDeadline(callerDeadlineNs);
                idle.idle(0);
                signal.callerDeadline(Transport.NO_DEADLINE);
            }
            return true;
        }
        finally
        {
            if (held)
            {
                release();
            }
        }
    }

    private int doWork()
    {
        try
        {
            return agent.doWork();
        }
        catch (final Throwable ex)
        {
            // as agrona's AgentRunner: report and carry on with the next duty cycle
            errorHandler.onError(ex);
            return 0;
        }
    }

    private void release()
    {
        lock.release();
    }

    /**
     * Waits for a duty cycle in progress on another thread (waking a leader that idles), then runs the
     * agent's {@code onClose} on the calling thread. Afterwards no duty cycle runs. Idempotent.
     */
    void close()
    {
        signal.wake();
        lock.acquire();
        try
        {
            if (closed)
            {
                return;
            }
            closed = true;
            try
            {
                agent.onClose();
            }
            catch (final Throwable ex)
            {
                errorHandler.onError(ex);
            }
        }
        finally
        {
            release();
            // waiting threads find their sockets closed, or that no duty cycle will run again
            followers.wakeAll();
            LockSupport.unpark(agentThread);
        }
    }

    /** @return whether {@link #close()} has run: no duty cycle will run again. */
    boolean isClosed()
    {
        return closed;
    }
}
