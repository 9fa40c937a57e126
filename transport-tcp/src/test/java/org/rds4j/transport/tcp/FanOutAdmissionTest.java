package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.TestStacks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * One sender socket fans out to many addresses served by one stack: each node pair connects once, which the
 * connect rate limit ({@code peerConnectRate}, per node pair) must not take for a flood, although all those
 * connections come from one remote address within a second. (With a limit per remote address, the 21st
 * address was refused for 10 s and the fan-out took 30 s.)
 * <p>
 * Addresses: the sender at 127.30.0.1, the receiving stack at 127.30.1.1 to 127.30.1.64 (the sender is lower,
 * so it connects). TCP port {@value #TCP_PORT}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FanOutAdmissionTest
{
    private static final int TCP_PORT = 28200;
    private static final int RDS_PORT = 7000;
    private static final int ADDRESSES = 64;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void oneSocketReachesSixtyFourAddressesOfOneStackAtOnce() throws IOException
    {
        final RdsStack receiving = stacks.open("fan-out-receiver");
        final List<RdsSocket> receivers = new ArrayList<>();
        for (int i = 1; i <= ADDRESSES; i++)
        {
            final RdsSocket socket = receiving.openSocket();
            socket.bind(new InetSocketAddress(ip("127.30.1." + i), RDS_PORT));
            socket.configureBlocking(false);
            receivers.add(socket);
        }
        final RdsStack sending = stacks.open("fan-out-sender");
        final RdsSocket sender = sending.openSocket();
        sender.bind(new InetSocketAddress(ip("127.30.0.1"), RDS_PORT));
        final long startedNs = System.nanoTime();
        for (int i = 1; i <= ADDRESSES; i++)
        {
            final ByteBuffer message = ByteBuffer.allocate(4).putInt(0, i);
            assertEquals(4, sender.send(message, new InetSocketAddress(ip("127.30.1." + i), RDS_PORT)), "send " + i);
        }
        final boolean[] received = new boolean[ADDRESSES];
        final ByteBuffer buffer = ByteBuffer.allocate(64);
        // the refusal took 10 s per blocked address; a fan-out that is let through takes well under 5 s
        Await.until(Duration.ofSeconds(5), () -> receiveAll(receivers, received, buffer),
            () -> "delivered to " + count(received) + " of " + ADDRESSES + " addresses; receiver counters " +
                receiving.counters());
        final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNs);
        assertEquals(0L, receiving.counters().get("conn_refused_rate"), "after " + elapsedMs + " ms");
        assertEquals(0L, receiving.counters().get("conn_refused_limit"));
        assertEquals(ADDRESSES, receiving.counters().get("conn_up").intValue(), "one connection per node pair");
    }

    private static boolean receiveAll(final List<RdsSocket> receivers, final boolean[] received, final ByteBuffer buffer)
    {
        try
        {
            for (int i = 0; i < receivers.size(); i++)
            {
                buffer.clear();
                final InetSocketAddress from = receivers.get(i).receive(buffer);
                if (from != null)
                {
                    assertEquals(new InetSocketAddress(ip("127.30.0.1"), RDS_PORT), from);
                    assertEquals(i + 1, buffer.getInt(0), "the message for address " + (i + 1));
                    received[i] = true;
                }
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return count(received) == receivers.size();
    }

    private static int count(final boolean[] flags)
    {
        int count = 0;
        for (final boolean flag : flags)
        {
            count += flag ? 1 : 0;
        }
        return count;
    }
}
