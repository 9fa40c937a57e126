package org.rds4j.faults;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.Ports;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Driver mode across processes: two {@link DriverNode}s (127.0.23.1 and 127.0.23.2, TCP port 28040), each with
 * two {@link FaultNode} clients ({@code --driver}), stream all-to-all: between the drivers and, through one
 * driver's stack, between its own clients. Each driver's stack holds the one connection of the node pair; a client
 * killed with SIGKILL frees its ports in its driver; a driver killed with SIGKILL makes its clients' calls fail
 * with ECONNRESET at once.
 */
class DriverClusterTest
{
    private static final int TCP_PORT = 28040;
    private static final String A = "127.0.23.1";
    private static final String B = "127.0.23.2";
    private static final List<String> ADDRESSES = List.of(A, B);
    private static final int CLIENTS = 2;
    /** FaultNode's default --base-port. */
    private static final int BASE_PORT = 4000;
    private static final Duration READY = Duration.ofSeconds(30);

    @TempDir
    Path temp;
    private Path dirA;
    private Path dirB;
    private final List<ChildNode> children = new ArrayList<>();
    private final List<RdsStack> stacks = new ArrayList<>();

    @BeforeEach
    void directories()
    {
        dirA = temp.resolve("a");
        dirB = temp.resolve("b");
    }

    @AfterEach
    void tearDown()
    {
        stacks.forEach(RdsStack::close);
        children.forEach(ChildNode::close);
    }

    private ChildNode driver(final String address, final Path directory) throws IOException
    {
        return ChildNode.startDriver(children, "DriverClusterTest-driver-" + address, address, directory, TCP_PORT);
    }

    /** Starts every client, K = 0..CLIENTS-1 of each address, and returns them in FaultNode's order (K * 2 + index). */
    private List<ChildNode> clients(final long durationMs, final long drainMs) throws IOException
    {
        final List<ChildNode> clients = new ArrayList<>();
        for (int k = 0; k < CLIENTS; k++)
        {
            for (final String address : ADDRESSES)
            {
                final Path directory = address.equals(A) ? dirA : dirB;
                final ChildNode client = new ChildNode("DriverClusterTest-" + name(address, k), address, List.of(
                    "--nodes", A + "," + B, "--tcp-port", String.valueOf(TCP_PORT), "--driver", directory.toString(),
                    "--clients", String.valueOf(CLIENTS), "--client", String.valueOf(k),
                    "--duration-ms", String.valueOf(durationMs), "--drain-ms", String.valueOf(drainMs),
                    "--progress-ms", "100", "--max-size", "4096"));
                children.add(client);
                clients.add(client);
            }
        }
        for (final ChildNode client : clients)
        {
            client.awaitReady(READY);
        }
        return clients;
    }

    private static String name(final String address, final int k)
    {
        return address + "#" + k;
    }

    /** @return client {@code g}'s name, g = K * 2 + index of its address, as FaultNode numbers them. */
    private static String name(final int g)
    {
        return name(ADDRESSES.get(g % ADDRESSES.size()), g / ADDRESSES.size());
    }

    /** @return the port on which client {@code g} talks to client {@code h} (FaultNode's scheme). */
    private static int port(final int g, final int h)
    {
        return BASE_PORT + g / ADDRESSES.size() * ADDRESSES.size() * CLIENTS + h;
    }

    /** Sends GO to every client and waits until each has received from each of its peers. */
    private static void goAndAwaitFlowing(final List<ChildNode> clients) throws IOException
    {
        for (final ChildNode client : clients)
        {
            client.command("GO");
        }
        Await.until(Duration.ofSeconds(30), () -> allFlowing(clients), () -> "every stream flowing: " + progress(clients));
    }

    private static boolean allFlowing(final List<ChildNode> clients)
    {
        for (int g = 0; g < clients.size(); g++)
        {
            for (int h = 0; h < clients.size(); h++)
            {
                if (g != h && clients.get(g).received(name(h)) == 0)
                {
                    return false;
                }
            }
        }
        return true;
    }

    private static String progress(final List<ChildNode> clients)
    {
        final StringBuilder text = new StringBuilder();
        for (int g = 0; g < clients.size(); g++)
        {
            text.append(name(g)).append(':');
            for (int h = 0; h < clients.size(); h++)
            {
                if (g != h)
                {
                    text.append(' ').append(name(h)).append('=').append(clients.get(g).received(name(h)));
                }
            }
            text.append("; ");
        }
        return text.toString();
    }

    /** @return sum of what the given clients received from each other so far. */
    private static long receivedAmong(final List<ChildNode> clients, final List<Integer> among)
    {
        long sum = 0;
        for (final int g : among)
        {
            for (final int h : among)
            {
                if (g != h)
                {
                    sum += clients.get(g).received(name(h));
                }
            }
        }
        return sum;
    }

    /** @return the established TCP sockets of the test's addresses, one line each ({@code ss -tn}). */
    private static List<String> establishedSockets() throws IOException, InterruptedException
    {
        final Process ss = new ProcessBuilder("ss", "-t", "-n", "-H", "state", "established", "src", "127.0.23.0/24")
            .redirectErrorStream(true)
            .start();
        final String output = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ss.waitFor(10, TimeUnit.SECONDS) || ss.exitValue() != 0)
        {
            throw new AssertionError("ss -tn failed: " + output);
        }
        return output.lines().filter(line -> !line.isBlank()).toList();
    }

    private static String host(final String hostAndPort)
    {
        return hostAndPort.substring(0, hostAndPort.lastIndexOf(':'));
    }

    private RdsStack attach(final Path directory)
    {
        final RdsStack stack = RdsStack.open(RdsStackConfig.builder().name("driver-cluster-test")
            .driverDirectory(directory.toString()).build());
        stacks.add(stack);
        return stack;
    }

    @Test
    void clientsOfTwoDriversStreamExactlyOverOneConnection() throws Exception
    {
        final long started = System.nanoTime();
        driver(A, dirA);
        driver(B, dirB);
        final List<ChildNode> clients = clients(6_000, 30_000);
        goAndAwaitFlowing(clients);

        // while the streams flow: the two ends of one connection, A's and B's, and no other TCP socket
        int samples = 0;
        final long sampleUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() - sampleUntil < 0)
        {
            final List<String> sockets = establishedSockets();
            assertEquals(2, sockets.size(), "one connection between the drivers, both ends: " + sockets);
            for (final String socket : sockets)
            {
                // ss shows the listener's sockets as IPv4-mapped: [::ffff:127.0.23.1]:54605
                final String[] fields = socket.replace("[::ffff:", "").replace("]", "").trim().split("\\s+");
                final String local = fields[fields.length - 2];
                final String peer = fields[fields.length - 1];
                assertEquals(Set.of(A, B), Set.of(host(local), host(peer)), "between the drivers: " + socket);
                assertTrue(local.endsWith(":" + TCP_PORT) != peer.endsWith(":" + TCP_PORT),
                    "one end on port " + TCP_PORT + ": " + socket);
            }
            samples++;
            Thread.sleep(250);   // the pace of the sampling
        }

        final List<NodeSummary> summaries = new ArrayList<>();
        final List<Integer> exits = new ArrayList<>();
        for (final ChildNode client : clients)
        {
            exits.add(client.awaitExit(Duration.ofSeconds(60)));
            summaries.add(client.summary());
        }
        final FaultCheck.Result check = FaultCheck.check(summaries);
        assertTrue(check.passed(), String.join("\n", check.problems()));
        assertEquals(List.of(0, 0, 0, 0), exits, "exit status 0: every stream completed both ways");
        assertEquals(12, check.pairs());
        for (int g = 0; g < summaries.size(); g++)
        {
            final NodeSummary summary = summaries.get(g);
            assertEquals(name(g), summary.node());
            for (final String peer : summary.pairs().keySet())
            {
                assertTrue(summary.pairLong(peer, "received") > 100, summary.node() + " <- " + peer + ": too little traffic");
            }
        }
        System.out.printf("FIGURES DriverClusterTest (streams): drivers 2, clients 4, pairs %d, messages %d (%d bytes),"
                + " ss samples %d (each: 1 connection), run %.1f s%n",
            check.pairs(), check.messages(), check.bytes(), samples, (System.nanoTime() - started) / 1e9);
    }

    @Test
    void aKilledClientsPortsAreFreedAndTheOtherStreamsStayExact() throws Exception
    {
        driver(A, dirA);
        driver(B, dirB);
        final List<ChildNode> clients = clients(120_000, 5_000);
        goAndAwaitFlowing(clients);
        final int victim = 2;   // A#1
        final List<Integer> survivors = List.of(0, 1, 3);
        // the victim's socket for B#0, to which B#0 sends
        final InetSocketAddress victimPort = new InetSocketAddress(ip(A), port(victim, 1));

        final RdsStack stack = attach(dirA);
        assertEquals(0L, stack.counters().get("driver_clients_gone").longValue());
        final RdsSocket socket = stack.openSocket();
        final RdsException inUse = assertThrows(RdsException.class, () -> socket.bind(victimPort));
        assertEquals(RdsResult.EADDRINUSE, inUse.code(), inUse.getMessage());
        assertNull(socket.localAddress(), "a failed bind leaves the socket unbound");

        clients.get(victim).kill9();
        final long killedAt = System.nanoTime();
        Await.until(Duration.ofSeconds(10), () -> Ports.tryBind(socket, victimPort),
            () -> "the killed client's port " + victimPort + " bindable again");
        final long freedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        assertEquals(victimPort, socket.localAddress());
        assertEquals(1L, stack.counters().get("driver_clients_gone").longValue());
        socket.close();   // B#0 goes on sending there: its messages are dropped, not queued for this test

        // the survivors go on streaming to each other
        final long before = receivedAmong(clients, survivors);
        Await.until(Duration.ofSeconds(10), () -> receivedAmong(clients, survivors) > before + 100,
            () -> "survivors streaming after the kill: " + progress(clients));

        final List<NodeSummary> summaries = new ArrayList<>();
        for (final int g : survivors)
        {
            final ChildNode survivor = clients.get(g);
            survivor.command("STOP");
        }
        for (final int g : survivors)
        {
            final ChildNode survivor = clients.get(g);
            // the stream from the victim never ends: exit status 2
            assertEquals(2, survivor.awaitExit(Duration.ofSeconds(60)), survivor.describe());
            final NodeSummary summary = survivor.summary();
            assertTrue(summary.pairLong(name(victim), "received") > 0, summary.node() + " got nothing from the victim");
            assertEquals(-1L, summary.pairLong(name(victim), "peer_sent"), summary.node() + ": no marker from the victim");
            summaries.add(summary);
        }
        final FaultCheck.Result check = FaultCheck.check(summaries);
        assertTrue(check.passed(), String.join("\n", check.problems()));
        assertEquals(6, check.pairs());
        System.out.printf("FIGURES DriverClusterTest (client killed): survivors 3, pairs %d, messages %d (%d bytes),"
                + " victim's port bindable %d ms after SIGKILL%n", check.pairs(), check.messages(), check.bytes(), freedMs);
    }

    @Test
    void aKilledDriversClientsFailPromptly() throws Exception
    {
        final ChildNode driverA = driver(A, dirA);
        driver(B, dirB);
        final List<ChildNode> clients = clients(120_000, 5_000);

        // a receive of this JVM, blocked through driver A with no timeout
        final RdsSocket socket = attach(dirA).openSocket();
        socket.bind(new InetSocketAddress(ip(A), 5000));
        socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ZERO);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread receiver = new Thread(() ->
        {
            try
            {
                socket.receive(ByteBuffer.allocate(64));
                failure.set(new AssertionError("received a message"));
            }
            catch (final Throwable t)
            {
                failure.set(t);
            }
        }, "blocked-receiver");
        receiver.start();
        goAndAwaitFlowing(clients);
        Await.until(Duration.ofSeconds(10), () -> Await.blockedIn(receiver, "receiveBlocking"),
            () -> "receiver parked: " + receiver.getState());

        driverA.kill9();
        final long killedAt = System.nanoTime();
        receiver.join(10_000);
        assertFalse(receiver.isAlive(), "the receive still blocked 10 s after the driver was killed");
        final long receiveMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        final RdsException lost = assertInstanceOf(RdsException.class, failure.get());
        assertEquals(RdsResult.ECONNRESET, lost.code(), lost.getMessage());
        final RdsException send = assertThrows(RdsException.class,
            () -> socket.send(ByteBuffer.allocate(8), new InetSocketAddress(ip(B), 5000)));
        assertEquals(RdsResult.ECONNRESET, send.code(), send.getMessage());

        // A's clients: DRIVER_LOST and exit status 3 within 10 s of the kill
        long clientsMs = 0;
        for (final int g : List.of(0, 2))
        {
            final ChildNode client = clients.get(g);
            final long remaining = TimeUnit.SECONDS.toNanos(10) - (System.nanoTime() - killedAt);
            assertEquals(3, client.awaitExit(Duration.ofNanos(Math.max(0, remaining))), client.describe());
            clientsMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            final List<String> lines = client.otherOutput();
            assertEquals(1, lines.size(), client.describe());
            assertTrue(lines.get(0).startsWith("DRIVER_LOST ECONNRESET"), client.describe());
        }

        // B's clients, whose driver lives on, stream exactly to each other
        final List<NodeSummary> summaries = new ArrayList<>();
        for (final int g : List.of(1, 3))
        {
            clients.get(g).command("STOP");
        }
        for (final int g : List.of(1, 3))
        {
            final ChildNode client = clients.get(g);
            assertEquals(2, client.awaitExit(Duration.ofSeconds(60)), client.describe());
            summaries.add(client.summary());
        }
        final FaultCheck.Result check = FaultCheck.check(summaries);
        assertTrue(check.passed(), String.join("\n", check.problems()));
        assertEquals(2, check.pairs());
        System.out.printf("FIGURES DriverClusterTest (driver killed): blocked receive failed %d ms after SIGKILL,"
                + " both clients exited (3) within %d ms; B's clients exact: %d messages%n", receiveMs, clientsMs,
            check.messages());
    }
}
