package org.rds4j.faults;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three {@link FaultNode} processes stream all-to-all while this test kills their TCP connections from
 * outside the JVMs with {@code ss -K} (SOCK_DESTROY: the socket is aborted and the peer gets a RST), every
 * {@value #KILL_EVERY_MS} ms, each time all connections of one node in turn. Every ordered pair's received
 * stream must still be exactly the sent stream: same count and bytes, same SHA-256, nothing lost, duplicated
 * or reordered. The test fails (never skips) if {@code ss -K} kills nothing. It runs twice: every node embedded,
 * and with the last node a client of a {@link DriverNode} of its address (driver mode), whose stack then holds
 * that node's connections, so {@code ss -K} kills the driver's. TCP port 28020, addresses 127.0.21.x.
 */
class ConnectionKillTest
{
    private static final int TCP_PORT = 28020;
    private static final List<String> NODES = List.of("127.0.21.1", "127.0.21.2", "127.0.21.3");
    /** The node attached through a driver in the driver-mode run. */
    private static final String DRIVEN = "127.0.21.3";
    private static final long STREAM_MS = 20_000;
    private static final long KILL_EVERY_MS = 300;

    private final List<ChildNode> children = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        children.forEach(ChildNode::close);
    }

    /**
     * Runs {@code ss -K -t -n -H dst ADDRESS}; ss prints one line per socket it destroyed.
     *
     * @return the number of TCP sockets destroyed.
     */
    static int killConnectionsTo(final String address) throws IOException, InterruptedException
    {
        final Process ss = new ProcessBuilder("ss", "-K", "-t", "-n", "-H", "dst", address)
            .redirectErrorStream(true)
            .start();
        final String output = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ss.waitFor(10, TimeUnit.SECONDS) || ss.exitValue() != 0)
        {
            throw new AssertionError("ss -K dst " + address + " failed: " + output);
        }
        return (int)output.lines().filter(line -> !line.isBlank()).count();
    }

    @ParameterizedTest(name = "{0} through a driver")
    @ValueSource(strings = {"no node", DRIVEN})
    void streamsStayExactWhileConnectionsAreKilledFromOutside(final String driven, @TempDir final Path driverDirectory)
        throws Exception
    {
        final long started = System.nanoTime();
        final List<String> args = List.of("--nodes", String.join(",", NODES), "--tcp-port", String.valueOf(TCP_PORT),
            "--duration-ms", String.valueOf(STREAM_MS), "--drain-ms", "30000", "--max-size", "4096");
        final List<ChildNode> nodes = new ArrayList<>();
        for (final String address : NODES)
        {
            final List<String> nodeArgs = new ArrayList<>(args);
            if (address.equals(driven))
            {
                ChildNode.startDriver(children, "ConnectionKillTest-driver-" + address, address, driverDirectory, TCP_PORT);
                nodeArgs.addAll(List.of("--driver", driverDirectory.toString()));
            }
            final ChildNode node = new ChildNode("ConnectionKillTest-" + address, address, nodeArgs);
            children.add(node);
            nodes.add(node);
        }
        for (final ChildNode node : nodes)
        {
            node.awaitReady(Duration.ofSeconds(30));
        }
        for (final ChildNode node : nodes)
        {
            node.command("GO");
        }

        // kill while the nodes send; node k's connections on round k, so every connection dies again and again
        int killed = 0;
        int rounds = 0;
        final long killUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STREAM_MS - 1_000);
        while (System.nanoTime() - killUntil < 0)
        {
            Thread.sleep(KILL_EVERY_MS);   // the pace of the fault injection
            killed += killConnectionsTo(NODES.get(rounds % NODES.size()));
            rounds++;
        }

        final List<NodeSummary> summaries = new ArrayList<>();
        final List<Integer> exits = new ArrayList<>();
        for (final ChildNode node : nodes)
        {
            exits.add(node.awaitExit(Duration.ofSeconds(60)));
            summaries.add(node.summary());
        }
        final FaultCheck.Result check = FaultCheck.check(summaries);
        long peerDown = 0;
        for (final NodeSummary summary : summaries)
        {
            for (final var pair : summary.pairs().values())
            {
                peerDown += ((Number)pair.get("peer_down")).longValue();
            }
        }
        System.out.printf("FIGURES ConnectionKillTest (%s through a driver): nodes 3, ss -K rounds %d, sockets killed %d, conn_reset %d,"
                + " peer_down %d, send_retransmitted %d, messages %d (%d bytes), problems %d, run %.1f s%n",
            driven, rounds, killed, check.connResets(), peerDown, check.retransmitted(), check.messages(), check.bytes(),
            check.problems().size(), (System.nanoTime() - started) / 1e9);

        assertTrue(check.passed(), String.join("\n", check.problems()));
        assertEquals(List.of(0, 0, 0), exits, "exit status 0: every stream completed both ways");
        assertTrue(killed > 0, "ss -K destroyed no socket in " + rounds + " rounds: the test injected no fault");
        assertTrue(check.connResets() > 0, "no stack saw a connection reset although ss -K destroyed " + killed + " sockets");
        assertTrue(check.retransmitted() > 0, "no message was retransmitted: the kills never hit a connection with unacked data");
        assertTrue(check.messages() > 10_000, "too little traffic to mean anything: " + check.messages());
        if (NODES.contains(driven))
        {
            // the driven node's counters are its driver's: it was attached, and the kills reset the driver's connections
            final NodeSummary node = summaries.get(NODES.indexOf(driven));
            assertEquals(1L, node.counter("driver_clients_attached"), node.node() + " attached through its driver");
            assertTrue(node.counter("conn_reset") > 0, "the driver's stack saw no connection reset");
        }
    }
}
