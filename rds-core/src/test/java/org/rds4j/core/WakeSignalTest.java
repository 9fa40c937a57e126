package org.rds4j.core;

import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.test.Await;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link WakeSignal#park}: the work check before a park, the deadlines that cut it short, and wakes. A park of
 * 10 s that ends within 1 s ended for the reason under test (without a transport waiter it is a parkNanos).
 */
class WakeSignalTest
{
    private static final long LONG_PARK_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long ENDED_EARLY_NS = TimeUnit.SECONDS.toNanos(1);

    private final Bounds bounds = new Bounds();
    private final WakeSignal signal = new WakeSignal(SystemNanoClock.INSTANCE);

    WakeSignalTest()
    {
        signal.agentThread(Thread.currentThread());
        signal.idleBounds(bounds);
    }

    @Test
    void workHandedOverBeforeTheParkMeansNoPark()
    {
        bounds.queuedInput = true;
        assertTrue(parkNs() < ENDED_EARLY_NS);
    }

    @Test
    void theNextDeadlineEndsThePark()
    {
        bounds.deadlineAfterNs = TimeUnit.MILLISECONDS.toNanos(50);
        final long parkedNs = parkNs();
        assertTrue(parkedNs < ENDED_EARLY_NS, parkedNs + " ns");
    }

    @Test
    void aDeadlineDueNowStillParksTheShortestBoundedPark()
    {
        bounds.deadlineAfterNs = 0;
        final long parkedNs = parkNs();
        assertTrue(parkedNs < ENDED_EARLY_NS, parkedNs + " ns");
    }

    @Test
    void aBlockingCallsDeadlineEndsThePark()
    {
        signal.callerDeadline(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
        final long parkedNs = parkNs();
        signal.callerDeadline(Transport.NO_DEADLINE);
        assertTrue(parkedNs < ENDED_EARLY_NS, parkedNs + " ns");
    }

    @Test
    void withoutADeadlineTheParkLastsItsTimeUnlessWoken() throws Exception
    {
        final Thread waker = Await.wakeOnceWaiting(Thread.currentThread(), signal::wake);
        final long parkedNs = parkNs();
        waker.join();
        assertTrue(parkedNs < ENDED_EARLY_NS, "woken after " + parkedNs + " ns");

        final long shortNs = TimeUnit.MILLISECONDS.toNanos(30);
        final long start = System.nanoTime();
        signal.park(shortNs);
        assertTrue(System.nanoTime() - start >= shortNs - TimeUnit.MILLISECONDS.toNanos(1), "no deadline: the full park");
    }

    private long parkNs()
    {
        final long start = System.nanoTime();
        signal.park(LONG_PARK_NS);
        return System.nanoTime() - start;
    }

    private static final class Bounds implements IdleBounds
    {
        boolean queuedInput;
        long deadlineAfterNs = -1;

        @Override
        public boolean hasQueuedInput()
        {
            return queuedInput;
        }

        @Override
        public long idleDeadlineNs(final long nowNs)
        {
            return deadlineAfterNs < 0 ? Transport.NO_DEADLINE : nowNs + deadlineAfterNs;
        }
    }
}
