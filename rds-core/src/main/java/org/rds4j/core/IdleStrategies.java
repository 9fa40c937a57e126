package org.rds4j.core;

import org.agrona.concurrent.BackoffIdleStrategy;
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
     * @param spec {@code backoff}, {@code sleep:<micros>}, {@code yield} or {@code spin}, as validated by
     *             {@link org.rds4j.RdsStackConfig.Builder#idleStrategy}.
     * @return a new strategy.
     */
    static IdleStrategy parse(final String spec)
    {
        if (spec.equals("backoff"))
        {
            // spin briefly and yield for latency under load, then park 1 us doubling to 1 ms when idle
            return new BackoffIdleStrategy(100, 100, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
        }
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
