package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.TestStacks;
import org.rds4j.core.test.ThreadMeter;
import org.rds4j.core.test.ThreadWakeUps;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * In the default configuration (AGENT threading, blocking calls) a thread blocked in {@code receive} reads the
 * network itself and a blocking {@code send} writes in the calling thread, so the agent threads have no part in a
 * blocking round trip: they stand aside, parked, while the application threads drive the stack. Measured by
 * the agents' CPU time ({@link ThreadMeter}) against the run's wall time. Before, every request and every reply
 * went through both stacks' agents, which took 60-90 % of a core each here, spinning and yielding between
 * hand-offs.
 */
class BlockingRoundTripTest
{
    private static final int TCP_PORT = 27930;
    private static final int WARM_UP = 2_000;
    private static final int ROUND_TRIPS = 50_000;
    private static final int STREAM = 200_000;
    /**
     * Of the run's wall time, the most the two agents' CPU time may be: they wake once a stand-by period to see
     * whether the application still drives the stack, and otherwise sleep (about 1 % measured here).
     */
    private static final double MAX_AGENT_CPU_SHARE = 0.1;
    /**
     * The most each agent may wake per millisecond of round trips: the stand-by period grows to 32 ms while calls
     * keep ending (1, 2, 4, ... 32 ms), so about 0.03; a look every millisecond, which preempted the looping
     * threads often enough to take the round trip's p99 from about 25 to 120 us, comes to about 1.
     */
    private static final double MAX_AGENT_WAKE_UPS_PER_MS = 0.08;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());

    @AfterEach
    void close()
    {
        stacks.close();
    }

    /**
     * Each side either waits in {@code receive} at once, or first looks with {@code poll} and waits only if that found
     * nothing (as {@code rds stress} does): an empty look must not wake an agent that stands by for the waits.
     */
    @ParameterizedTest(name = "look with poll first: {0}")
    @ValueSource(booleans = {false, true})
    void theAgentsTakeNoPartInABlockingRoundTrip(final boolean lookFirst) throws Exception
    {
        final RdsStack client = stacks.open("rta");
        final RdsStack server = stacks.open("rtb");
        final RdsSocket c = client.openSocket().bind(new InetSocketAddress("127.0.48.1", 4000));
        final RdsSocket s = server.openSocket().bind(new InetSocketAddress("127.0.48.2", 4000));
        final AtomicReference<Throwable> serverFailure = new AtomicReference<>();
        final Thread echo = new Thread(() ->
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(64);
            try
            {
                for (int i = 0; i < WARM_UP + ROUND_TRIPS; i++)
                {
                    buffer.clear();
                    final InetSocketAddress from = receive(s, buffer, lookFirst);
                    buffer.flip();
                    s.send(buffer, from);
                }
            }
            catch (final Throwable t)
            {
                serverFailure.set(t);
            }
        }, "rt-echo");
        echo.start();

        final ByteBuffer ping = ByteBuffer.allocateDirect(64);
        final ByteBuffer pong = ByteBuffer.allocateDirect(64);
        roundTrips(c, s.localAddress(), ping, pong, 0, WARM_UP, lookFirst);
        final ThreadMeter agents = ThreadMeter.ofStacks("rta", "rtb");
        final ThreadWakeUps clientAgent = ThreadWakeUps.of("rds4j-agent-rta");
        final ThreadWakeUps serverAgent = ThreadWakeUps.of("rds4j-agent-rtb");
        final long agentsCpuBefore = agents.cpuNs();
        final long wakeUpsBefore = clientAgent.count() + serverAgent.count();
        final long startNs = System.nanoTime();
        roundTrips(c, s.localAddress(), ping, pong, WARM_UP, ROUND_TRIPS, lookFirst);
        final long tookNs = System.nanoTime() - startNs;
        final double agentShare = (agents.cpuNs() - agentsCpuBefore) / (double)tookNs;
        final long wakeUps = clientAgent.count() + serverAgent.count() - wakeUpsBefore;
        echo.join(10_000);
        assertNull(serverFailure.get());
        final double tookMs = tookNs / 1e6;
        final String figures = String.format(
            "%d round trips in %.0f ms; the agents' CPU time: %.1f %% of that; they woke %d times (%.2f per ms each)",
            ROUND_TRIPS, tookMs, 100 * agentShare, wakeUps, wakeUps / tookMs / 2);
        System.out.println(figures);
        assertTrue(agentShare < MAX_AGENT_CPU_SHARE, figures);
        assertTrue(wakeUps / tookMs / 2 < MAX_AGENT_WAKE_UPS_PER_MS, figures);
    }

    /**
     * While a thread waits in {@code receive}, it drives the stack and the agent sleeps: messages another thread
     * streams meanwhile are written by the waiting thread (woken through the selector when it idles there), and
     * the sleeping agent is not woken for each of them only to find that thread leading.
     */
    @Test
    void aStreamSentWhileAThreadWaitsInReceiveLeavesTheAgentAsleep() throws Exception
    {
        final RdsStack sender = stacks.open("rtc");
        final RdsStack sink = stacks.open("rtd");
        final RdsSocket waiting = sender.openSocket().bind(new InetSocketAddress("127.0.48.3", 4000));
        final RdsSocket tx = sender.openSocket().bind(new InetSocketAddress("127.0.48.3", 4001));
        final RdsSocket rx = sink.openSocket().bind(new InetSocketAddress("127.0.48.4", 4000));
        final Thread waiter = new Thread(() ->
        {
            try
            {
                waiting.receive(ByteBuffer.allocate(8)); // nothing comes: it waits until the socket closes
            }
            catch (final Exception ignored)
            {
                // closed at the end of the test
            }
        }, "rt-waiter");
        waiter.start();
        final Thread drain = new Thread(() ->
        {
            final ByteBuffer in = ByteBuffer.allocate(64);
            try
            {
                for (int i = 0; i < WARM_UP + STREAM; i++)
                {
                    rx.receive(in.clear());
                }
            }
            catch (final Exception ignored)
            {
                // closed at the end of the test
            }
        }, "rt-drain");
        drain.start();
        final ByteBuffer payload = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < WARM_UP; i++)
        {
            assertEquals(64, tx.send(payload.clear(), rx.localAddress()));
        }
        final ThreadWakeUps agent = ThreadWakeUps.of("rds4j-agent-rtc");
        final long before = agent.count();
        for (int i = 0; i < STREAM; i++)
        {
            assertEquals(64, tx.send(payload.clear(), rx.localAddress()));
        }
        final long wakeUps = agent.count() - before;
        drain.join(10_000);
        waiting.close();
        waiter.join(10_000);
        System.out.println(STREAM + " messages streamed while a thread waited in receive: the agent woke " + wakeUps +
            " times");
        assertTrue(wakeUps < STREAM / 100, wakeUps + " agent wake-ups for " + STREAM + " messages");
    }

    private static void roundTrips(
        final RdsSocket c, final InetSocketAddress server, final ByteBuffer ping, final ByteBuffer pong, final int first,
        final int count, final boolean lookFirst) throws Exception
    {
        for (int i = first; i < first + count; i++)
        {
            ping.clear().putLong(0, i);
            assertEquals(64, c.send(ping, server));
            pong.clear();
            assertEquals(server, receive(c, pong, lookFirst));
            assertEquals(i, pong.getLong(0), "the echo of request " + i);
        }
    }

    /** A message into {@code dst} (flipped by the caller), with a look by {@code poll} first if {@code lookFirst}. */
    private static InetSocketAddress receive(final RdsSocket socket, final ByteBuffer dst, final boolean lookFirst)
        throws IOException
    {
        if (lookFirst)
        {
            final InetSocketAddress[] from = new InetSocketAddress[1];
            if (socket.poll((sender, payload) ->
            {
                from[0] = sender;
                dst.put(payload);
            }, 1) == 1)
            {
                return from[0];
            }
        }
        return socket.receive(dst);
    }
}
