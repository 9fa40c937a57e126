package org.rds4j.core;

import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * {@link WakeableIdleStrategy}: an application's strategy that sleeps (here for a minute or an hour, so that only what
 * is under test ends it within the tests' bounds) looks for work handed over before it sleeps and is woken by the signal; one
 * that only yields never looks (a look tells a driver's clients to ring, which a yielding agent needs not); and a
 * stack idling with the hour-long sleep closes at once.
 */
class WakeableIdleStrategyTest
{
    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final long HOUR_NS = TimeUnit.HOURS.toNanos(1);
    /** A sleep that ends within {@link #ENDED_EARLY_NS} ended for the reason under test. */
    private static final long LONG_SLEEP_NS = TimeUnit.SECONDS.toNanos(60);
    private static final long ENDED_EARLY_NS = TimeUnit.SECONDS.toNanos(10);

    private final Bounds bounds = new Bounds();
    private final WakeSignal signal = new WakeSignal(SystemNanoClock.INSTANCE);
    private final MemoryStacks stacks = new MemoryStacks();

    WakeableIdleStrategyTest()
    {
        signal.agentThread(Thread.currentThread());
        signal.idleBounds(bounds);
    }

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void aSleepingStrategyDoesNotSleepThroughWorkHandedOverBefore()
    {
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(new SleepingIdleStrategy(LONG_SLEEP_NS), signal);
        bounds.queuedInput = true;
        final long start = System.nanoTime();
        idle.idle(0);
        assertTrue(System.nanoTime() - start < ENDED_EARLY_NS, "did not sleep");
        assertEquals(1, bounds.looks, "one look, before the sleep");
    }

    @Test
    void aSleepingStrategyIsWokenByTheSignal() throws Exception
    {
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(new SleepingIdleStrategy(LONG_SLEEP_NS), signal);
        final Thread waker = Await.wakeOnceWaiting(Thread.currentThread(), signal::wake);
        final long start = System.nanoTime();
        idle.idle(0);
        final long sleptNs = System.nanoTime() - start;
        waker.join();
        assertTrue(sleptNs < ENDED_EARLY_NS, "woken after " + sleptNs + " ns");
        assertEquals(1, bounds.looks);
    }

    @Test
    void aYieldingStrategyNeverLooks()
    {
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(new YieldingIdleStrategy(), signal);
        for (int i = 0; i < 100; i++)
        {
            idle.idle(0);
        }
        assertEquals(0, bounds.looks);
    }

    /**
     * Close wakes the agent, which used to take the duty cycle again (its lock is tried, and the agent's try came first)
     * and sleep another hour, while close waited for the lock.
     */
    @Test
    void aStackIdlingWithAnHourLongSleepClosesAtOnce()
    {
        assertTimeoutPreemptively(BOUND, () ->
        {
            final CoreStack stack = stacks.open(stacks.config("hour-sleep"),
                stacks.network().options().idleStrategy(new SleepingIdleStrategy(HOUR_NS)));
            final RdsSocket socket = stack.openSocket().bind(new InetSocketAddress(ip("127.0.77.1"), 7000));
            assertEquals(8, socket.send(ByteBuffer.allocate(8), socket.localAddress()));
            assertEquals(socket.localAddress(), socket.receive(ByteBuffer.allocate(8)));
            final Thread agent = Await.thread("rds4j-agent-hour-sleep");
            Await.until(BOUND, () -> java.util.Arrays.stream(agent.getStackTrace())
                .anyMatch(e -> e.getClassName().equals(SleepingIdleStrategy.class.getName())),
                () -> "the agent asleep in its strategy");
            stack.close();
        });
    }

    private static final class Bounds implements IdleBounds
    {
        boolean queuedInput;
        int looks;

        @Override
        public boolean hasQueuedInput()
        {
            looks++;
            return queuedInput;
        }

        @Override
        public long idleDeadlineNs(final long nowNs)
        {
            return Transport.NO_DEADLINE;
        }
    }
}
