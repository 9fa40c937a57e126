package org.rds4j.faults;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.transport.tcp.TcpConfig;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A peer process that freezes, is killed and is started again at the same address: the frozen process is
 * detected by the heartbeat, and the restarted one (a new generation) gets exactly what was never sent to its
 * predecessor, in order, and nothing that was.
 * <p>
 * This JVM's stack (127.0.22.1, the lower address, so it reconnects by itself) streams numbered messages to
 * port 7000 of an {@link IndexReceiver} child at 127.0.22.3. Three batches:
 * <ol>
 *   <li>W: received and acked by the first process;</li>
 *   <li>X: sent while that process is frozen (SIGSTOP): written to its TCP socket, never read, never acked;
 *       the heartbeat drops the connection; then the process is killed (SIGKILL);</li>
 *   <li>Y: queued while no process is there.</li>
 * </ol>
 * The second process must receive exactly Y; X is dropped as sent to the old process. TCP port 28030.
 */
class PeerRestartTest
{
    private static final int TCP_PORT = 28030;
    private static final InetAddress SELF = ip("127.0.22.1");
    private static final String PEER = "127.0.22.3";
    private static final InetSocketAddress DESTINATION = new InetSocketAddress(ip(PEER), 7000);
    private static final int BATCH = 50;
    private static final Duration HEARTBEAT_INTERVAL = Duration.ofMillis(200);
    private static final Duration HEARTBEAT_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration T = Duration.ofSeconds(30);

    private final List<ChildNode> children = new ArrayList<>();
    private RdsStack stack;

    @AfterEach
    void tearDown()
    {
        children.forEach(ChildNode::close);
        if (stack != null)
        {
            stack.close();
        }
    }

    @Test
    void frozenPeerIsDroppedAndItsSuccessorGetsNothingSentToIt() throws Exception
    {
        final long started = System.nanoTime();
        stack = RdsStack.open(RdsStackConfig.builder()
            .name("restart-test")
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build())
            .heartbeat(HEARTBEAT_INTERVAL, HEARTBEAT_TIMEOUT)
            .connectTimeout(Duration.ofSeconds(1))
            .infoFile(false)
            .build());
        final RdsSocket socket = stack.openSocket();
        socket.bind(new InetSocketAddress(SELF, 5000));
        socket.setOption(RdsOptions.SO_SNDTIMEO, T);

        final ChildNode first = receiver("first");
        sendBatch(socket, 0);
        Await.until(T, () -> received(first).size() == BATCH && socket.sendQueuedBytes() == 0,
            () -> "W received and acked: " + received(first).size() + " received, " + socket.sendQueuedBytes() + " B queued");
        assertEquals(range(0, BATCH), received(first));

        // X: the process is frozen, its kernel still takes (and TCP-acks) the bytes
        first.freeze();
        final long frozenAt = System.nanoTime();
        final long transmittedBefore = counter("send_transmitted");
        sendBatch(socket, BATCH);
        Await.until(T, () -> counter("send_transmitted") - transmittedBefore >= BATCH,
            () -> "X written to the frozen peer's socket: " + stack.counters());
        Await.until(T, () -> counter("conn_heartbeat_timeout") == 1, () -> "heartbeat drop: " + stack.counters());
        final long detectedMs = (System.nanoTime() - frozenAt) / 1_000_000;
        assertTrue(detectedMs < HEARTBEAT_TIMEOUT.toMillis() + 2_000,
            "a frozen peer is detected within about the heartbeat timeout (" + HEARTBEAT_TIMEOUT + "): " + detectedMs + " ms");
        first.kill9();
        assertEquals(range(0, BATCH), received(first), "the frozen process read nothing of X");

        // Y: nobody is there
        sendBatch(socket, 2 * BATCH);
        assertEquals(2L * BATCH * payloadLength(), socket.sendQueuedBytes(), "X and Y wait unacked");

        final ChildNode second = receiver("second");
        Await.until(T, () -> received(second).size() >= BATCH && socket.sendQueuedBytes() == 0,
            () -> "Y received and acked: " + received(second).size() + " received, " + socket.sendQueuedBytes() + " B queued, " +
                stack.counters());
        assertEquals(range(2 * BATCH, BATCH), received(second),
            "the new process gets exactly what was never sent to the old one, in order");
        assertEquals(1, counter("conn_peer_restart"));
        assertEquals(BATCH, counter("send_flushed_peer_restart"), "X was dropped, not retransmitted");
        assertEquals(0, counter("send_cancelled"));
        System.out.printf("FIGURES PeerRestartTest: SIGSTOP detected by heartbeat in %d ms (timeout %d ms), SIGKILL, restart;"
                + " old process got %d, %d flushed as sent to it, new process got %d = exactly the never-sent ones,"
                + " run %.1f s%n",
            detectedMs, HEARTBEAT_TIMEOUT.toMillis(), BATCH, counter("send_flushed_peer_restart"), received(second).size(),
            (System.nanoTime() - started) / 1e9);
    }

    private ChildNode receiver(final String name) throws Exception
    {
        final ChildNode child = new ChildNode("PeerRestartTest-" + name, PEER, IndexReceiver.class,
            List.of("--port", "7000", "--tcp-port", String.valueOf(TCP_PORT)));
        children.add(child);
        child.awaitReady(T);
        return child;
    }

    private static void sendBatch(final RdsSocket socket, final long firstIndex) throws Exception
    {
        final ByteBuffer message = ByteBuffer.allocate(payloadLength());
        for (long index = firstIndex; index < firstIndex + BATCH; index++)
        {
            message.clear();
            message.putLong(0, index);
            assertEquals(payloadLength(), socket.send(message, DESTINATION));
        }
    }

    private static int payloadLength()
    {
        return 100;
    }

    private static List<Long> received(final ChildNode child)
    {
        final List<Long> indexes = new ArrayList<>();
        for (final String line : child.otherOutput())
        {
            if (line.startsWith("R "))
            {
                indexes.add(Long.parseLong(line.substring(2)));
            }
        }
        return indexes;
    }

    private static List<Long> range(final long first, final int count)
    {
        final List<Long> indexes = new ArrayList<>();
        for (long i = first; i < first + count; i++)
        {
            indexes.add(i);
        }
        return indexes;
    }

    private long counter(final String name)
    {
        return stack.counters().get(name);
    }
}
