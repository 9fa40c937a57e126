package org.rds4j.faults;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.TestStacks;
import org.rds4j.transport.tcp.TcpConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The driver scale test: one {@link DriverNode} (127.0.24.1, TCP port 28050), 16 {@link ScaleClient} processes
 * attached to it with 4 sockets each, and 8 remote nodes (127.0.24.11-18: 8 stacks in this JVM, one socket each).
 * Each client socket streams {@value #MESSAGES} messages to every remote node and each remote node as many to
 * every client socket: 1,024 streams, each exact (in order, exactly once, the bytes its indexes imply). The host's
 * traffic goes over exactly 8 TCP connections, the driver's, one per remote node ({@code ss}, sampled while the
 * streams flow). The driver's RSS is read at each step (no client, 16 attached, 64 sockets bound, streams done), and
 * the clients' too; the differences are the memory per client and per socket (docs/reliability.md).
 * <p>
 * Affordable on 2 cores: clients with a 48 MiB heap, short streams of messages up to 1 KiB.
 */
class DriverScaleTest
{
    private static final int TCP_PORT = 28050;
    private static final String HOST = "127.0.24.1";
    private static final int CLIENTS = 16;
    private static final int SOCKETS = 4;
    private static final int REMOTES = 8;
    private static final int MESSAGES = 100;
    private static final int MAX_SIZE = 1024;
    private static final int BASE_PORT = 4000;
    private static final int REMOTE_PORT = 5000;
    private static final List<String> REMOTE_ADDRESSES = remoteAddresses();

    @TempDir
    Path temp;
    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());
    private final List<ChildNode> children = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        children.forEach(ChildNode::close);
        stacks.close();
    }

    private static List<String> remoteAddresses()
    {
        final List<String> addresses = new ArrayList<>();
        for (int r = 0; r < REMOTES; r++)
        {
            addresses.add("127.0.24." + (11 + r));
        }
        return addresses;
    }

    /** A remote node: a stack of this JVM with one socket, which streams to every client socket and checks theirs. */
    private final class Remote
    {
        final AtomicLong received = new AtomicLong();
        final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        final Thread sender;
        final Thread receiver;

        Remote(final int r) throws IOException
        {
            final RdsSocket socket = stacks.open("scale-remote-" + r).openSocket();
            socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(200));
            socket.bind(new InetSocketAddress(ip(REMOTE_ADDRESSES.get(r)), REMOTE_PORT));
            final List<InetSocketAddress> peers = new ArrayList<>();
            final int[] peerIds = new int[CLIENTS * SOCKETS];
            for (int g = 0; g < peerIds.length; g++)
            {
                peers.add(new InetSocketAddress(ip(HOST), BASE_PORT + g));
                peerIds[g] = g;
            }
            final StreamContent content = new StreamContent(1, MAX_SIZE);
            final int id = ScaleClient.REMOTE_ID_BASE + r;
            receiver = new Thread(() -> ScaleClient.receive(socket, content, id, peers, peerIds, MESSAGES, received,
                problems), "remote receive " + r);
            // the driver connects first (its clients send first), so no node pair ever has crossed connects
            sender = new Thread(() ->
            {
                Await.until(Duration.ofSeconds(60), () -> received.get() > 0, () -> "remote " + r + ": first message");
                ScaleClient.send(socket, content, id, peers, peerIds, MESSAGES, problems);
            }, "remote send " + r);
        }
    }

    /** @return VmRSS, RssAnon, RssFile and RssShmem of process {@code pid}, in KiB, from /proc/PID/status. */
    static Map<String, Long> memory(final long pid) throws IOException
    {
        final Map<String, Long> kib = new LinkedHashMap<>();
        for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")))
        {
            final String[] fields = line.split("\\s+");
            if (Set.of("VmRSS:", "RssAnon:", "RssFile:", "RssShmem:").contains(fields[0]))
            {
                kib.put(fields[0].substring(0, fields[0].length() - 1), Long.parseLong(fields[1]));
            }
        }
        return kib;
    }

    /** @return the established TCP sockets whose local address is {@code source} (an address or a prefix), one line each. */
    private static List<String> established(final String source)
    {
        try
        {
            final Process ss = new ProcessBuilder("ss", "-t", "-n", "-H", "state", "established", "src", source)
                .redirectErrorStream(true)
                .start();
            final String output = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!ss.waitFor(10, TimeUnit.SECONDS) || ss.exitValue() != 0)
            {
                throw new AssertionError("ss -tn failed: " + output);
            }
            return output.lines().filter(line -> !line.isBlank()).toList();
        }
        catch (final IOException | InterruptedException ex)
        {
            throw new AssertionError("ss -tn", ex);
        }
    }

    /** @return the remote hosts of the driver's connections; fails unless they are the 8 remote nodes, one each. */
    private static Set<String> driversConnections()
    {
        final List<String> sockets = established(HOST);
        final Set<String> peers = new HashSet<>();
        for (final String socket : sockets)
        {
            // ss shows the listener's sockets as IPv4-mapped: [::ffff:127.0.24.1]:28050
            final String[] fields = socket.replace("[::ffff:", "").replace("]", "").trim().split("\\s+");
            final String peer = fields[fields.length - 1];
            peers.add(peer.substring(0, peer.lastIndexOf(':')));
        }
        assertEquals(sockets.size(), peers.size(), "one connection per remote node: " + sockets);
        return peers;
    }

    private static boolean printed(final ChildNode client, final String prefix)
    {
        return client.otherOutput().stream().anyMatch(line -> line.startsWith(prefix));
    }

    @Test
    void sixteenClientsOfOneDriverReachEightNodesOverEightConnections() throws Exception
    {
        final long started = System.nanoTime();
        final ChildNode driver = ChildNode.startDriver(children, "DriverScaleTest-driver", HOST, temp, TCP_PORT);
        final List<Remote> remotes = new ArrayList<>();
        for (int r = 0; r < REMOTES; r++)
        {
            remotes.add(new Remote(r));
        }
        final Map<String, Long> idle = memory(driver.pid());

        final List<ChildNode> clients = new ArrayList<>();
        for (int k = 0; k < CLIENTS; k++)
        {
            final ChildNode client = new ChildNode("DriverScaleTest-client-" + k, HOST, ScaleClient.class,
                List.of("-Xmx48m"), List.of("--driver", temp.toString(), "--client", String.valueOf(k),
                "--sockets", String.valueOf(SOCKETS), "--remotes", String.join(",", REMOTE_ADDRESSES),
                "--remote-port", String.valueOf(REMOTE_PORT), "--base-port", String.valueOf(BASE_PORT),
                "--messages", String.valueOf(MESSAGES), "--max-size", String.valueOf(MAX_SIZE)));
            children.add(client);
            clients.add(client);
        }
        Await.until(Duration.ofSeconds(120), () -> clients.stream().allMatch(c -> printed(c, "ATTACHED")),
            () -> "every client attached");
        final Map<String, Long> attached = memory(driver.pid());
        for (final ChildNode client : clients)
        {
            client.command("OPEN");
        }
        for (final ChildNode client : clients)
        {
            client.awaitReady(Duration.ofSeconds(60));
        }
        final Map<String, Long> opened = memory(driver.pid());
        long clientsOpened = 0;
        for (final ChildNode client : clients)
        {
            clientsOpened += memory(client.pid()).get("VmRSS");
        }

        final long streamStart = System.nanoTime();
        for (final Remote remote : remotes)
        {
            remote.receiver.start();
            remote.sender.start();
        }
        for (final ChildNode client : clients)
        {
            client.command("GO");
        }
        Await.until(Duration.ofSeconds(30), () -> driversConnections().size() == REMOTES,
            () -> "the driver's " + REMOTES + " connections up");
        // while the streams flow and after: exactly the 8 connections, and no TCP socket of the host but the driver's
        int samples = 0;
        while (!clients.stream().allMatch(c -> printed(c, "DONE")) || samples == 0)
        {
            assertEquals(Set.copyOf(REMOTE_ADDRESSES), driversConnections(), "the driver's connections");
            assertEquals(2 * REMOTES, established("127.0.24.0/24").size(), "both ends of the 8, nothing else");
            samples++;
            assertTrue(System.nanoTime() - streamStart < TimeUnit.SECONDS.toNanos(150), "streams still running after 150 s");
            Thread.sleep(250);   // the pace of the sampling
        }
        final double streamSeconds = (System.nanoTime() - streamStart) / 1e9;
        for (final Remote remote : remotes)
        {
            remote.sender.join(60_000);
            remote.receiver.join(60_000);
        }
        final Map<String, Long> streamed = memory(driver.pid());
        long clientsStreamed = 0;
        long clientsMax = 0;
        for (final ChildNode client : clients)
        {
            final long rss = memory(client.pid()).get("VmRSS");
            clientsStreamed += rss;
            clientsMax = Math.max(clientsMax, rss);
        }
        assertEquals(Set.copyOf(REMOTE_ADDRESSES), driversConnections(), "the driver's connections after the streams");

        // every stream exact: each client socket got MESSAGES from each remote node, and each remote node from each socket
        final String clientDone = "DONE received=" + (long)SOCKETS * REMOTES * MESSAGES + " problems=0";
        for (final ChildNode client : clients)
        {
            assertEquals(List.of("ATTACHED", clientDone), client.otherOutput(), client.describe());
        }
        for (final Remote remote : remotes)
        {
            assertEquals(List.of(), List.copyOf(remote.problems));
            assertEquals((long)CLIENTS * SOCKETS * MESSAGES, remote.received.get());
        }
        for (final ChildNode client : clients)
        {
            client.command("STOP");
        }
        for (final ChildNode client : clients)
        {
            assertEquals(0, client.awaitExit(Duration.ofSeconds(30)), client.describe());
        }

        final long streams = 2L * CLIENTS * SOCKETS * REMOTES;
        System.out.printf("FIGURES DriverScaleTest: 1 driver, %d clients x %d sockets, %d remote nodes: %d streams x %d"
                + " messages (up to %d B) exact in %.1f s; driver's connections %d (ss samples %d);"
                + " driver KiB idle %s, 16 attached %s, 64 sockets %s, streamed %s;"
                + " per client %d KiB, per socket %d KiB (bound) %d KiB (after streaming);"
                + " clients' RSS KiB mean %d (bound) %d (streamed), max %d; run %.1f s%n",
            CLIENTS, SOCKETS, REMOTES, streams, MESSAGES, MAX_SIZE, streamSeconds, REMOTES, samples,
            idle, attached, opened, streamed,
            (attached.get("VmRSS") - idle.get("VmRSS")) / CLIENTS,
            (opened.get("VmRSS") - attached.get("VmRSS")) / (CLIENTS * SOCKETS),
            (streamed.get("VmRSS") - attached.get("VmRSS")) / (CLIENTS * SOCKETS),
            clientsOpened / CLIENTS, clientsStreamed / CLIENTS, clientsMax, (System.nanoTime() - started) / 1e9);
        // the bounds of deployment.md's sizing, with room for the JVM's own noise: a client costs its session's
        // buffers (about 0.5-0.8 MiB), a bound idle socket tens of KiB, a socket that streamed its rings'
        // touched pages in /dev/shm (a 2 MiB send ring and a 256 KiB receive ring at most) and its client's ring's share
        final long perClient = (attached.get("VmRSS") - idle.get("VmRSS")) / CLIENTS;
        final long perIdleSocket = (opened.get("VmRSS") - attached.get("VmRSS")) / (CLIENTS * SOCKETS);
        final long shmPerSocket = (streamed.get("RssShmem") - opened.get("RssShmem")) / (CLIENTS * SOCKETS);
        assertTrue(perClient <= 1536, "driver KiB per attached client: " + perClient);
        assertTrue(perIdleSocket <= 256, "driver KiB per bound idle socket: " + perIdleSocket);
        assertTrue(shmPerSocket <= 2048 + 256 + 1024 / SOCKETS, "driver /dev/shm KiB per streamed socket: " + shmPerSocket);
    }
}
