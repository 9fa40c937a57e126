package org.rds4j.core;

import org.agrona.concurrent.IdleStrategy;

/**
 * The agent's default idle strategy: after a cycle without work it yields, then parks for a period that doubles
 * from a minimum to a maximum; any work resets it. It does not spin: a thread spinning through idle cycles holds
 * its core until the spins end, and when the cores are all busy (a ping-pong's two looping threads on two cores)
 * a thread woken onto that core waits for them. With 100 spins before the yields, the 64 B round trip's p99 was
 * 27-123 us, with none 17-21 us (docs/benchmarks.md): a yield hands the core over at once. Unlike agrona's
 * {@code BackoffIdleStrategy} it publishes when it is actually parked, so an application thread that hands
 * the agent work unparks it only then, and only once per park: during the yield phase the agent
 * finds the work by itself at no system-call cost. It parks through the {@link WakeSignal}, which waits in a
 * transport's selector when one can, so network input ends a park as soon as it arrives.
 */
final class ParkingBackoffIdleStrategy implements IdleStrategy
{
    /**
     * The idle cycles a thread that drives a stack yields through before it parks: long enough to span the gap
     * between a request and its reply, or two batches of a stream, on a busy machine.
     */
    static final int YIELDS = 200;

    private final int maxYields;
    private final long minParkNs;
    private final long maxParkNs;
    private final WakeSignal signal;
    /** {@link Thread#yield()}; a test's own, to see what the yielding thread holds. */
    private final Runnable yield;
    private int yields;
    private long parkNs;

    /**
     * @param maxYields idle cycles spent yielding before parking.
     * @param minParkNs first park period.
     * @param maxParkNs longest park period; bounds how late a wake-up that races with parking is seen.
     * @param signal    where the parked state is published.
     */
    ParkingBackoffIdleStrategy(
        final int maxYields, final long minParkNs, final long maxParkNs, final WakeSignal signal)
    {
        this(maxYields, minParkNs, maxParkNs, signal, Thread::yield);
    }

    ParkingBackoffIdleStrategy(
        final int maxYields, final long minParkNs, final long maxParkNs, final WakeSignal signal, final Runnable yield)
    {
        this.maxYields = maxYields;
        this.minParkNs = minParkNs;
        this.maxParkNs = maxParkNs;
        this.signal = signal;
        this.yield = yield;
        reset();
    }

    @Override
    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
        }
        else
        {
            idle();
        }
    }

    @Override
    public void idle()
    {
        if (takeYield())
        {
            yieldNow();
        }
        else
        {
            signal.park(parkNs);
            parkNs = Math.min(parkNs * 2, maxParkNs);
        }
    }

    /**
     * Decides the next idle cycle without work: a yield (counted now) or a park. A thread leading the duty cycle
     * decides under its lock, and may then let the lock go and {@link #yieldNow()}, since a yield waits in nothing
     * (no transport's selector); everything else here is touched only under the lock, so two threads never park at
     * once (a thread that decided to yield must not find, by the time it idles, that the yields ran out meanwhile).
     *
     * @return true for a yield.
     */
    boolean takeYield()
    {
        if (yields < maxYields)
        {
            yields++;
            return true;
        }
        return false;
    }

    /** The yield that {@link #takeYield()} granted; touches no state, so any thread may call it without the lock. */
    void yieldNow()
    {
        yield.run();
    }

    @Override
    public void reset()
    {
        yields = 0;
        parkNs = minParkNs;
    }

    @Override
    public String alias()
    {
        return "parking-backoff";
    }
}
