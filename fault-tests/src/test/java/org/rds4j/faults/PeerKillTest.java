package org.rds4j.faults;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.TestStacks;
import org.rds4j.transport.tcp.TcpConfig;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Three {@link FaultNode} processes stream all-to-all; one is killed with SIGKILL mid-stream. The survivors
 * keep streaming to each other at (at least half) the rate measured before the kill and their streams stay
 * exact. This JVM's own stack, which had a connection to the victim, sees the peer go down and the RDS
 * backpressure rules against a dead peer: the send buffer fills, then EAGAIN (non-blocking) or ETIMEDOUT
 * after SO_SNDTIMEO (blocking), and cancelSentTo drops exactly the queued messages and frees a blocked sender.
 * <p>
 * It runs twice: every node embedded, and in driver mode, where survivor A and the victim are each a client of a
 * {@link DriverNode} of their address. There the process killed is the victim's driver: the stack that held the
 * victim's connections, as the kernel does for an RDS host, so the peers see what a dead host looks like (a client
 * killed under a living driver is DriverClusterTest's case: its peers see no PEER_DOWN). The victim's client then
 * exits with status 3 (DRIVER_LOST), and A's PEER_DOWN and stream checks hold through its driver.
 * TCP port 28010, addresses 127.0.20.x.
 */
class PeerKillTest
{
    private static final int TCP_PORT = 28010;
    private static final String A = "127.0.20.1";
    private static final String B = "127.0.20.2";
    private static final String VICTIM = "127.0.20.3";
    private static final InetAddress TEST_IP = ip("127.0.20.9");
    /** No socket is bound there on the victim: our messages are acked and dropped (recv_drop_no_sock). */
    private static final InetSocketAddress VICTIM_7000 = new InetSocketAddress(ip(VICTIM), 7000);
    private static final int SNDBUF = 64 * 1024;
    private static final int MESSAGE = 1000;
    /** Messages admitted while fewer than SNDBUF bytes are queued: 66 x 1000 (the last one overshoots). */
    private static final int FILL = (SNDBUF + MESSAGE - 1) / MESSAGE;
    private static final Duration WARM_UP = Duration.ofSeconds(2);
    private static final Duration WINDOW = Duration.ofSeconds(3);

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());
    private final List<ChildNode> children = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        children.forEach(ChildNode::close);
        stacks.close();
    }

    private static ByteBuffer payload()
    {
        return ByteBuffer.allocate(MESSAGE);
    }

    /** Messages the two survivors received from each other so far. */
    private long survivorsReceived(final ChildNode a, final ChildNode b)
    {
        return a.received(B) + b.received(A);
    }

    /** Survivor-to-survivor messages per second over one window, measured from now. */
    private double survivorsRate(final ChildNode a, final ChildNode b) throws InterruptedException
    {
        final long start = System.nanoTime();
        final long before = survivorsReceived(a, b);
        Thread.sleep(WINDOW.toMillis());   // a measurement window, not a wait for a condition
        final long after = survivorsReceived(a, b);
        return (after - before) * 1e9 / (System.nanoTime() - start);
    }

    @ParameterizedTest(name = "through drivers: {0}")
    @ValueSource(booleans = {false, true})
    void survivorsKeepStreamingAndTheDeadPeerIsBackpressureUntilCancelled(final boolean drivers,
        @TempDir final Path temp) throws Exception
    {
        final long started = System.nanoTime();
        final List<String> args = List.of("--nodes", A + "," + B + "," + VICTIM, "--tcp-port", String.valueOf(TCP_PORT),
            "--duration-ms", "120000", "--drain-ms", "5000", "--progress-ms", "100", "--max-size", "4096");
        final List<ChildNode> nodes = new ArrayList<>();
        ChildNode victimDriver = null;
        for (final String address : List.of(A, B, VICTIM))
        {
            final List<String> nodeArgs = new ArrayList<>(args);
            if (drivers && !address.equals(B))
            {
                final Path directory = temp.resolve(address);
                final ChildNode driver = ChildNode.startDriver(children, "PeerKillTest-driver-" + address, address,
                    directory, TCP_PORT);
                if (address.equals(VICTIM))
                {
                    victimDriver = driver;
                }
                nodeArgs.addAll(List.of("--driver", directory.toString()));
            }
            final ChildNode node = new ChildNode("PeerKillTest-" + address, address, nodeArgs);
            children.add(node);
            nodes.add(node);
        }
        final ChildNode a = nodes.get(0);
        final ChildNode b = nodes.get(1);
        final ChildNode victim = nodes.get(2);
        for (final ChildNode node : nodes)
        {
            node.awaitReady(Duration.ofSeconds(30));
        }

        final RdsStack stack = stacks.open("peer-kill-test");
        final RdsSocket socket = stack.openSocket();
        final Queue<InetAddress> up = new ConcurrentLinkedQueue<>();
        final Queue<InetAddress> down = new ConcurrentLinkedQueue<>();
        socket.setNotificationListener(new RdsNotificationListener()
        {
            @Override
            public void onPeerUp(final InetAddress peer)
            {
                up.add(peer);
            }

            @Override
            public void onPeerDown(final InetAddress peer)
            {
                down.add(peer);
            }
        });
        socket.setOption(RdsOptions.SO_SNDBUF, SNDBUF);
        socket.bind(new InetSocketAddress(TEST_IP, 7000));
        for (final ChildNode node : nodes)
        {
            node.command("GO");
        }

        // our connection to the victim is up and the victim's stack acks what we send
        socket.configureBlocking(false);
        for (int i = 0; i < 10; i++)
        {
            assertEquals(MESSAGE, socket.send(payload(), VICTIM_7000));
        }
        Await.until(Duration.ofSeconds(20), () -> poll(socket) && up.contains(ip(VICTIM)) && socket.sendQueuedBytes() == 0,
            () -> "connection to the victim up and acked: up " + up + ", queued " + socket.sendQueuedBytes());

        Await.until(Duration.ofSeconds(20), () -> a.received(B) > 0 && b.received(A) > 0 && a.received(VICTIM) > 0,
            () -> "streams flowing: " + a.describe());
        Thread.sleep(WARM_UP.toMillis());   // JIT warm-up before measuring, not a wait for a condition
        final double rateBefore = survivorsRate(a, b);

        (drivers ? victimDriver : victim).kill9();
        final long killedAt = System.nanoTime();
        final double rateAfter = survivorsRate(a, b);
        assertTrue(rateAfter >= 0.5 * rateBefore,
            "survivors' rate after the kill " + (long)rateAfter + "/s < half of before " + (long)rateBefore + "/s");
        if (drivers)
        {
            // by now (3 s after the kill) the victim's client has seen its driver go
            assertEquals(3, victim.awaitExit(Duration.ofSeconds(10)), victim.describe());
            final List<String> lines = victim.otherOutput();
            assertTrue(!lines.isEmpty() && lines.get(0).startsWith("DRIVER_LOST ECONNRESET"), victim.describe());
        }

        // the socket reports the peer's connection as down
        Await.until(Duration.ofSeconds(10), () -> poll(socket) && down.contains(ip(VICTIM)), () -> "PEER_DOWN for the victim: " + down);
        final String state = connectionState(stack, ip(VICTIM));
        assertTrue(!"UP".equals(state), "connection to the dead peer is " + state);

        // non-blocking: admitted until the send buffer is full, then EAGAIN
        int admitted = 0;
        int result;
        while ((result = socket.send(payload(), VICTIM_7000)) == MESSAGE)
        {
            admitted++;
            assertTrue(admitted <= FILL, "more than " + FILL + " messages admitted to a dead peer");
        }
        assertEquals(RdsResult.EAGAIN, result, RdsResult.name(result));
        assertEquals(FILL, admitted);
        assertEquals((long)FILL * MESSAGE, socket.sendQueuedBytes());

        // blocking with SO_SNDTIMEO: ETIMEDOUT after about the timeout
        socket.configureBlocking(true);
        socket.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofSeconds(1));
        final long sendStart = System.nanoTime();
        assertEquals(RdsResult.ETIMEDOUT, socket.send(payload(), VICTIM_7000));
        final long blockedMs = (System.nanoTime() - sendStart) / 1_000_000;
        assertTrue(blockedMs >= 950 && blockedMs < 5_000, "blocked " + blockedMs + " ms for a 1 s SO_SNDTIMEO");

        // blocking without a timeout: parked until cancelSentTo frees the buffer
        socket.setOption(RdsOptions.SO_SNDTIMEO, Duration.ZERO);
        final AtomicInteger blockedResult = new AtomicInteger(Integer.MIN_VALUE);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread sender = new Thread(() ->
        {
            try
            {
                blockedResult.set(socket.send(payload(), VICTIM_7000));
            }
            catch (final Throwable t)
            {
                failure.set(t);
            }
        }, "blocked-sender");
        sender.start();
        Await.until(Duration.ofSeconds(10), () -> Await.blockedIn(sender, "sendBlocking"), () -> "sender parked: " + sender.getState());
        assertEquals(Integer.MIN_VALUE, blockedResult.get());
        final long cancelledBefore = stack.counters().get("send_cancelled");
        assertEquals(FILL, socket.cancelSentTo(VICTIM_7000));
        sender.join(5_000);
        assertTrue(!sender.isAlive(), "the blocked sender still blocked after cancelSentTo");
        assertNull(failure.get());
        assertEquals(MESSAGE, blockedResult.get());
        assertEquals(MESSAGE, socket.sendQueuedBytes(), "only the freed sender's message is queued");
        assertEquals(1, socket.cancelSentTo(VICTIM_7000));
        assertEquals(0, socket.sendQueuedBytes());
        assertEquals(FILL + 1, stack.counters().get("send_cancelled") - cancelledBefore);

        // the survivors finish (the stream to the victim cannot: exit status 2) and their streams are exact
        a.command("STOP");
        b.command("STOP");
        assertEquals(2, a.awaitExit(Duration.ofSeconds(60)), a.describe());
        assertEquals(2, b.awaitExit(Duration.ofSeconds(60)), b.describe());
        final NodeSummary sa = a.summary();
        final NodeSummary sb = b.summary();
        final FaultCheck.Result check = FaultCheck.check(List.of(sa, sb));
        assertTrue(check.passed(), String.join("\n", check.problems()));
        assertTrue(check.messages() > 0);
        for (final NodeSummary survivor : List.of(sa, sb))
        {
            assertTrue(survivor.pairLong(VICTIM, "peer_down") >= 1, survivor.node() + " saw no PEER_DOWN for the victim");
            assertTrue(survivor.pairLong(VICTIM, "received") > 0, survivor.node() + " got nothing from the victim before the kill");
            // nothing sent to the dead peer is dropped: what was in flight stays queued, or, if its port was congested
            // when it died and nothing was in flight (a driver's port congests readily), the sender stays blocked and
            // its stream never ends; a dropped stream would have freed the sender to send its end marker
            final boolean queued = survivor.pairLong(VICTIM, "unacked_bytes") > 0;
            final boolean ended = !Boolean.FALSE.equals(survivor.pair(VICTIM).get("end_sent"));
            assertTrue(queued || !ended, survivor.node() + ": the dead peer's messages stay queued, or its sender stays " +
                "blocked: " + survivor.pair(VICTIM));
        }
        System.out.printf("FIGURES PeerKillTest (%s): nodes 3 + this JVM, killed 1 (SIGKILL), survivor messages %d (%d bytes),"
                + " survivors' rate before %.0f/s after %.0f/s (ratio %.2f), lost 0 duplicated 0 reordered 0,"
                + " dead peer: %d admitted then EAGAIN, ETIMEDOUT after %d ms, cancelSentTo %d, run %.1f s (kill at %.1f s)%n",
            drivers ? "A and the victim through drivers, the victim's driver killed" : "embedded",
            check.messages(), check.bytes(), rateBefore, rateAfter, rateAfter / rateBefore, admitted, blockedMs, FILL,
            (System.nanoTime() - started) / 1e9, (killedAt - started) / 1e9);
    }

    /** Polls the socket so that its notifications reach the listener; true so it can lead a condition. */
    private static boolean poll(final RdsSocket socket)
    {
        try
        {
            socket.poll((from, message) -> { }, 16);
            return true;
        }
        catch (final java.io.IOException ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static String connectionState(final RdsStack stack, final InetAddress remote)
    {
        for (final RdsStack.ConnectionInfo info : stack.connections())
        {
            if (info.local().equals(TEST_IP) && info.remote().equals(remote))
            {
                return info.state();
            }
        }
        return "absent";
    }
}
