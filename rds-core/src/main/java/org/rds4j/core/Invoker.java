package org.rds4j.core;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;
import org.rds4j.RdsResult;
import org.rds4j.core.spi.Transport;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs a stack's agent on application threads ({@link org.rds4j.Threading#INVOKER}), as agrona's
 * {@code AgentInvoker} does, plus what agrona leaves to the caller: waiting threads drive the stack.
 * <p>
 * One duty cycle runs at a time, under a lock that is only ever tried, never waited for (except by
 * {@link #close()}). The thread holding it is the leader: it runs a duty cycle and, if the cycle did no work,
 * idles once with the stack's idle strategy while still holding it, as the agent thread would (the default
 * backoff waits in the TCP selector, which only one thread can use at a time, and which application threads
 * handing the stack work wake through the {@link WakeSignal}). A waiting thread that finds another leading
 * is a follower: it parks until woken by what it waits for (its socket's waiters, a command's completion),
 * by a leader whose wait has ended ({@link #leave()}), or for at most {@link #FOLLOWER_PARK_NS}, and then
 * tries again. Followers are not woken between a leader's duty cycles: the leader's cycles are what they
 * wait for, and waking them on every cycle would cost a system call per cycle. The agent's data
 * structures, queues and wake-ups stay as in agent mode: only who runs the duty cycle changes.
 */
final class Invoker
{
    /** Longest a follower parks before it tries to lead again. */
    static final long FOLLOWER_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Agent agent;
    private final IdleStrategy idle;
    private final WakeSignal signal;
    private final ErrorHandler errorHandler;
    private final ReentrantLock lock = new ReentrantLock();
    /** Threads waiting to lead: unparked when a waiting thread's wait ends, and on close. */
    private final Waiters followers = new Waiters();
    /** Written under the lock; read under it too, and racily by {@link #isClosed()}. */
    private volatile boolean closed;

    Invoker(final Agent agent, final IdleStrategy idle, final WakeSignal signal, final ErrorHandler errorHandler)
    {
        this.agent = agent;
        this.idle = idle;
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
        if (!lock.tryLock())
        {
            return 0;
        }
        try
        {
            // the duty cycle runs no application code, so this is only a guard against a re-entrant call
            return closed || lock.getHoldCount() > 1 ? 0 : doWork();
        }
        finally
        {
            release();
        }
    }

    /**
     * One step of a wait in INVOKER mode, in place of parking: leads one duty cycle (idling after it if it did
     * no work) or, if another thread leads, parks briefly as a follower. The caller re-checks its condition
     * after each step.
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
        long parkNs = FOLLOWER_PARK_NS;
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
                LockSupport.parkNanos(this, parkNs);
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
        if (!lock.tryLock())
        {
            return false;
        }
        try
        {
            if (closed)
            {
                // nothing will change any more: do not spin while the caller finds out its socket is closed
                LockSupport.parkNanos(this, FOLLOWER_PARK_NS);
                return true;
            }
            final int work = doWork();
            if (work > 0)
            {
                idle.idle(work);
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
            release();
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
        lock.unlock();
    }

    /**
     * A thread's wait has ended (its call returns): if it was leading, a follower must take over now rather
     * than after its park times out. A few volatile reads when nobody follows.
     */
    void leave()
    {
        followers.wakeAll();
    }

    /**
     * Waits for a duty cycle in progress on another thread (waking a leader that idles), then runs the
     * agent's {@code onClose} on the calling thread. Afterwards no duty cycle runs. Idempotent.
     */
    void close()
    {
        signal.wake();
        lock.lock();
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
        }
    }

    /** @return whether {@link #close()} has run: no duty cycle will run again. */
    boolean isClosed()
    {
        return closed;
    }
}
