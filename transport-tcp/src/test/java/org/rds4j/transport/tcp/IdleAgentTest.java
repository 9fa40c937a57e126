package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.TestStacks;
import org.rds4j.core.test.ThreadWakeUps;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An idle stack's agent sleeps until its next timer (heartbeat, info file snapshot) instead of waking every
 * millisecond, and still takes work handed to it at once. Counts the agent thread's voluntary context switches
 * (Linux {@code /proc}): each wake-up from a park is one.
 */
class IdleAgentTest
{
    private static final int TCP_PORT = 27900;
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final TestStacks stacks = new TestStacks(TCP_PORT);

    @AfterEach
    void close()
    {
        stacks.close();
    }

    @Test
    void anIdleAgentWakesForItsTimersOnly() throws Exception
    {
        final Pair p = pair("i1", "127.0.47.1", "i2", "127.0.47.2");
        assertEquals(3, p.sa.send(ByteBuffer.wrap(new byte[3]), p.sb.localAddress()));
        assertEquals(p.sa.localAddress(), p.sb.receive(ByteBuffer.allocate(8)));
        // both ends acked: the connection is up with nothing queued, so only timers are left
        Await.until(WAIT, () -> p.sa.sendQueuedBytes() == 0 && unacked(p.a) == 0 && unacked(p.b) == 0, () -> "acked");

        final ThreadWakeUps agent = ThreadWakeUps.of("rds4j-agent-i1");
        final long wakeUpsBefore = agent.count();
        final long start = System.nanoTime();
        final long until = start + 2_000_000_000L; // a measurement window
        Await.until(WAIT, () -> System.nanoTime() - until > 0, () -> "the window");
        final long wakeUps = agent.count() - wakeUpsBefore;
        final double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("idle agent: %d wake-ups in %.2f s%n", wakeUps, seconds);
        // info file snapshots every 100 ms, and the heartbeat's probe and answer every second, each followed by
        // parks that grow from 1 ms: about 35 a second here; parks of at most 1 ms made about 1000
        assertTrue(wakeUps < 100 * seconds, wakeUps + " wake-ups in " + seconds + " s");
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
            // idle past the agents' spin and yield phases, into parks that only timers, I/O and wakes end
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
        final RdsSocket socket = stack.openSocket();
        socket.bind(new InetSocketAddress(InetAddress.getByName(ip), 4000));
        socket.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        return socket;
    }

    private static long unacked(final RdsStack stack)
    {
        return stack.connections().stream().mapToLong(RdsStack.ConnectionInfo::unacked).sum();
    }
}
