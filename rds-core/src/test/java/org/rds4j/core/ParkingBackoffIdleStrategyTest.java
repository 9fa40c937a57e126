package org.rds4j.core;

import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;
import org.rds4j.core.spi.IdleWaiter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The default idle strategy's schedule ({@code backoff}): 200 idle cycles that yield and never park, then parks of
 * 1 us doubling to 100 ms, all through the {@link WakeSignal}; work starts it over. The waiter records each park
 * instead of waiting, and the signal has no bounds, so each park asks for exactly the strategy's period.
 */
class ParkingBackoffIdleStrategyTest
{
    private final List<Long> parks = new ArrayList<>();
    private final WakeSignal signal = new WakeSignal(SystemNanoClock.INSTANCE);
    private final ParkingBackoffIdleStrategy strategy;

    ParkingBackoffIdleStrategyTest()
    {
        signal.idleWaiter(new IdleWaiter()
        {
            @Override
            public void await(final long timeoutNs)
            {
                parks.add(timeoutNs);
            }

            @Override
            public void wake()
            {
            }
        });
        strategy = (ParkingBackoffIdleStrategy)IdleStrategies.parse("backoff", signal);
    }

    @Test
    void yieldsFor200IdleCyclesThenParksDoublingTo100Ms()
    {
        idle(200);
        assertEquals(List.of(), parks);
        idle(18);
        final List<Long> expected = new ArrayList<>();
        for (long ns = 1_000; expected.size() < 18; ns = Math.min(ns * 2, TimeUnit.MILLISECONDS.toNanos(100)))
        {
            expected.add(ns);
        }
        assertEquals(TimeUnit.MILLISECONDS.toNanos(100), expected.get(17));
        assertEquals(expected, parks);
    }

    @Test
    void workStartsTheScheduleOver()
    {
        idle(203);
        assertEquals(List.of(1_000L, 2_000L, 4_000L), parks);
        strategy.idle(1);
        idle(201);
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 1_000L), parks);
    }

    private void idle(final int cycles)
    {
        for (int i = 0; i < cycles; i++)
        {
            strategy.idle(0);
        }
    }
}
