package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.TestStacks;
import org.rds4j.core.test.IdleWindow;
import org.rds4j.core.test.ThreadMeter;
import org.rds4j.core.test.ThreadWakeUps;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An idle stack uses almost no CPU: its agent sleeps until its next timer (heartbeat, info file snapshot) instead
 * of spinning, yielding or waking every millisecond, and still takes work handed to it at once. Two measures over
 * an idle window ({@link IdleWindow}), each catching what the other cannot: the CPU time of the stack's threads and
 * the agent's wake-ups. A control test runs a yielding agent and sees the CPU bound fail.
 */
class IdleAgentTest
{
    private static final int TCP_PORT = 27900;
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration IDLE_WINDOW = Duration.ofSeconds(2);
    /**
     * The most of one core an idle stack's threads may use: well below a core (a spinning or yielding agent
     * takes nearly all of one), well above the ~0.1-0.3 % measured here (docs/architecture.md).
     */
    private static final double MAX_IDLE_CPU_SHARE = 0.05;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());

    @AfterEach
    void close()
    {
        stacks.close();
    }

    @Test
    void anIdleAgentUsesNoCpuAndWakesForItsTimersOnly() throws Exception
    {
        final IdleWindow.Reading idle = idleWindow(stacks.open("i1"), stacks.open("i2"), "127.0.47.1", "127.0.47.2");
        // info file snapshots every 100 ms, and the heartbeat's probe and answer every second, each followed by
        // parks that grow from 1 ms: about 35 a second here; parks of at most 1 ms made about 1000
        assertTrue(idle.agentWakeUps() < 100 * idle.seconds(), idle.toString());
        // a spinning or yielding agent wakes rarely (it never parks) but takes a whole core: the CPU bound catches it
        assertTrue(idle.cpuShare() < MAX_IDLE_CPU_SHARE, idle.toString());
    }

    /** The control: the CPU bound catches an agent that never parks. */
    @Test
    void aYieldingAgentFailsTheIdleCpuBound() throws Exception
    {
        final RdsStackConfig.Builder yielding = stacks.config("y1").toBuilder().idleStrategy("yield");
        final IdleWindow.Reading idle = idleWindow(
            stacks.open(yielding.build()), stacks.open(yielding.name("y2").build()), "127.0.47.21", "127.0.47.22");
        assertTrue(idle.cpuShare() > MAX_IDLE_CPU_SHARE, idle.toString());
    }

    /**
     * Threads blocked in {@code receive} drive the stack themselves (one leads, the others park until woken), so
     * an idle stack with many of them must stay as quiet as one whose agent waits alone: a follower that checked
     * every millisecond whether to lead would wake a thousand times a second, each.
     */
    @Test
    void threadsBlockedInReceiveLeaveAnIdleStackIdle() throws Exception
    {
        final Pair p = pair("bla", "127.0.47.31", "blb", "127.0.47.32");
        assertEquals(3, p.sb.send(ByteBuffer.wrap(new byte[3]), p.sa.localAddress()));
        assertEquals(p.sb.localAddress(), p.sa.receive(ByteBuffer.allocate(8)));
        final Thread[] receivers = new Thread[8];
        for (int i = 0; i < receivers.length; i++)
        {
            final RdsSocket socket = i == 0 ? p.sa : bound(p.a, "127.0.47.31", 4001 + i);
            receivers[i] = new Thread(() ->
            {
                try
                {
                    socket.receive(ByteBuffer.allocate(8));
                }
                catch (final IOException ignored)
                {
                    // closed at the end of the test
                }
            }, "bl-rx-" + i);
            receivers[i].start();
        }
        for (final Thread receiver : receivers)
        {
            Await.until(WAIT, () -> Await.blockedIn(receiver, "receiveBlocking"), () -> receiver + " blocked");
        }
        Await.until(WAIT, () -> unacked(p.a) == 0 && unacked(p.b) == 0, () -> "acked");
        final ThreadMeter threads = ThreadMeter.ofStacks("bla").and(receivers);
        final ThreadWakeUps[] wakeUps = new ThreadWakeUps[receivers.length + 1];
        wakeUps[0] = ThreadWakeUps.of("rds4j-agent-bla");
        for (int i = 0; i < receivers.length; i++)
        {
            wakeUps[i + 1] = ThreadWakeUps.of("bl-rx-" + i);
        }
        final long wakeUpsBefore = Arrays.stream(wakeUps).mapToLong(ThreadWakeUps::count).sum();
        final long cpuBefore = threads.cpuNs();
        final long start = System.nanoTime();
        Thread.sleep(IDLE_WINDOW.toMillis()); // the measurement window
        final double seconds = (System.nanoTime() - start) / 1e9;
        final long woke = Arrays.stream(wakeUps).mapToLong(ThreadWakeUps::count).sum() - wakeUpsBefore;
        final double cpuShare = (threads.cpuNs() - cpuBefore) / 1e9 / seconds;
        final String figures = String.format("8 threads blocked in receive on an idle stack over %.2f s: they and " +
            "the agent woke %d times and used %.2f%% of a core", seconds, woke, 100 * cpuShare);
        System.out.println(figures);
        assertTrue(woke < 100 * seconds, figures);
        assertTrue(cpuShare < MAX_IDLE_CPU_SHARE, figures);
    }

    /**
     * One thread serving 64 idle sockets through a selector leads the duty cycle while it waits, as a thread blocked
     * in {@code receive} does: it idles in the TCP selector until a timer is due, so the process stays as quiet as
     * an idle agent, and a message still wakes it at once.
     */
    @Test
    void aSelectorServing64IdleSocketsLeavesAnIdleStackIdle() throws Exception
    {
        final Pair p = pair("sla", "127.0.47.41", "slb", "127.0.47.42");
        assertEquals(3, p.sb.send(ByteBuffer.wrap(new byte[3]), p.sa.localAddress()));
        assertEquals(p.sb.localAddress(), p.sa.receive(ByteBuffer.allocate(8)));
        final RdsSelector selector = p.a.openSelector();
        final RdsSocket[] sockets = new RdsSocket[64];
        for (int i = 0; i < sockets.length; i++)
        {
            sockets[i] = i == 0 ? p.sa : bound(p.a, "127.0.47.41", 4001 + i);
            selector.register(sockets[i], RdsSelector.OP_READ, i);
        }
        final AtomicInteger selected = new AtomicInteger(-1);
        final Thread serving = new Thread(() -> selected.set(selector.select()), "sel-serve");
        serving.start();
        Await.until(WAIT, () -> Await.blockedIn(serving, "selectWaiting"), () -> "select blocked");
        Await.until(WAIT, () -> unacked(p.a) == 0 && unacked(p.b) == 0, () -> "acked");
        final ThreadMeter threads = ThreadMeter.ofStacks("sla").and(serving);
        final ThreadWakeUps agent = ThreadWakeUps.of("rds4j-agent-sla");
        final ThreadWakeUps server = ThreadWakeUps.of("sel-serve");
        final long wakeUpsBefore = agent.count() + server.count();
        final long cpuBefore = threads.cpuNs();
        final long start = System.nanoTime();
        Thread.sleep(IDLE_WINDOW.toMillis()); // the measurement window
        final double seconds = (System.nanoTime() - start) / 1e9;
        final long woke = agent.count() + server.count() - wakeUpsBefore;
        final double cpuShare = (threads.cpuNs() - cpuBefore) / 1e9 / seconds;
        final String figures = String.format("a select on 64 idle sockets over %.2f s: it and the agent woke %d " +
            "times and used %.2f%% of a core", seconds, woke, 100 * cpuShare);
        System.out.println(figures);
        assertEquals(-1, selected.get(), "nothing was ready");
        assertTrue(woke < 100 * seconds, figures);
        assertTrue(cpuShare < MAX_IDLE_CPU_SHARE, figures);

        assertEquals(1, p.sb.send(ByteBuffer.wrap(new byte[1]), sockets[63].localAddress()));
        serving.join(WAIT.toMillis());
        assertEquals(1, selected.get());
        assertEquals(63, selector.selectedKeys().iterator().next().attachment());
    }

    @Test
    void workHandedToASleepingAgentGoesAtOnce() throws Exception
    {
        final Pair p = pair("sleep-a", "127.0.47.11", "sleep-b", "127.0.47.12");
        final RdsSocket sa = p.sa;
        final RdsSocket sb = p.sb;
        sa.configureBlocking(false);
        final ByteBuffer in = ByteBuffer.allocate(8);
        final long[] latenciesNs = new long[10];
        for (int i = 0; i < latenciesNs.length; i++)
        {
            // idle past the agents' yield phase, into parks that only timers, I/O and wakes end
            final long idleUntil = System.nanoTime() + 150_000_000L;
            Await.until(WAIT, () -> System.nanoTime() - idleUntil > 0, () -> "idle");
            final long sentAt = System.nanoTime();
            assertEquals(1, sa.send(ByteBuffer.wrap(new byte[] {(byte)i}), sb.localAddress()));
            in.clear();
            assertEquals(sa.localAddress(), sb.receive(in));
            latenciesNs[i] = System.nanoTime() - sentAt;
            assertEquals(i, in.get(0));
        }
        Arrays.sort(latenciesNs);
        final long medianMs = latenciesNs[latenciesNs.length / 2] / 1_000_000;
        System.out.println("send to a sleeping agent, received after (ms): " + Arrays.toString(
            Arrays.stream(latenciesNs).map(ns -> ns / 1_000_000).toArray()));
        // a missed wake-up would leave the message until the park's end, up to 100 ms
        assertTrue(medianMs < 20, "median " + medianMs + " ms from send to receive");
    }

    /**
     * Exchanges one message between a socket on each stack, waits until both ends have acked, then measures the
     * first stack over {@link #IDLE_WINDOW}.
     */
    private IdleWindow.Reading idleWindow(final RdsStack a, final RdsStack b, final String ipA, final String ipB)
        throws Exception
    {
        final RdsSocket sa = bound(a, ipA);
        final RdsSocket sb = bound(b, ipB);
        assertEquals(3, sa.send(ByteBuffer.wrap(new byte[3]), sb.localAddress()));
        assertEquals(sa.localAddress(), sb.receive(ByteBuffer.allocate(8)));
        // both ends acked: the connection is up with nothing queued, so only timers are left
        Await.until(WAIT, () -> sa.sendQueuedBytes() == 0 && unacked(a) == 0 && unacked(b) == 0, () -> "acked");
        return IdleWindow.measure(IDLE_WINDOW, a.config().name()).get(0);
    }

    private record Pair(RdsStack a, RdsStack b, RdsSocket sa, RdsSocket sb)
    {
    }

    /** @return two stacks, each with a socket bound to port 4000 of its address. */
    private Pair pair(final String nameA, final String ipA, final String nameB, final String ipB) throws IOException
    {
        final RdsStack a = stacks.open(nameA);
        final RdsStack b = stacks.open(nameB);
        return new Pair(a, b, bound(a, ipA), bound(b, ipB));
    }

    private static RdsSocket bound(final RdsStack stack, final String ip) throws IOException
    {
        return bound(stack, ip, 4000);
    }

    private static RdsSocket bound(final RdsStack stack, final String ip, final int port) throws IOException
    {
        final RdsSocket socket = stack.openSocket();
        socket.bind(new InetSocketAddress(InetAddress.getByName(ip), port));
        socket.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        return socket;
    }

    private static long unacked(final RdsStack stack)
    {
        return stack.connections().stream().mapToLong(RdsStack.ConnectionInfo::unacked).sum();
    }
}
