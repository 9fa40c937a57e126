package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rds4j.RdsClaim;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.Threading;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * {@link RdsSocket#awaitDrained} and {@link RdsOptions#SO_LINGER}: a wait for the socket's queued messages to be
 * acked, woken by the acks (and in INVOKER mode driving the stack), false at its timeout; a close that lingers
 * (a non-blocking socket's too) until the peer has them, or until its linger runs out or the thread is
 * interrupted, and then drops them. The sending stack runs in both
 * threading modes; its peer B in AGENT mode. A cut between the two holds the acks back until the test heals it;
 * 127.0.9.1 is a dead peer.
 */
class DrainTest
{
    private static final InetAddress A_IP = ip("127.0.1.1");
    private static final InetAddress B_IP = ip("127.0.1.2");
    private static final InetSocketAddress DEAD = new InetSocketAddress(ip("127.0.9.1"), 7000);
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** Longer than any wait of the test: a call that returns within {@link #WAIT} did not time out. */
    private static final Duration LONG = Duration.ofSeconds(60);

    private final MemoryStacks stacks = new MemoryStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private RdsStack open(final String name, final Threading threading)
    {
        return stacks.open(stacks.config(name).toBuilder().threading(threading).build());
    }

    private static ByteBuffer payload(final int i)
    {
        return ByteBuffer.wrap(new byte[] {(byte)i, (byte)(i + 1), (byte)(i + 2)});
    }

    /** Three messages from A to B while the network between them is cut: queued, not acked. */
    private RdsSocket queuedBehindACut(final RdsStack a, final RdsSocket sb) throws Exception
    {
        stacks.network().cut(A_IP, B_IP);
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 7000));
        sa.configureBlocking(false);
        for (int i = 0; i < 3; i++)
        {
            assertEquals(3, sa.send(payload(i), sb.localAddress()));
        }
        assertEquals(9, sa.sendQueuedBytes());
        return sa;
    }

    /** B has the three messages, once each, in order. */
    private static void receivedOnce(final RdsSocket sa, final RdsSocket sb) throws Exception
    {
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final ByteBuffer dst = ByteBuffer.allocate(10);
        for (int i = 0; i < 3; i++)
        {
            assertEquals(sa.localAddress(), sb.receive(dst.clear()), "message " + i);
            assertArrayEquals(payload(i).array(), java.util.Arrays.copyOf(dst.array(), dst.position()));
        }
        sb.configureBlocking(false);
        assertNull(sb.receive(dst.clear()), "no more");
    }

    /** Runs a call on a new thread; its outcome (a value or what it threw) lands in {@code outcome}. */
    private static Thread start(final String name, final AtomicReference<Object> outcome, final Call call)
    {
        final Thread thread = new Thread(() ->
        {
            try
            {
                outcome.set(call.run());
            }
            catch (final Throwable t)
            {
                outcome.set(t);
            }
        }, name);
        thread.start();
        return thread;
    }

    @FunctionalInterface
    private interface Call
    {
        Object run() throws Exception;
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void awaitDrainedReturnsTrueOnceThePeerHasAckedEverything(final Threading threading) throws Exception
    {
        final RdsStack a = open("drain-a", threading);
        final RdsSocket sb = open("drain-b", Threading.AGENT).openSocket().bind(new InetSocketAddress(B_IP, 7000));
        final RdsSocket sa = queuedBehindACut(a, sb);
        assertFalse(sa.awaitDrained(Duration.ZERO), "zero only looks");

        final AtomicReference<Object> outcome = new AtomicReference<>();
        final Thread waiter = start("drain-waiter", outcome, () -> sa.awaitDrained(LONG));
        Await.until(WAIT, () -> Await.blockedIn(waiter, "awaitDrained"), () -> "waiting: " + waiter.getState());
        assertNull(outcome.get(), "drained behind a cut");
        stacks.network().heal(A_IP, B_IP);
        waiter.join(WAIT.toMillis());
        assertEquals(Boolean.TRUE, outcome.get(), "woken by the acks, long before its timeout");
        assertEquals(0, sa.sendQueuedBytes());
        receivedOnce(sa, sb);
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void awaitDrainedReturnsFalseAtItsTimeoutWhenThePeerIsDead(final Threading threading) throws Exception
    {
        final RdsSocket sa = open("drain-a", threading).openSocket().bind(new InetSocketAddress(A_IP, 7001));
        assertTrue(sa.awaitDrained(Duration.ZERO), "nothing queued");
        assertEquals(100, sa.send(ByteBuffer.allocate(100), DEAD));
        final long start = System.nanoTime();
        assertFalse(sa.awaitDrained(Duration.ofMillis(200)));
        final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs >= 200, "returned after " + elapsedMs + " ms");
        assertEquals(100, sa.sendQueuedBytes());
        assertFalse(sa.awaitDrained(Duration.ofMillis(-1)), "negative only looks");
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void anInterruptEndsTheWaitAndACloseMakesItThrow(final Threading threading) throws Exception
    {
        final RdsSocket sa = open("drain-a", threading).openSocket().bind(new InetSocketAddress(A_IP, 7002));
        assertEquals(100, sa.send(ByteBuffer.allocate(100), DEAD));

        final AtomicReference<Object> interrupted = new AtomicReference<>();
        final Thread first = start("drain-interrupted", interrupted,
            () -> sa.awaitDrained(LONG) + " " + Thread.currentThread().isInterrupted());
        Await.until(WAIT, () -> Await.blockedIn(first, "awaitDrained"), () -> "waiting: " + first.getState());
        first.interrupt();
        first.join(WAIT.toMillis());
        assertEquals("false true", interrupted.get(), "not drained, interrupt status left set");

        final AtomicReference<Object> closed = new AtomicReference<>();
        final Thread second = start("drain-closed", closed, () -> sa.awaitDrained(LONG));
        Await.until(WAIT, () -> Await.blockedIn(second, "awaitDrained"), () -> "waiting: " + second.getState());
        sa.close();
        second.join(WAIT.toMillis());
        assertTrue(closed.get() instanceof ClosedChannelException, "outcome: " + closed.get());
        assertThrows(ClosedChannelException.class, () -> sa.awaitDrained(Duration.ZERO));
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void anAbortedClaimWakesTheWait(final Threading threading) throws Exception
    {
        final RdsSocket sa = open("drain-a", threading).openSocket().bind(new InetSocketAddress(A_IP, 7003));
        final RdsClaim claim = new RdsClaim();
        assertEquals(100, sa.tryClaim(100, DEAD, claim));
        final AtomicReference<Object> outcome = new AtomicReference<>();
        final Thread waiter = start("drain-waiter", outcome, () -> sa.awaitDrained(LONG));
        Await.until(WAIT, () -> Await.blockedIn(waiter, "awaitDrained"), () -> "waiting: " + waiter.getState());
        assertNull(outcome.get(), "a claim counts as queued");
        claim.abort();
        waiter.join(WAIT.toMillis());
        assertEquals(Boolean.TRUE, outcome.get());
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void closeWithLingerWaitsUntilThePeerHasTheMessages(final Threading threading) throws Exception
    {
        final RdsStack a = open("drain-a", threading);
        final RdsSocket sb = open("drain-b", Threading.AGENT).openSocket().bind(new InetSocketAddress(B_IP, 7000));
        final RdsSocket sa = queuedBehindACut(a, sb);
        sa.setOption(RdsOptions.SO_LINGER, (int)LONG.toSeconds());

        final AtomicReference<Object> outcome = new AtomicReference<>();
        final Thread closer = start("lingering-close", outcome, () ->
        {
            sa.close();
            return "closed";
        });
        Await.until(WAIT, () -> Await.blockedIn(closer, "awaitDrained"), () -> "lingering: " + closer.getState());
        assertTrue(sa.isOpen(), "open while it lingers");
        stacks.network().heal(A_IP, B_IP);
        closer.join(WAIT.toMillis());
        assertEquals("closed", outcome.get(), "closed once acked, long before the linger ran out");
        assertFalse(sa.isOpen());
        receivedOnce(sa, sb);
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void anInterruptEndsTheLingerAndTheCloseGoesOn(final Threading threading) throws Exception
    {
        final RdsSocket sa = open("drain-a", threading).openSocket().bind(new InetSocketAddress(A_IP, 7005));
        sa.setOption(RdsOptions.SO_LINGER, (int)LONG.toSeconds());
        assertEquals(100, sa.send(ByteBuffer.allocate(100), DEAD));
        final AtomicReference<Object> outcome = new AtomicReference<>();
        final Thread closer = start("lingering-close", outcome, () ->
        {
            sa.close();
            return "closed, interrupted " + Thread.currentThread().isInterrupted();
        });
        Await.until(WAIT, () -> Await.blockedIn(closer, "awaitDrained"), () -> "lingering: " + closer.getState());
        closer.interrupt();
        closer.join(WAIT.toMillis());
        assertEquals("closed, interrupted true", outcome.get());
        assertFalse(sa.isOpen());
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void closeWithLingerDropsWhatIsLeftWhenTheLingerRunsOut(final Threading threading) throws Exception
    {
        final RdsStack a = open("drain-a", threading);
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 7004));
        sa.setOption(RdsOptions.SO_LINGER, 1);
        assertEquals(100, sa.send(ByteBuffer.allocate(100), DEAD));
        final long start = System.nanoTime();
        sa.close();
        final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs >= 1000, "closed after " + elapsedMs + " ms");
        assertFalse(sa.isOpen());
        // the port is free at once, the message dropped by the duty cycle after close
        a.openSocket().bind(new InetSocketAddress(A_IP, 7004));
        Await.until(WAIT, () -> (threading == Threading.AGENT || a.invoke() >= 0) && sa.sendQueuedBytes() == 0,
            () -> "dropped: " + sa.sendQueuedBytes());
    }
}
