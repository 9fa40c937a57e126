package org.rds4j.core;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.util.concurrent.TimeUnit;

/** Turns the configuration's idle-strategy names into agrona strategies. */
final class IdleStrategies
{
    private IdleStrategies()
    {
    }

    /**
     * @param spec   {@code backoff}, {@code sleep:<micros>}, {@code yield} or {@code spin}, as validated by
     *               {@link org.rds4j.RdsStackConfig.Builder#idleStrategy}.
     * @param signal where the agent publishes that it is parked.
     * @return a new strategy that reports parking to {@code signal}.
     */
    static IdleStrategy parse(final String spec, final WakeSignal signal)
    {
        if (spec.equals("backoff"))
        {
            // yield through idle cycles for latency under load (never spin: ParkingBackoffIdleStrategy says
            // why), then park 1 us doubling to 100 ms; parks end at I/O, at a wake and at the stack's next timer
            // deadline (WakeSignal.park)
            return new ParkingBackoffIdleStrategy(ParkingBackoffIdleStrategy.YIELDS, TimeUnit.MICROSECONDS.toNanos(1),
                TimeUnit.MILLISECONDS.toNanos(100), signal);
        }
        return wakeable(parseAgrona(spec), signal);
    }

    /**
     * @param strategy an application's strategy.
     * @param signal   where the agent publishes that it is idling.
     * @return the strategy reporting to {@code signal}.
     */
    static IdleStrategy wakeable(final IdleStrategy strategy, final WakeSignal signal)
    {
        return strategy instanceof ParkingBackoffIdleStrategy ? strategy : new WakeableIdleStrategy(strategy, signal);
    }

    private static IdleStrategy parseAgrona(final String spec)
    {
        if (spec.equals("yield"))
        {
            return new YieldingIdleStrategy();
        }
        if (spec.equals("spin"))
        {
            return new BusySpinIdleStrategy();
        }
        if (spec.startsWith("sleep:"))
        {
            return new SleepingIdleStrategy(TimeUnit.MICROSECONDS.toNanos(Long.parseLong(spec.substring(6))));
        }
        throw new IllegalArgumentException("unknown idle strategy: " + spec);
    }
}
