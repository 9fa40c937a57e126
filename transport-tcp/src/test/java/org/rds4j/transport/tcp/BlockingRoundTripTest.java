package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.TestStacks;
import org.rds4j.core.test.ThreadMeter;

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
    private static final int ROUND_TRIPS = 5_000;
    /**
     * Of the run's wall time, the most the two agents' CPU time may be: they wake every millisecond to see
     * whether the application still drives the stack, and otherwise sleep (about 1 % measured here).
     */
    private static final double MAX_AGENT_CPU_SHARE = 0.1;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());

    @AfterEach
    void close()
    {
        stacks.close();
    }

    @Test
    void theAgentsTakeNoPartInABlockingRoundTrip() throws Exception
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
                    final InetSocketAddress from = s.receive(buffer);
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
        roundTrips(c, s.localAddress(), ping, pong, 0, WARM_UP);
        final ThreadMeter agents = ThreadMeter.ofStacks("rta", "rtb");
        final long agentsCpuBefore = agents.cpuNs();
        final long startNs = System.nanoTime();
        roundTrips(c, s.localAddress(), ping, pong, WARM_UP, ROUND_TRIPS);
        final long tookNs = System.nanoTime() - startNs;
        final double agentShare = (agents.cpuNs() - agentsCpuBefore) / (double)tookNs;
        echo.join(10_000);
        assertNull(serverFailure.get());
        final String figures = String.format("%d round trips in %d ms; the agents' CPU time: %.1f %% of that",
            ROUND_TRIPS, tookNs / 1_000_000, 100 * agentShare);
        System.out.println(figures);
        assertTrue(agentShare < MAX_AGENT_CPU_SHARE, figures);
    }

    private static void roundTrips(
        final RdsSocket c, final InetSocketAddress server, final ByteBuffer ping, final ByteBuffer pong, final int first,
        final int count) throws Exception
    {
        for (int i = first; i < first + count; i++)
        {
            ping.clear().putLong(0, i);
            assertEquals(64, c.send(ping, server));
            pong.clear();
            assertEquals(server, c.receive(pong));
            assertEquals(i, pong.getLong(0), "the echo of request " + i);
        }
    }
}
