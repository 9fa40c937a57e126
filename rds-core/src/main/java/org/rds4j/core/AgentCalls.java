package org.rds4j.core;

import org.rds4j.RdsResult;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * How application threads wait for a stack's agent: a function run on the agent with its result awaited
 * ({@link #call}), and the waits of blocking socket calls ({@link #await}). In AGENT mode they park until the
 * agent unparks them; in INVOKER mode they run the agent's duty cycles themselves through the
 * {@link Invoker}, or park briefly while another thread runs them.
 * <p>
 * Timeouts here are the application's, on {@link System#nanoTime()}: a blocking call's timeout is measured on
 * the caller's clock, not on the stack's {@link StackOptions#nanoClock()}, which a test may hold still.
 */
final class AgentCalls
{
    private final CoreStack stack;
    /** INVOKER mode: runs the duty cycle on application threads; null in AGENT mode. */
    private final Invoker invoker;
    /** AGENT mode: the agent's thread; null in INVOKER mode. */
    private final Thread agentThread;

    AgentCalls(final CoreStack stack, final Invoker invoker, final Thread agentThread)
    {
        this.stack = stack;
        this.invoker = invoker;
        this.agentThread = agentThread;
    }

    /**
     * A blocking send has queued its message: in INVOKER mode, runs one duty cycle if no other thread is
     * running one, so that the message goes out now (a blocking application need not call
     * {@link CoreStack#invoke()}); nothing in AGENT mode, where the send has woken the agent.
     */
    void afterBlockingSend()
    {
        if (invoker != null)
        {
            invoker.invoke();
        }
    }

    /**
     * A blocking call's wait has ended: in INVOKER mode, wakes threads waiting to run the duty cycle, since
     * this thread may have been running it for them.
     */
    void endWait()
    {
        if (invoker != null)
        {
            invoker.leave();
        }
    }

    /**
     * Application threads, in place of parking in a blocking call: in AGENT mode parks until unparked (by the
     * agent) or the deadline; in INVOKER mode runs a duty cycle, or parks briefly while another thread runs
     * one (see {@link Invoker#await}).
     *
     * @param timeoutNs  the call's timeout, 0 for none.
     * @param deadlineNs when it expires (with a timeout), on {@link System#nanoTime()}.
     * @return 0 to check again, {@link RdsResult#ETIMEDOUT} or {@link RdsResult#EINTR}.
     */
    int await(final long timeoutNs, final long deadlineNs)
    {
        if (invoker != null)
        {
            return invoker.await(timeoutNs, deadlineNs);
        }
        if (Thread.currentThread().isInterrupted())
        {
            return RdsResult.EINTR;
        }
        if (timeoutNs == 0)
        {
            LockSupport.park();
            return 0;
        }
        final long remainingNs = deadlineNs - System.nanoTime();
        if (remainingNs <= 0)
        {
            return RdsResult.ETIMEDOUT;
        }
        LockSupport.parkNanos(remainingNs);
        return 0;
    }

    /**
     * Runs a function on the agent and waits for its result. In INVOKER mode the calling thread runs duty
     * cycles until the function has run (or parks briefly while another thread runs them), so the call needs
     * nobody else to drive the stack.
     */
    <T> T call(final Function<StackAgent, T> function)
    {
        final CompletableFuture<T> result = new CompletableFuture<>();
        final Thread caller = invoker == null ? null : Thread.currentThread();
        stack.send(stackAgent ->
        {
            try
            {
                result.complete(function.apply(stackAgent));
            }
            catch (final RuntimeException ex)
            {
                result.completeExceptionally(ex);
            }
            if (caller != null)
            {
                // a caller parked as a follower while another thread ran this: end its park now
                LockSupport.unpark(caller);
            }
        });
        return invoker == null ? awaitAgent(result) : awaitInvoked(result);
    }

    private <T> T awaitAgent(final CompletableFuture<T> result)
    {
        while (true)
        {
            try
            {
                return result.get(100, TimeUnit.MILLISECONDS);
            }
            catch (final TimeoutException ex)
            {
                if (stack.isClosed() && !agentThread.isAlive())
                {
                    throw new IllegalStateException("stack " + stack.config().name() + " is closed");
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the stack's agent", ex);
            }
            catch (final ExecutionException ex)
            {
                throw (RuntimeException)ex.getCause();
            }
        }
    }

    private <T> T awaitInvoked(final CompletableFuture<T> result)
    {
        try
        {
            while (!result.isDone())
            {
                if (invoker.isClosed())
                {
                    // the agent's close runs every queued command: this one was queued after it
                    if (result.isDone())
                    {
                        break;
                    }
                    throw new IllegalStateException("stack " + stack.config().name() + " is closed");
                }
                if (invoker.await(0, 0) == RdsResult.EINTR)
                {
                    throw new IllegalStateException("interrupted while waiting for the stack's agent");
                }
            }
        }
        finally
        {
            invoker.leave();
        }
        try
        {
            return result.get();
        }
        catch (final InterruptedException ex)
        {
            // not reached: the result is complete, so get does not wait
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the stack's agent", ex);
        }
        catch (final ExecutionException ex)
        {
            throw (RuntimeException)ex.getCause();
        }
    }
}
