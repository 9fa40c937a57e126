package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;
import org.rds4j.core.StackInfoReader;
import org.rds4j.core.test.Await;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine;

/**
 * {@code rds info} against two stacks running in this JVM over TCP: stack info-a (127.0.8.1, sockets on ports
 * 5000 and 5001) sends to stack info-b (127.0.8.2:5000) and to itself (loopback); no receiver drains. The
 * first test checks what {@link StackInfoReader} reads from the files end to end (rds-core's own test has no
 * TCP transport); the others run the command.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InfoCommandTest
{
    private static final int TO_B = 10;
    private static final int TO_SELF = 3;
    private static final int SIZE = 100;

    @TempDir
    static Path dir;

    private static CoreStack a;
    private static CoreStack b;
    private static RdsSocket a1;
    private static RdsSocket a2;
    private static RdsSocket b1;

    @BeforeAll
    static void startTwoStacksAndSend() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(27030, "127.0.8.1", "127.0.8.2");
        final RdsStackConfig config = RdsStackConfig.builder()
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build()).infoDirectory(dir.toString()).build();
        a = (CoreStack)RdsStack.open(config.toBuilder().name("info-a").build());
        b = (CoreStack)RdsStack.open(config.toBuilder().name("info-b").build());
        a1 = a.openSocket().bind(new InetSocketAddress("127.0.8.1", 5000));
        a2 = a.openSocket().bind(new InetSocketAddress("127.0.8.1", 5001));
        b1 = b.openSocket().bind(new InetSocketAddress("127.0.8.2", 5000));
        for (int i = 0; i < TO_B; i++)
        {
            assertEquals(SIZE, a1.send(ByteBuffer.allocate(SIZE), b1.localAddress()));
        }
        for (int i = 0; i < TO_SELF; i++)
        {
            assertEquals(SIZE, a1.send(ByteBuffer.allocate(SIZE), a2.localAddress()));
        }
        Await.until(() -> b.counters().get("recv_delivered") == TO_B && a.counters().get("recv_delivered") == TO_SELF &&
            a1.sendQueuedBytes() == 0, "every message delivered and acked");
    }

    @AfterAll
    static void closeStacks()
    {
        if (a != null)
        {
            a.close();
        }
        if (b != null)
        {
            b.close();
        }
    }

    @Test
    void readerSeesCountersConnectionsAndSocketsExactly() throws Exception
    {
        final InetAddress addressA = InetAddress.getByName("127.0.8.1");
        final InetAddress addressB = InetAddress.getByName("127.0.8.2");
        try (StackInfoReader readerA = StackInfoReader.open(a.infoFile());
             StackInfoReader readerB = StackInfoReader.open(b.infoFile()))
        {
            assertEquals("info-a", readerA.name());
            assertTrue(readerA.isAlive());
            final Map<String, Long> countersA = readerA.counters();
            final Map<String, Long> countersB = readerB.counters();
            assertEquals(a.counters().get("send_queued"), countersA.get("send_queued"));
            assertEquals(TO_B + TO_SELF, countersA.get("send_queued"));
            assertEquals(b.counters().get("recv_delivered"), countersB.get("recv_delivered"));
            assertEquals(TO_B, countersB.get("recv_delivered"));
            assertEquals(TO_SELF, countersA.get("recv_delivered"));
            assertEquals(new ArrayList<>(a.counters().keySet()), new ArrayList<>(countersA.keySet()));
            final List<String> names = new ArrayList<>(countersA.keySet());
            assertTrue(names.indexOf("tcp_sndbuf_full") > names.indexOf("conn_refused_limit"),
                "the TCP transport's counter comes after the stack's: " + names);

            final StackInfoReader.ConnectionRecord tcp =
                new StackInfoReader.ConnectionRecord(addressA, addressB, "tcp", "UP", TO_B + 1, 0, 0, 0); // b sent no data
            final StackInfoReader.ConnectionRecord loop =
                new StackInfoReader.ConnectionRecord(addressA, addressA, "loop", "UP", TO_SELF + 1, TO_SELF + 1, 0, 0);
            final AtomicReference<StackInfoReader.Snapshot> last = new AtomicReference<>();
            Await.until(Duration.ofSeconds(20), () ->
            {
                last.set(readerA.snapshot());
                return last.get().connections().contains(tcp) && last.get().connections().contains(loop) &&
                    last.get().sockets().size() == 2;
            }, () -> "info-a's TCP and loopback connections in its file: " + last.get());
            final Map<Integer, StackInfoReader.SocketRecord> socketsA = byPort(last.get().sockets());
            assertEquals(new StackInfoReader.SocketRecord(new InetSocketAddress(addressA, 5000), "tcp", 0, 1 << 20, 0, 1 << 20, false),
                socketsA.get(5000));
            assertEquals(new StackInfoReader.SocketRecord(new InetSocketAddress(addressA, 5001), "tcp", 0, 1 << 20,
                TO_SELF * SIZE, 1 << 20, false), socketsA.get(5001), "holds what it has not received");

            final StackInfoReader.SocketRecord undrained =
                new StackInfoReader.SocketRecord(new InetSocketAddress(addressB, 5000), "tcp", 0, 1 << 20, TO_B * SIZE, 1 << 20, false);
            final StackInfoReader.ConnectionRecord tcpAtB =
                new StackInfoReader.ConnectionRecord(addressB, addressA, "tcp", "UP", 1, TO_B + 1, 0, 0);
            Await.until(Duration.ofSeconds(20), () ->
            {
                last.set(readerB.snapshot());
                return last.get().sockets().equals(List.of(undrained)) && last.get().connections().equals(List.of(tcpAtB));
            }, () -> "info-b's socket holding " + TO_B * SIZE + " bytes and its TCP connection: " + last.get());
        }
    }

    @Test
    void printsEachStackWithCountersConnectionsAndSockets()
    {
        final Result result = run("info", "--dir", dir.toString());
        assertEquals(0, result.code, result.toString());
        assertTrue(result.out.contains("stack info-a  pid " + ProcessHandle.current().pid()), result.toString());
        assertTrue(result.out.contains("stack info-b  pid "), result.toString());
        assertTrue(Pattern.compile("(?m)^ {4}recv_delivered +" + TO_B + "$").matcher(result.out).find(), result.toString());
        assertTrue(Pattern.compile("(?m)^ {4}send_queued +" + (TO_B + TO_SELF) + "$").matcher(result.out).find(), result.toString());
        assertFalse(result.out.contains("conn_bad_frame"), "zero counters are hidden without --all: " + result);
        assertTrue(Pattern.compile("(?m)^ {4}127\\.0\\.8\\.1 +127\\.0\\.8\\.2 +tcp +UP +" + (TO_B + 1) + " +0 +0 +0$")
            .matcher(result.out).find(), result.toString());
        assertTrue(Pattern.compile("(?m)^ {4}127\\.0\\.8\\.1 +127\\.0\\.8\\.1 +loop +UP +" + (TO_SELF + 1) + " ")
            .matcher(result.out).find(), result.toString());
        assertTrue(Pattern.compile("(?m)^ {4}127\\.0\\.8\\.2:5000 +tcp +0/1048576 +" + TO_B * SIZE + "/1048576 +no$")
            .matcher(result.out).find(), result.toString());

        final Result all = run("info", "--dir", dir.toString(), "--stack", "info-b", "--all");
        assertEquals(0, all.code, all.toString());
        assertTrue(all.out.contains("conn_bad_frame"), all.toString());
        assertTrue(Pattern.compile("(?m)^ {4}tcp_sndbuf_full +0$").matcher(all.out).find(), all.toString());
        assertFalse(all.out.contains("info-a"), all.toString());
    }

    @Test
    void jsonHasEveryCounterAndTheTables()
    {
        final Result result = run("info", "--dir", dir.toString(), "--stack", "info-b", "--json");
        assertEquals(0, result.code, result.toString());
        final String json = result.out.trim();
        assertTrue(json.startsWith("{\"directory\":") && json.endsWith("]}"), json);
        assertTrue(json.contains("\"name\":\"info-b\""), json);
        assertTrue(json.contains("\"recv_delivered\":" + TO_B), json);
        assertTrue(json.contains("\"conn_bad_frame\":0"), json);
        assertTrue(json.contains("\"local\":\"127.0.8.2\",\"remote\":\"127.0.8.1\",\"transport\":\"tcp\",\"state\":\"UP\""), json);
        assertTrue(json.contains("\"address\":\"127.0.8.2\",\"port\":5000"), json);
        assertTrue(json.contains("\"receive_queued_bytes\":" + TO_B * SIZE), json);
        assertTrue(json.contains("\"next_tx_sequence\":"), json);
        // one key style for every --json output: snake_case, as rds stress and rds ping
        assertFalse(Pattern.compile("\"[a-z0-9_]*[A-Z][A-Za-z0-9_]*\":").matcher(json).find(), json);
    }

    @Test
    void prometheusHasEveryCounterAndTheGauges()
    {
        final Result result = run("info", "--dir", dir.toString(), "--stack", "info-b", "--prometheus");
        assertEquals(0, result.code, result.toString());
        final String labels = "{stack=\"info-b\",pid=\"" + ProcessHandle.current().pid() + "\"}";
        final List<String> lines = List.of(result.out.split("\n"));
        assertTrue(lines.containsAll(List.of(
            "# HELP rds4j_recv_delivered_total rds4j stack counter recv_delivered.",
            "# TYPE rds4j_recv_delivered_total counter",
            "rds4j_recv_delivered_total" + labels + " " + TO_B,
            "rds4j_conn_bad_frame_total" + labels + " 0",
            "rds4j_tcp_sndbuf_full_total" + labels + " 0",
            "# TYPE rds4j_sockets gauge")), result.toString());
        assertEquals(b.counters().size(), lines.stream().filter(line -> line.matches("rds4j_\\w+_total\\{.*")).count(),
            "one sample per counter: " + result);
        Await.until(() ->
        {
            final String out = run("info", "--dir", dir.toString(), "--stack", "info-b", "--prometheus").out;
            return out.contains("rds4j_connections_up" + labels + " 1\n") && out.contains("rds4j_sockets" + labels + " 1\n");
        }, "info-b's TCP connection up and its socket in its snapshot");
        assertFalse(result.out.contains("info-a"), result.toString());

        final Result both = run("info", "--dir", dir.toString(), "--json", "--prometheus");
        assertEquals(2, both.code, both.toString());
        assertTrue(both.err.contains("--json and --prometheus are exclusive"), both.toString());
    }

    @Test
    void noSuchStackOrNoFilesExitsOne(@TempDir final Path empty)
    {
        final Result nosuch = run("info", "--dir", dir.toString(), "--stack", "nosuch");
        assertEquals(1, nosuch.code, nosuch.toString());
        assertTrue(nosuch.err.contains("no running rds4j stack named nosuch"), nosuch.toString());

        final Result none = run("info", "--dir", empty.resolve("never-created").toString());
        assertEquals(1, none.code, none.toString());
        assertTrue(none.err.contains("no running rds4j stack in"), none.toString());
    }

    @Test
    void staleFilesAreListedAndCleanDeletesThem(@TempDir final Path staleDir) throws Exception
    {
        final ByteBuffer copy = ByteBuffer.wrap(Files.readAllBytes(a.infoFile())).order(ByteOrder.nativeOrder());
        copy.putLong(16, Long.MAX_VALUE); // the pid field (StackInfoFile's layout): a process that does not exist
        final Path stale = Files.write(staleDir.resolve(Long.MAX_VALUE + "-info-a-1.rds4j"), copy.array());
        Files.write(staleDir.resolve("garbage.rds4j"), new byte[300]);

        final Result listed = run("info", "--dir", staleDir.toString());
        assertEquals(1, listed.code, "no running stack: " + listed);
        assertTrue(listed.out.contains("stale: " + stale + " (stack info-a, pid " + Long.MAX_VALUE + ": process not running)"),
            listed.toString());
        assertTrue(listed.err.contains("skipped " + staleDir.resolve("garbage.rds4j") + ": not an rds4j info file"), listed.toString());
        assertTrue(listed.err.contains("--clean deletes them"), listed.toString());
        assertTrue(Files.exists(stale));

        final Result cleaned = run("info", "--dir", staleDir.toString(), "--clean");
        assertTrue(cleaned.out.contains("deleted stale: " + stale), cleaned.toString());
        assertFalse(Files.exists(stale));
        assertTrue(Files.exists(staleDir.resolve("garbage.rds4j")), "only stale info files are deleted");
    }

    @Test
    void watchRefreshesUntilInterrupted() throws Exception
    {
        final StringWriter out = new StringWriter();
        final CommandLine cli = RdsCli.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(new StringWriter(), true));
        final AtomicInteger code = new AtomicInteger(-1);
        final Thread watcher = new Thread(() -> code.set(cli.execute("info", "--dir", dir.toString(), "--watch", "--interval", "20ms")));
        watcher.start();
        Await.until(() -> out.toString().split(Pattern.quote(InfoCommand.CLEAR_SCREEN), -1).length > 3, "three refreshes");
        watcher.interrupt();
        watcher.join(10_000);
        assertFalse(watcher.isAlive());
        assertEquals(0, code.get());
        assertTrue(out.toString().contains("stack info-a"), out.toString());
        // nothing is sent meanwhile: every counter shown has a rate of 0 after the first refresh
        assertTrue(out.toString().contains("counters (not zero; --all for all), per second since the last refresh:"), out.toString());
        assertTrue(Pattern.compile("(?m)^ {4}send_queued +" + (TO_B + TO_SELF) + " +0\\.0/s$").matcher(out.toString()).find(),
            out.toString());
    }

    @Test
    void helpAndBadInterval()
    {
        final Result help = run("info", "--help");
        assertEquals(0, help.code);
        for (final String option : new String[] {"--dir", "--stack", "--watch", "--interval", "--json", "--prometheus", "--all", "--clean"})
        {
            assertTrue(help.out.contains(option), option + " in " + help);
        }
        final Result bad = run("info", "--dir", dir.toString(), "--interval", "0.005");
        assertEquals(2, bad.code, bad.toString());
        assertTrue(bad.err.contains("--interval must be at least 10ms: 5ms"), bad.toString());
    }

    private static Map<Integer, StackInfoReader.SocketRecord> byPort(final List<StackInfoReader.SocketRecord> sockets)
    {
        final Map<Integer, StackInfoReader.SocketRecord> map = new java.util.HashMap<>();
        for (final StackInfoReader.SocketRecord socket : sockets)
        {
            assertNotNull(socket.address());
            map.put(socket.address().getPort(), socket);
        }
        return map;
    }

    private record Result(int code, String out, String err)
    {
        @Override
        public String toString()
        {
            return "exit " + code + "\noutput:\n" + out + "\nerrors:\n" + err;
        }
    }

    private static Result run(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cli = RdsCli.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        final int code = cli.execute(args);
        return new Result(code, out.toString(), err.toString());
    }
}
