package org.rds4j.core.test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for conditions with a deadline, parking briefly between checks. Tests only. */
public final class Await
{
    /** How long {@link #wakeOnceWaiting}'s waker waits for its sleeper to sleep. */
    private static final Duration WAKER_DEADLINE = Duration.ofSeconds(30);

    private Await()
    {
    }

    /**
     * @param timeout   how long to wait.
     * @param condition what to wait for.
     * @param what      supplies the failure message.
     * @throws AssertionError if the condition is still false at the deadline.
     */
    public static void until(final Duration timeout, final BooleanSupplier condition, final Supplier<String> what)
    {
        if (!within(timeout, condition))
        {
            throw new AssertionError("timed out after " + timeout + " waiting for: " + what.get());
        }
    }

    /**
     * For a condition that may rightly stay false (the caller decides what that means).
     *
     * @param timeout   how long to wait.
     * @param condition what to wait for.
     * @return true as soon as the condition holds; false if it is still false at the deadline.
     */
    public static boolean within(final Duration timeout, final BooleanSupplier condition)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                return false;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    public static void until(final BooleanSupplier condition, final String what)
    {
        until(Duration.ofSeconds(20), condition, () -> what);
    }

    /**
     * Whether a thread is inside a blocking call of the stack: the named method is on its stack. Its state says
     * little: a thread waiting in a call drives the stack, so it may be parked, in a timed park, or in the
     * transport's selector (which Java reports as running).
     *
     * @param thread the thread.
     * @param method a method of the blocking call, e.g. {@code sendBlocking} or {@code receiveBlocking}.
     */
    public static boolean blockedIn(final Thread thread, final String method)
    {
        return Arrays.stream(thread.getStackTrace()).anyMatch(e -> e.getMethodName().equals(method));
    }

    /**
     * Called by {@code sleeper}: starts a thread that runs {@code wake} once {@code sleeper} waits with a timeout (a
     * wake before that is one a test means to be missed). The caller then sleeps, and joins the thread. An unpark
     * left for the caller by an earlier test is taken first: it would end the sleep at once, unseen by the waker.
     * The waker gives up after {@link #WAKER_DEADLINE}, so a sleep that never came fails its test instead of hanging it.
     */
    public static Thread wakeOnceWaiting(final Thread sleeper, final Runnable wake)
    {
        if (sleeper == Thread.currentThread())
        {
            LockSupport.parkNanos(1);
        }
        final long deadlineNs = System.nanoTime() + WAKER_DEADLINE.toNanos();
        final Thread waker = new Thread(() ->
        {
            while (sleeper.getState() != Thread.State.TIMED_WAITING)
            {
                if (System.nanoTime() - deadlineNs > 0)
                {
                    return;
                }
                Thread.onSpinWait();
            }
            wake.run();
        }, "waker");
        waker.start();
        return waker;
    }

    /**
     * @param name a thread's whole name.
     * @return the live thread of this JVM of that name.
     * @throws AssertionError if none, or more than one, has it.
     */
    public static Thread thread(final String name)
    {
        final List<Thread> named = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals(name)).toList();
        if (named.size() != 1)
        {
            throw new AssertionError(named.size() + " threads named " + name);
        }
        return named.get(0);
    }

    /**
     * Whether a thread waiting in a call has got past its idle strategy's spinning and yielding and waits for a
     * wake-up: parked ({@code LockSupport}), or in the transport's selector.
     *
     * @param thread the thread.
     */
    public static boolean idling(final Thread thread)
    {
        return Arrays.stream(thread.getStackTrace()).anyMatch(e ->
            (e.getClassName().equals("java.util.concurrent.locks.LockSupport") && e.getMethodName().startsWith("park")) ||
            (e.getClassName().startsWith("sun.nio.ch.") && e.getMethodName().equals("doSelect")));
    }
}
