package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.Threading;
import org.rds4j.core.test.MemoryStacks;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a sending thread's duty cycle on a lent lock ({@link StackAgent#borrowedCycle}) tells the thread asleep in
 * the transport's wait: nothing for a request it only writes, and a wake-up for what the sleeper must see or run
 * (a command it may be waiting for, a socket's waiters, which an unpark does not reach in a selector, a timer due
 * before it wakes). Stacks in INVOKER mode on a memory network, whose cycles only this test's thread runs.
 */
class BorrowedCycleTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** A sleeper's wake-up as its first idle waits have it: a millisecond away. */
    private static final long SOON_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final MemoryStacks stacks = new MemoryStacks();
    private CoreStack a;
    private CoreStack b;
    private RdsSocket sa;
    private RdsSocket sb;
    private final ByteBuffer message = ByteBuffer.allocate(64);

    @BeforeEach
    void connect() throws Exception
    {
        a = stacks.open(stacks.config("bca").toBuilder().threading(Threading.INVOKER).build());
        b = stacks.open(stacks.config("bcb").toBuilder().threading(Threading.INVOKER).build());
        sa = a.openSocket().configureBlocking(false).bind(new InetSocketAddress("127.0.63.1", 5000));
        sb = b.openSocket().configureBlocking(false).bind(new InetSocketAddress("127.0.63.2", 5000));
        // one message across and acked: the connection is up, nothing is owed either way
        assertEquals(64, sa.send(message.clear(), sb.localAddress()));
        final ByteBuffer in = ByteBuffer.allocate(64);
        pump(() -> sb.receive(in.clear()) != null, "the first message");
        pump(() -> sa.sendQueuedBytes() == 0, "the first message acked");
    }

    @AfterEach
    void close()
    {
        stacks.close();
    }

    @Test
    void aCycleThatOnlyWritesARequestLeavesTheSleeperAsleep() throws Exception
    {
        final long transmitted = a.counters().get("send_transmitted");
        assertEquals(64, sa.send(message.clear(), sb.localAddress()));

        assertFalse(a.agent().borrowedCycle(System.nanoTime() + SOON_NS),
            "a request written and not yet acked needs no timer: the ack comes as input");
        assertEquals(transmitted + 1, a.counters().get("send_transmitted"), "written by the borrowed cycle");
    }

    @Test
    void aCommandRunByTheCycleWakesTheSleeper()
    {
        final AtomicBoolean ran = new AtomicBoolean();
        a.send(agent -> ran.set(true));

        assertTrue(a.agent().borrowedCycle(System.nanoTime() + SOON_NS), "its caller may be the sleeper");
        assertTrue(ran.get());
    }

    @Test
    void aMessageDeliveredByTheCycleWakesTheSleeper() throws Exception
    {
        final RdsSocket local = a.openSocket().configureBlocking(false).bind(new InetSocketAddress("127.0.63.1", 5001));
        final ByteBuffer in = ByteBuffer.allocate(64);
        assertEquals(64, sa.send(message.clear(), local.localAddress()));
        pump(() -> local.receive(in.clear()) != null, "the loopback path up and a first message across");
        assertEquals(64, sa.send(message.clear(), local.localAddress()));

        assertTrue(a.agent().borrowedCycle(System.nanoTime() + SOON_NS),
            "delivered across the loopback path within the cycle: the receiver may be the sleeper, in its wait");
        assertTrue(local.receive(in.clear()) != null);
    }

    @Test
    void aTimerDueBeforeTheSleeperWakesWakesIt()
    {
        assertTrue(a.agent().borrowedCycle(System.nanoTime() + TimeUnit.DAYS.toNanos(1)),
            "the connection's heartbeat is due long before a day");
        assertFalse(a.agent().borrowedCycle(System.nanoTime() + SOON_NS));
    }

    /** Runs both stacks' duty cycles until {@code done}, or fails after {@link #WAIT}. */
    private void pump(final ThrowingCondition done, final String what) throws Exception
    {
        final long deadlineNs = System.nanoTime() + WAIT.toNanos();
        while (!done.met())
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
            a.invoke();
            b.invoke();
        }
    }

    @FunctionalInterface
    private interface ThrowingCondition
    {
        boolean met() throws Exception;
    }
}
