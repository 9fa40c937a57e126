package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.Threading;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.TestStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The duty cycle serves its sockets from a start that moves on every cycle: with two sockets sending, the
 * one whose message leaves first alternates from one cycle to the next, and both are served in every cycle.
 * Two INVOKER stacks, so that the test runs each duty cycle itself. TCP port 28200, addresses 127.0.40.x.
 */
class DutyCycleRotationTest
{
    private static final int TCP_PORT = 28200;
    private static final InetAddress A_IP = ip("127.0.40.1");
    private static final InetAddress B_IP = ip("127.0.40.2");
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int ROUNDS = 6;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private RdsStack invoker(final String name)
    {
        return stacks.open(stacks.config(name).toBuilder().threading(Threading.INVOKER).build());
    }

    private static RdsSocket nonBlocking(final RdsStack stack, final InetAddress ip, final int port) throws Exception
    {
        final RdsSocket socket = stack.openSocket().bind(new InetSocketAddress(ip, port));
        socket.configureBlocking(false);
        return socket;
    }

    /** Runs duty cycles on {@code driven} (and on {@code also}, if not null) until {@code count} messages arrived. */
    private static List<InetSocketAddress> receive(
        final RdsSocket receiver, final int count, final RdsStack driven, final RdsStack also)
    {
        final List<InetSocketAddress> senders = new ArrayList<>();
        final ByteBuffer dst = ByteBuffer.allocate(64);
        Await.until(WAIT, () ->
        {
            driven.invoke();
            if (also != null)
            {
                also.invoke();
            }
            try
            {
                InetSocketAddress sender;
                while ((sender = receiver.receive(dst.clear())) != null)
                {
                    senders.add(sender);
                }
            }
            catch (final Exception ex)
            {
                throw new AssertionError(ex);
            }
            return senders.size() >= count;
        }, () -> "received " + senders);
        return senders;
    }

    @Test
    void theSocketServedFirstAlternatesAndBothAreServedEveryCycle() throws Exception
    {
        final RdsStack a = invoker("rot-a");
        final RdsStack b = invoker("rot-b");
        final RdsSocket first = nonBlocking(a, A_IP, 100);
        final RdsSocket second = nonBlocking(a, A_IP, 101);
        final RdsSocket receiver = nonBlocking(b, B_IP, 200);
        final ByteBuffer payload = ByteBuffer.allocate(8);

        // bring the connection up and every ack home, so that each round's one cycle only moves and writes
        assertEquals(8, first.send(payload.clear(), receiver.localAddress()));
        assertEquals(8, second.send(payload.clear(), receiver.localAddress()));
        receive(receiver, 2, a, b);
        Await.until(WAIT, () -> a.invoke() + b.invoke() >= 0 && first.sendQueuedBytes() + second.sendQueuedBytes() == 0,
            () -> "acked");

        final List<InetSocketAddress> servedFirst = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++)
        {
            assertEquals(8, first.send(payload.clear(), receiver.localAddress()));
            assertEquals(8, second.send(payload.clear(), receiver.localAddress()));
            final long queued = a.counters().get("send_queued");
            a.invoke(); // exactly one duty cycle: it moves both messages, in its order, onto the one connection
            assertEquals(queued + 2, a.counters().get("send_queued"), "both sockets served in round " + round);
            final List<InetSocketAddress> senders = receive(receiver, 2, b, null);
            assertEquals(2, senders.size(), senders.toString());
            assertNotEquals(senders.get(0), senders.get(1), senders.toString());
            servedFirst.add(senders.get(0));
        }
        for (int round = 1; round < ROUNDS; round++)
        {
            assertNotEquals(servedFirst.get(round - 1), servedFirst.get(round), "first served by round: " + servedFirst);
        }
    }
}
