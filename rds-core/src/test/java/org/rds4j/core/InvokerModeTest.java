package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.Threading;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.FixtureTest;
import org.rds4j.core.test.ThreadWakeUps;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * {@link Threading#INVOKER}: stacks with no agent thread, driven by {@link RdsStack#invoke()} loops and by
 * the calls that wait. Stacks use 127.0.30.x; 127.0.30.99 is a dead peer (no stack has it). They run on a
 * {@link org.rds4j.core.test.MemoryNetwork}; {@code TcpInvokerModeTest} runs the same tests over TCP, whose
 * idle wait is a selector that only the thread leading the duty cycle may use.
 */
public class InvokerModeTest extends FixtureTest
{
    private static final InetAddress A_IP = ip("127.0.30.1");
    private static final InetAddress B_IP = ip("127.0.30.2");
    private static final InetSocketAddress DEAD = new InetSocketAddress(ip("127.0.30.99"), 7000);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private RdsStack invoker(final String name)
    {
        return stacks.open(stacks.config(name).toBuilder().threading(Threading.INVOKER).build());
    }

    private static RdsSocket bound(final RdsStack stack, final InetAddress ip, final int port) throws Exception
    {
        return stack.openSocket().bind(new InetSocketAddress(ip, port));
    }

    private static ByteBuffer message(final int size, final long seq)
    {
        final ByteBuffer b = ByteBuffer.allocate(size);
        b.putLong(0, seq);
        return b;
    }

    /** Whether a thread is inside a given method of the stack (it is waiting there: it may be running). */
    private static boolean inside(final Thread thread, final String method)
    {
        return Arrays.stream(thread.getStackTrace()).anyMatch(e -> e.getMethodName().equals(method));
    }

    private static Thread start(final String name, final ThrowingRunnable body, final AtomicReference<Throwable> failure)
    {
        final Thread thread = new Thread(() ->
        {
            try
            {
                body.run();
            }
            catch (final Throwable t)
            {
                failure.compareAndSet(null, t);
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private interface ThrowingRunnable
    {
        void run() throws Exception;
    }

    private static void join(final Thread thread, final AtomicReference<Throwable> failure) throws Exception
    {
        thread.join(WAIT.toMillis());
        if (failure.get() != null)
        {
            throw new AssertionError(thread.getName() + " failed", failure.get());
        }
        assertTrue(!thread.isAlive(), thread.getName() + " did not finish");
    }

    // ---------------------------------------------------------------- API

    @Test
    void defaultIsAgentAndInvokeOnAnAgentStackThrows()
    {
        assertEquals(Threading.AGENT, RdsStackConfig.defaults().threading());
        final RdsStack agent = stacks.open("inv-agent");
        final IllegalStateException ex = assertThrows(IllegalStateException.class, agent::invoke);
        assertTrue(ex.getMessage().contains("Threading.INVOKER"), ex.getMessage());
    }

    @Test
    void invokerStackStartsNoThreadAndInvokeReturnsZeroAfterClose()
    {
        final RdsStack stack = invoker("inv-nothread");
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals("rds4j-agent-inv-nothread")),
            "an INVOKER stack must not start an agent thread");
        assertTrue(stack.invoke() >= 0);
        stack.close();
        assertEquals(0, stack.invoke());
        assertEquals(0, stack.connections().size());
    }

    // ---------------------------------------------------------------- message exchange

    @Test
    void twoInvokerStacksExchangeInOrderWithInvokeLoops() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsStack b = invoker("inv-b");
        final RdsSocket sa = bound(a, A_IP, 100).configureBlocking(false);
        final RdsSocket sb = bound(b, B_IP, 101).configureBlocking(false);
        final int count = 20_000;
        final long[] expected = {0};
        final AtomicInteger errors = new AtomicInteger();
        final RdsMessageHandler handler = (from, payload) ->
        {
            if (payload.getLong(payload.position()) != expected[0]++ || !from.equals(sa.localAddress()))
            {
                errors.incrementAndGet();
            }
        };
        final ByteBuffer out = ByteBuffer.allocate(64);
        long sent = 0;
        final long deadline = System.nanoTime() + WAIT.toNanos();
        // one thread drives both stacks, as a polling application drives its own
        while (expected[0] < count)
        {
            assertTrue(System.nanoTime() < deadline, "received " + expected[0] + " of " + count);
            while (sent < count)
            {
                out.clear().putLong(0, sent);
                final int r = sa.send(out, sb.localAddress());
                if (r < 0)
                {
                    assertTrue(r == RdsResult.EAGAIN || r == RdsResult.ENOBUFS, RdsResult.name(r));
                    break;
                }
                sent++;
            }
            a.invoke();
            b.invoke();
            sb.poll(handler, 256);
        }
        assertEquals(0, errors.get());
        assertEquals(count, b.counters().get("recv_delivered"));
        // the last acks arrive with more duty cycles
        Await.until(WAIT, () -> a.invoke() + b.invoke() >= 0 && sa.sendQueuedBytes() == 0, () -> "acked: " + sa.sendQueuedBytes());
    }

    @Test
    void blockingSendAndReceiveDriveTwoInvokerStacksWithNobodyInvoking() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsStack b = invoker("inv-b");
        pingPong(bound(a, A_IP, 110), bound(b, B_IP, 111), 2_000);
    }

    @Test
    void invokerStackTalksToAgentStack() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsStack b = stacks.open("agent-b");
        pingPong(bound(a, A_IP, 120), bound(b, B_IP, 121), 2_000);
        // and the other way round: the agent stack's socket pings
        pingPong(bound(b, B_IP, 122), bound(a, A_IP, 123), 2_000);
    }

    /** Blocking ping-pong: the echo thread's receive and send are its stack's only driver, and so are the pinger's. */
    private static void pingPong(final RdsSocket pinger, final RdsSocket echo, final int rounds) throws Exception
    {
        pinger.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        echo.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread echoer = start("echo", () ->
        {
            final ByteBuffer in = ByteBuffer.allocate(256);
            for (int i = 0; i < rounds; i++)
            {
                in.clear();
                final InetSocketAddress from = echo.receive(in);
                if (from == null)
                {
                    throw new AssertionError("echo: nothing received for round " + i);
                }
                in.flip();
                assertEquals(in.remaining(), echo.send(in, from));
            }
        }, failure);
        final ByteBuffer in = ByteBuffer.allocate(256);
        for (long i = 0; i < rounds; i++)
        {
            assertEquals(64, pinger.send(message(64, i), echo.localAddress()));
            in.clear();
            assertEquals(echo.localAddress(), pinger.receive(in), "round " + i);
            assertEquals(i, in.getLong(0));
        }
        join(echoer, failure);
    }

    // ---------------------------------------------------------------- calls that wait for the agent

    @Test
    void cancelSentToConnectionsAndCloseNeedNoOtherInvoker() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsSocket s = bound(a, A_IP, 130).configureBlocking(false);
        for (int i = 0; i < 5; i++)
        {
            assertEquals(100, s.send(message(100, i), DEAD));
        }
        assertEquals(500, s.sendQueuedBytes());
        // nobody has invoked: the messages are still in the socket's queue, and cancel covers them
        assertEquals(5, s.cancelSentTo(DEAD));
        assertEquals(0, s.sendQueuedBytes());
        assertEquals(5L, a.counters().get("send_cancelled"));
        assertEquals(1, a.connections().size(), "the cancel created the connection to the dead peer");
        ((CoreStack)a).dropConnections();

        // close runs the agent's shutdown on this thread: the peer sees the connection go down
        final RdsStack b = stacks.open("agent-b");
        final RdsSocket sb = bound(b, B_IP, 131);
        final RdsSocket sa = bound(a, A_IP, 132);
        sa.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        sb.send(message(8, 1), sa.localAddress());
        assertEquals(sb.localAddress(), sa.receive(ByteBuffer.allocate(8)));
        Await.until(WAIT, () -> b.counters().get("conn_up") >= 1, () -> "b's connection up");
        a.close();
        Await.until(WAIT, () -> b.counters().get("conn_reset") >= 1, () -> "b saw a's connection go down");
        assertEquals(0, a.connections().size());
        assertTrue(!s.isOpen() && !sa.isOpen());
    }

    // ---------------------------------------------------------------- timeouts and interrupts

    @Test
    void blockingReceiveTimesOutAndIsInterruptedAsInAgentMode() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsSocket s = bound(a, A_IP, 140);
        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(200));
        final long start = System.nanoTime();
        assertNull(s.receive(ByteBuffer.allocate(10)));
        final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs >= 200 && elapsedMs < 5_000, "returned after " + elapsedMs + " ms");

        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ZERO);
        final AtomicReference<Object> result = new AtomicReference<>("not returned");
        final AtomicBoolean interruptedAfter = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread receiver = start("blocked-receiver", () ->
        {
            result.set(s.receive(ByteBuffer.allocate(10)));
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        }, failure);
        Await.until(WAIT, () -> inside(receiver, "receiveBlocking"), () -> "receiver waiting");
        receiver.interrupt();
        join(receiver, failure);
        assertNull(result.get());
        assertTrue(interruptedAfter.get(), "interrupt status must stay set");

        // the interrupt closed nothing (the selector and channels survive an interrupted duty cycle)
        final RdsStack b = stacks.open("agent-b");
        final RdsSocket sb = bound(b, B_IP, 141);
        s.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(8, sb.send(message(8, 7), s.localAddress()));
        assertEquals(sb.localAddress(), s.receive(ByteBuffer.allocate(8)));
    }

    /**
     * An idle stack's waits last until its next timer, up to 100 ms; a blocking call idling in one must still
     * return at its own timeout. No info file and no connection: nothing else would end the wait early.
     */
    @Test
    void anIdleWaitEndsAtTheBlockingCallsTimeout() throws Exception
    {
        final RdsStack a = stacks.open(stacks.config("inv-a").toBuilder().threading(Threading.INVOKER).infoFile(false).build());
        final RdsSocket s = bound(a, A_IP, 145);
        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(20));
        final long[] elapsedMs = new long[7];
        for (int i = 0; i < elapsedMs.length; i++)
        {
            final long start = System.nanoTime();
            assertNull(s.receive(ByteBuffer.allocate(10)));
            elapsedMs[i] = (System.nanoTime() - start) / 1_000_000;
        }
        Arrays.sort(elapsedMs);
        assertTrue(elapsedMs[0] >= 20, "a timeout came early: " + Arrays.toString(elapsedMs));
        assertTrue(elapsedMs[elapsedMs.length / 2] < 60, "median past the 20 ms timeout: " + Arrays.toString(elapsedMs));
    }

    @Test
    void blockingSendTimesOutAndIsInterruptedAsInAgentMode() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsSocket s = bound(a, A_IP, 150);
        s.setOption(RdsOptions.SO_SNDBUF, 1000);
        for (int i = 0; i < 10; i++)
        {
            assertEquals(100, s.send(message(100, i), DEAD));
        }
        s.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofMillis(200));
        final long start = System.nanoTime();
        final ByteBuffer src = message(100, 10);
        assertEquals(RdsResult.ETIMEDOUT, s.send(src, DEAD));
        final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs >= 200 && elapsedMs < 5_000, "returned after " + elapsedMs + " ms");
        assertEquals(0, src.position());
        assertEquals(1000, s.sendQueuedBytes());

        s.setOption(RdsOptions.SO_SNDTIMEO, Duration.ZERO);
        final AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
        final AtomicBoolean interruptedAfter = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread sender = start("blocked-sender", () ->
        {
            result.set(s.send(message(100, 11), DEAD));
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        }, failure);
        Await.until(WAIT, () -> inside(sender, "sendBlocking"), () -> "sender waiting");
        sender.interrupt();
        join(sender, failure);
        assertEquals(RdsResult.EINTR, result.get());
        assertTrue(interruptedAfter.get(), "interrupt status must stay set");
        assertEquals(1000, s.sendQueuedBytes());
    }

    @Test
    void closeEndsBlockedCallsOnOtherThreads() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsSocket s = bound(a, A_IP, 160);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicReference<Throwable> outcome = new AtomicReference<>();
        final Thread receiver = start("blocked-receiver", () ->
        {
            try
            {
                s.receive(ByteBuffer.allocate(10));
            }
            catch (final java.nio.channels.ClosedChannelException ex)
            {
                outcome.set(ex);
            }
        }, failure);
        Await.until(WAIT, () -> inside(receiver, "receiveBlocking"), () -> "receiver waiting");
        a.close();
        join(receiver, failure);
        assertTrue(outcome.get() instanceof java.nio.channels.ClosedChannelException, String.valueOf(outcome.get()));
    }

    // ---------------------------------------------------------------- several threads

    @Test
    void twoThreadsBlockedOnOneInvokerStackBothProgress() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsStack b = invoker("inv-b");
        final RdsSocket sa = bound(a, A_IP, 170);
        final RdsSocket[] receivers = {bound(b, B_IP, 171), bound(b, B_IP, 172)};
        final int perReceiver = 3_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicInteger[] received = {new AtomicInteger(), new AtomicInteger()};
        final Thread[] threads = new Thread[2];
        for (int r = 0; r < 2; r++)
        {
            final int index = r;
            receivers[r].setOption(RdsOptions.SO_RCVTIMEO, WAIT);
            threads[r] = start("receiver-" + r, () ->
            {
                final ByteBuffer in = ByteBuffer.allocate(64);
                for (long i = 0; i < perReceiver; i++)
                {
                    in.clear();
                    if (receivers[index].receive(in) == null)
                    {
                        throw new AssertionError("receiver " + index + ": nothing within " + WAIT + " after " + i);
                    }
                    assertEquals(i, in.getLong(0), "receiver " + index);
                    received[index].incrementAndGet();
                }
            }, failure);
        }
        // blocking sends only queue; this thread drives a with invoke() until both receivers have everything
        for (long i = 0; i < perReceiver; i++)
        {
            for (final RdsSocket receiver : receivers)
            {
                assertEquals(64, sa.send(message(64, i), receiver.localAddress()));
            }
            a.invoke();
        }
        Await.until(WAIT, () -> a.invoke() >= 0 && received[0].get() == perReceiver && received[1].get() == perReceiver,
            () -> "received " + received[0] + " and " + received[1] + "; " + failure.get());
        join(threads[0], failure);
        join(threads[1], failure);
    }

    /**
     * Threads blocked on an idle INVOKER stack: one leads (idling in the stack's wait), the others park until
     * woken. A follower that came back every millisecond to try to lead would wake a thousand times a second.
     */
    @Test
    void threadsBlockedOnAnIdleInvokerStackDoNotWakeEachMillisecond() throws Exception
    {
        final RdsStack a = stacks.open(stacks.config("inv-a").toBuilder().threading(Threading.INVOKER).infoFile(false).build());
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread[] receivers = new Thread[8];
        final ThreadWakeUps[] wakeUps = new ThreadWakeUps[receivers.length];
        for (int i = 0; i < receivers.length; i++)
        {
            final RdsSocket socket = bound(a, A_IP, 200 + i);
            receivers[i] = start("idle-rx-" + i, () -> socket.receive(ByteBuffer.allocate(8)), failure);
        }
        for (int i = 0; i < receivers.length; i++)
        {
            final Thread receiver = receivers[i];
            Await.until(WAIT, () -> inside(receiver, "receiveBlocking"), () -> receiver + " waiting");
            wakeUps[i] = ThreadWakeUps.of(receiver.getName());
        }
        final long before = Arrays.stream(wakeUps).mapToLong(ThreadWakeUps::count).sum();
        final long start = System.nanoTime();
        final long until = start + 1_000_000_000L;
        Await.until(WAIT, () -> System.nanoTime() - until > 0, () -> "measurement");
        final double seconds = (System.nanoTime() - start) / 1e9;
        final long woke = Arrays.stream(wakeUps).mapToLong(ThreadWakeUps::count).sum() - before;
        System.out.printf("8 threads blocked on an idle INVOKER stack woke %d times in %.2f s%n", woke, seconds);
        assertTrue(woke < 100 * seconds, "woke " + woke + " times in " + seconds + " s");
        a.close();
        for (final Thread receiver : receivers)
        {
            join(receiver, new AtomicReference<>());
        }
    }

    /**
     * A thread that finds another running {@link RdsStack#invoke()} parks as a follower; the invoking thread
     * wakes it when its cycle ends, so it leads once the invoking stops, and still receives what comes later.
     */
    @Test
    void aFollowerParkedBehindInvokeLeadsWhenTheInvokingStops() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsStack b = stacks.open("agent-b");
        final RdsSocket sa = bound(a, A_IP, 210);
        final RdsSocket sb = bound(b, B_IP, 211);
        sa.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicReference<InetSocketAddress> from = new AtomicReference<>();
        final Thread invoking = start("invoking", () ->
        {
            final long until = System.nanoTime() + 300_000_000L;
            while (System.nanoTime() - until < 0)
            {
                a.invoke();
            }
        }, failure);
        final Thread receiver = start("receiver", () -> from.set(sa.receive(ByteBuffer.allocate(8))), failure);
        join(invoking, failure);
        assertEquals(8, sb.send(message(8, 1), sa.localAddress()));
        join(receiver, failure);
        assertEquals(sb.localAddress(), from.get());
    }

    @Test
    void reconnectsAfterDropConnectionsWithNothingLost() throws Exception
    {
        final RdsStack a = invoker("inv-a");
        final RdsStack b = invoker("inv-b");
        final RdsSocket sa = bound(a, A_IP, 180);
        final RdsSocket sb = bound(b, B_IP, 181);
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final int count = 30_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicInteger received = new AtomicInteger();
        final Thread receiver = start("receiver", () ->
        {
            final ByteBuffer in = ByteBuffer.allocate(64);
            for (long i = 0; i < count; i++)
            {
                in.clear();
                if (sb.receive(in) == null)
                {
                    throw new AssertionError("nothing within " + WAIT + " after " + i);
                }
                assertEquals(i, in.getLong(0));
                received.incrementAndGet();
            }
        }, failure);
        for (long i = 0; i < count; i++)
        {
            // a blocking send waits (and drives the stack) once the socket's queue or send buffer is full
            assertEquals(64, sa.send(message(64, i), sb.localAddress()));
            if (i % 10_000 == 9_999)
            {
                ((CoreStack)a).dropConnections();
            }
        }
        Await.until(WAIT, () -> a.invoke() >= 0 && received.get() == count, () -> "received " + received + "; " + failure.get());
        join(receiver, failure);
        assertTrue(a.counters().get("conn_reset") >= 1, "drops: " + a.counters().get("conn_reset"));
        // the receiving thread has finished: b acks only when someone drives it
        Await.until(WAIT, () -> a.invoke() + b.invoke() >= 0 && sa.sendQueuedBytes() == 0, () -> "acked: " + sa.sendQueuedBytes());
    }

    // ---------------------------------------------------------------- idle cost

    @Test
    void idleBlockedReceiverDoesNotSpin() throws Exception
    {
        final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        final RdsStack a = invoker("inv-a");
        final RdsSocket s = bound(a, A_IP, 190);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread receiver = start("idle-receiver", () -> s.receive(ByteBuffer.allocate(10)), failure);
        Await.until(WAIT, () -> inside(receiver, "receiveBlocking"), () -> "receiver waiting");
        // past the strategy's yield phase: measure the steady idle state
        final long warmUntil = System.nanoTime() + 200_000_000L;
        Await.until(WAIT, () -> System.nanoTime() - warmUntil > 0, () -> "warm-up");
        final long cpuStart = mx.getThreadCpuTime(receiver.getId());
        final long wallStart = System.nanoTime();
        final long measureUntil = wallStart + 1_000_000_000L;
        Await.until(WAIT, () -> System.nanoTime() - measureUntil > 0, () -> "measurement");
        final long cpuMs = (mx.getThreadCpuTime(receiver.getId()) - cpuStart) / 1_000_000;
        final long wallMs = (System.nanoTime() - wallStart) / 1_000_000;
        System.out.println("idle blocked INVOKER receiver: " + cpuMs + " ms CPU in " + wallMs + " ms");
        assertTrue(cpuMs < 100, "an idle blocked receiver used " + cpuMs + " ms of CPU in " + wallMs + " ms");
        s.close();
        join(receiver, new AtomicReference<>());
    }
}
