package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.core.test.Await;

import picocli.CommandLine;

/**
 * {@code rds stress} end to end: a passive and an active node, each a command with its own stack, on 127.0.11.1
 * and 127.0.11.2 in this JVM. The checks of single messages are unit-tested in {@code stress/*Test}.
 */
class StressCommandTest
{
    private static final String PASSIVE = "127.0.11.2:4000";
    private static final String ACTIVE = "127.0.11.1:4000";

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void requestReplyWithVerifyLosesNothingAndMeasuresRoundTrips() throws Exception
    {
        final String port = tcpPort(26700);
        final Node passive = Node.start("stress", "--bind", PASSIVE, "--duration", "10", "--json", "--tcp-port", port);
        passive.awaitStarted();
        final Node active = Node.start("stress", "--bind", ACTIVE, "--peer", PASSIVE, "--duration", "1s", "--tasks", "2",
            "--depth", "4", "--size", "200", "--ack-size", "64", "--verify", "--json", "--report-interval", "250ms",
            "--warmup", "250ms", "--tcp-port", port);

        assertEquals(0, active.await(), active.report());
        assertEquals(0, passive.await(), passive.report());
        final Map<String, Object> a = active.summary();
        final Map<String, Object> p = passive.summary();
        for (final Map<String, Object> s : List.of(a, p))
        {
            assertNothingWrong(s);
            for (final String key : new String[] {"sent", "received", "msgs_per_s", "mb_per_s", "retransmits", "reconnects",
                "cpu_pct"})
            {
                assertNotNull(s.get(key), key + " in " + s);
            }
            assertEquals(Boolean.TRUE, s.get("ok"));
        }
        assertTrue(number(a, "sent") > 0, a.toString());
        assertEquals(number(a, "sent"), number(p, "received"), "every request arrived");
        assertEquals(number(a, "sent"), number(a, "replies"), "every request was answered");
        assertEquals(number(a, "sent"), number(p, "replies_sent"));
        assertEquals(0L, number(a, "received"), "nobody sends to the active node");
        assertTrue(num(a, "msgs_per_s") > 0 && num(p, "msgs_per_s") > 0);

        final Map<?, ?> rtt = (Map<?, ?>)a.get("rtt_us");
        assertNotNull(rtt, a.toString());
        final double p50 = num(rtt, "p50");
        assertTrue(p50 > 0, a.toString());
        assertTrue(p50 <= num(rtt, "p90") && num(rtt, "p90") <= num(rtt, "p99")
            && num(rtt, "p99") <= num(rtt, "p999") && num(rtt, "p999") <= num(rtt, "max"), a.toString());
        assertEquals(null, p.get("rtt_us"), "the passive node measures no round trips");

        // the steady figures leave the warm-up out: fewer messages and round trips over a shorter window
        final Map<?, ?> steady = (Map<?, ?>)a.get("steady");
        assertNotNull(steady, a.toString());
        assertEquals(0.25, num(steady, "warmup_s"));
        // the window starts at the end of the warm-up or later; JSON gives seconds to 3 places, each within 0.0005
        assertTrue(num(steady, "elapsed_s") > 0 && num(steady, "elapsed_s") <= num(a, "elapsed_s") - 0.25 + 0.001,
            a.toString());
        assertTrue(num(steady, "msgs_per_s") > 0 && num(steady, "mb_per_s") > 0, a.toString());
        assertTrue(num(steady, "msgs_per_s") * num(steady, "elapsed_s") < number(a, "sent"), a.toString());
        final long steadyTrips = ((Number)((Map<?, ?>)steady.get("rtt_us")).get("count")).longValue();
        assertTrue(steadyTrips > 0 && steadyTrips < ((Number)rtt.get("count")).longValue(), a.toString());
        assertEquals(null, p.get("steady"), "the passive node's default 2 s warm-up outlasts its 1 s of requests");

        // every line is one JSON object: start, intervals, summary last
        final List<Map<String, Object>> lines = active.jsonLines();
        assertEquals("start", lines.get(0).get("type"));
        assertTrue(lines.stream().filter(l -> "interval".equals(l.get("type"))).count() >= 2, active.report());
        assertEquals("summary", lines.get(lines.size() - 1).get("type"));
        passive.jsonLines();
    }

    /**
     * With one task (the default), the task reads its replies itself: the active node runs no receive thread, so a
     * round trip costs the tool no hand-off between its own threads. Nothing else changes: every request is
     * answered and checked.
     */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void oneTaskReadsItsOwnRepliesAndLosesNothing() throws Exception
    {
        final String port = tcpPort(26790);
        final Node passive = Node.start("stress", "--bind", PASSIVE, "--duration", "10", "--json", "--tcp-port", port);
        passive.awaitStarted();
        final Node active = Node.start("stress", "--bind", ACTIVE, "--peer", PASSIVE, "--duration", "1s", "--verify",
            "--json", "--tcp-port", port);
        Await.until(Duration.ofSeconds(10), () -> threadNamed("stress-task-0-" + ACTIVE) || !active.thread.isAlive(),
            () -> "the active node's task: " + active.report());
        assertTrue(threadNamed("stress-task-0-" + ACTIVE), "the task ended before it was seen: " + active.report());
        assertFalse(threadNamed("stress-receive-" + ACTIVE), "the active node's task reads, no thread of its own");
        assertTrue(threadNamed("stress-receive-" + PASSIVE), "a passive node has its receive thread");

        assertEquals(0, active.await(), active.report());
        assertEquals(0, passive.await(), passive.report());
        final Map<String, Object> a = active.summary();
        final Map<String, Object> p = passive.summary();
        assertNothingWrong(a);
        assertNothingWrong(p);
        assertTrue(number(a, "sent") > 0, a.toString());
        assertEquals(number(a, "sent"), number(p, "received"), "every request arrived");
        assertEquals(number(a, "sent"), number(a, "replies"), "every request was answered");
        assertEquals(number(a, "sent"), ((Number)((Map<?, ?>)a.get("rtt_us")).get("count")).longValue(),
            "every reply's round trip was recorded");
    }

    /** A summary with nothing lost, duplicated, reordered, corrupted or refused. */
    private static void assertNothingWrong(final Map<String, Object> summary)
    {
        for (final String key : new String[] {"lost", "duplicated", "reordered", "verify_errors", "send_errors"})
        {
            assertEquals(0L, number(summary, key), key + " in " + summary);
        }
    }

    private static boolean threadNamed(final String name)
    {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name));
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void oneWayPassiveEndsOnDoneHavingReceivedExactlyWhatWasSent() throws Exception
    {
        final String port = tcpPort(26720);
        final Node passive = Node.start("stress", "--bind", PASSIVE, "--duration", "20", "--json", "--tcp-port", port);
        passive.awaitStarted();
        final Node active = Node.start("stress", "--bind", ACTIVE, "--peer", PASSIVE, "--one-way", "--verify",
            "--duration", "1", "--size", "1k", "--json", "--tcp-port", port);

        assertEquals(0, active.await(), active.report());
        final long activeEnded = System.nanoTime();
        assertEquals(0, passive.await(), passive.report());
        assertTrue(System.nanoTime() - activeEnded < TimeUnit.SECONDS.toNanos(5),
            "the passive node should end on DONE, not after its --duration 20");
        final Map<String, Object> a = active.summary();
        final Map<String, Object> p = passive.summary();
        assertTrue(number(a, "sent") > 0, a.toString());
        assertEquals(number(a, "sent"), number(p, "received"), "received == sent exactly");
        assertEquals(1L, number(p, "senders_done"));
        assertEquals(1L, number(a, "tasks_done_acked"));
        for (final Map<String, Object> s : List.of(a, p))
        {
            assertEquals(0L, number(s, "lost"), s.toString());
            assertEquals(0L, number(s, "duplicated"), s.toString());
            assertEquals(0L, number(s, "reordered"), s.toString());
            assertEquals(0L, number(s, "verify_errors"), s.toString());
            assertEquals(null, s.get("rtt_us"), "one-way: no round trips");
        }
        assertEquals(0L, number(p, "replies_sent"));
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void fixedRateSendsOnScheduleAndMeasuresRoundTrips() throws Exception
    {
        final String port = tcpPort(26740);
        final Node passive = Node.start("stress", "--bind", PASSIVE, "--duration", "10", "--json", "--tcp-port", port);
        passive.awaitStarted();
        // a window of 16 lets the schedule catch up after a slow first round trip (connection set-up, a cold JIT);
        // with depth 1 a task can never send faster than one request per round trip
        final Node active = Node.start("stress", "--bind", ACTIVE, "--peer", PASSIVE, "--rate", "1000", "--depth", "16",
            "--duration", "1", "--json", "--tcp-port", port);

        assertEquals(0, active.await(), active.report());
        assertEquals(0, passive.await(), passive.report());
        final Map<String, Object> a = active.summary();
        final long sent = number(a, "sent");
        assertTrue(sent >= 800 && sent <= 1200, "1000/s for 1 s, sent " + sent);
        assertEquals(sent, number(passive.summary(), "received"));
        assertTrue(num((Map<?, ?>)a.get("rtt_us"), "p50") > 0, a.toString());
        final double rate = num(a, "msgs_per_s");
        assertTrue(rate > 700 && rate < 1300, "msgs_per_s " + rate);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void textReportAndTwoActiveNodesSendingToEachOther() throws Exception
    {
        // both nodes send and answer; each ends once its own tasks are acknowledged and the other said DONE
        final String port = tcpPort(26760);
        final Node one = Node.start("stress", "--bind", ACTIVE, "--peer", PASSIVE, "--duration", "1", "--depth", "2",
            "--size", "64", "--verify", "--report-interval", "0.5", "--tcp-port", port);
        final Node two = Node.start("stress", "--bind", PASSIVE, "--peer", ACTIVE, "--duration", "1", "--one-way",
            "--size", "64", "--verify", "--report-interval", "0.5", "--tcp-port", port);
        assertEquals(0, one.await(), one.report());
        assertEquals(0, two.await(), two.report());
        for (final Node node : List.of(one, two))
        {
            final String out = node.out.toString();
            assertTrue(out.startsWith("stress: active node on "), out);
            assertTrue(out.contains("rtt p50"), out);
            assertTrue(out.contains(" MB/s (1 MB = 10^6 bytes), cpu "), out);
            assertTrue(out.contains("lost 0, unconfirmed 0, duplicated 0, reordered 0, verify errors 0, send errors 0"), out);
            assertTrue(out.trim().endsWith("stress: OK"), out);
        }
        assertTrue(one.out.toString().contains("rtt us: p50 "), one.report());
        assertFalse(two.out.toString().contains("rtt us: p50 "), "one-way: " + two.report());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aPeerThatNeverAnswersFailsTheRun() throws Exception
    {
        final String port = tcpPort(26780);
        final Node active = Node.start("stress", "--bind", ACTIVE, "--peer", "127.0.11.3:4000", "--duration", "0.3",
            "--grace", "0.3", "--report-interval", "0", "--json", "--tcp-port", port);
        assertEquals(1, active.await(), active.report());
        final Map<String, Object> a = active.summary();
        assertEquals(Boolean.FALSE, a.get("ok"));
        assertTrue(number(a, "sent") > 0, a.toString());
        assertEquals(number(a, "sent"), number(a, "unanswered"), a.toString());
        // no DONE_ACK says what arrived: unconfirmed, not lost
        assertEquals(number(a, "sent"), number(a, "unconfirmed"), a.toString());
        assertEquals(0L, number(a, "lost"), a.toString());
        assertEquals(0L, number(a, "tasks_done_acked"));
        assertTrue(a.get("problems").toString().contains(number(a, "sent") + " unconfirmed: requests unanswered of tasks "
            + "whose DONE_ACK did not come"), a.toString());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aDoneQueuedBehindASlowLinkIsWaitedForAndNothingIsCalledLost() throws Exception
    {
        // the active node's stack connects to the passive node's address on its own --tcp-port, where a relay passes
        // 256 KB/s on to the passive stack's port: the 1 MiB send queue is full when sending ends, and its DONE waits
        // behind it about 4 s, longer than the 0.5 s grace
        final int passivePort = TestPorts.freeTcpPort(26800, "127.0.11.1", "127.0.11.2");
        final int activePort = TestPorts.freeTcpPort(passivePort + 1, "127.0.11.1", "127.0.11.2");
        try (ThrottledRelay relay = new ThrottledRelay(new InetSocketAddress("127.0.11.2", activePort),
            InetAddress.getByName("127.0.11.1"), new InetSocketAddress("127.0.11.2", passivePort), 256_000))
        {
            final Node passive = Node.start("stress", "--bind", PASSIVE, "--duration", "30", "--json",
                "--tcp-port", String.valueOf(passivePort));
            passive.awaitStarted();
            final long started = System.nanoTime();
            final Node active = Node.start("stress", "--bind", ACTIVE, "--peer", PASSIVE, "--one-way", "--size", "2048",
                "--duration", "0.5", "--grace", "0.5", "--report-interval", "0", "--json", "--tcp-port",
                String.valueOf(activePort));

            assertEquals(0, active.await(), active.report());
            assertTrue(System.nanoTime() - started > TimeUnit.SECONDS.toNanos(2), "the DONE did not wait: " + active.report());
            assertEquals(0, passive.await(), passive.report());
            final Map<String, Object> a = active.summary();
            assertEquals(0L, number(a, "lost"), a.toString());
            assertEquals(0L, number(a, "unconfirmed"), a.toString());
            assertEquals(1L, number(a, "tasks_done_acked"), a.toString());
            assertEquals(number(a, "sent"), number(passive.summary(), "received"), passive.report());
        }
    }

    @Test
    void helpAndUsageErrors()
    {
        final StringWriter out = new StringWriter();
        final CommandLine cli = new CommandLine(new RdsCli());
        cli.setOut(new PrintWriter(out, true));
        // picocli warns on System.err about a description it cannot format (an unescaped %)
        final PrintStream systemErr = System.err;
        final ByteArrayOutputStream warnings = new ByteArrayOutputStream();
        System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
        try
        {
            assertEquals(0, cli.execute("stress", "--help"));
        }
        finally
        {
            System.setErr(systemErr);
        }
        assertEquals("", warnings.toString(StandardCharsets.UTF_8));
        for (final String option : new String[] {"Usage: rds stress", "--bind", "--peer", "--tasks", "--depth", "--size",
            "--ack-size", "--one-way", "--duration", "--verify", "--rate", "--json", "--report-interval", "--grace",
            "--warmup", "--tcp-port", "--transport"})
        {
            assertTrue(out.toString().contains(option), option + " missing from\n" + out);
        }

        CliRun.assertUsageError("Missing required option: '--bind=IP:PORT'", "stress");
        CliRun.assertUsageError("--size must be 32..1048576", "stress", "--bind", ACTIVE, "--size", "31");
        CliRun.assertUsageError("--ack-size must be 32..1048576", "stress", "--bind", ACTIVE, "--ack-size", "2000000");
        CliRun.assertUsageError("--tasks must be", "stress", "--bind", ACTIVE, "--tasks", "0");
        CliRun.assertUsageError("--depth must be", "stress", "--bind", ACTIVE, "--depth", "0");
        CliRun.assertUsageError("--duration must be more than 0 and at most 720h: 0s", "stress", "--bind", ACTIVE, "--duration", "0");
        CliRun.assertUsageError("'1.5s' is not a duration", "stress", "--bind", ACTIVE, "--grace", "1.5s");
        CliRun.assertUsageError("--warmup must be at most 720h: 721h", "stress", "--bind", ACTIVE, "--warmup", "721h");
        CliRun.assertUsageError("--report-interval must be 0 (none) or 10ms..720h: 5ms", "stress", "--bind", ACTIVE,
            "--report-interval", "5ms");
        CliRun.assertUsageError("--size must be 32..1048576 bytes (the stress header takes 32): 2097152", "stress", "--bind",
            ACTIVE, "--size", "2m");
        CliRun.assertUsageError("--rate must be", "stress", "--bind", ACTIVE, "--rate", "-1");
        CliRun.assertUsageError("the same peer is given twice", "stress", "--bind", ACTIVE, "--peer", PASSIVE, "--peer", PASSIVE);
        CliRun.assertUsageError("'udp' is not a transport", "stress", "--bind", ACTIVE, "--transport", "udp");
    }


    private static String tcpPort(final int first)
    {
        return String.valueOf(TestPorts.freeTcpPort(first, "127.0.11.1", "127.0.11.2", "127.0.11.3"));
    }

    private static long number(final Map<String, Object> json, final String key)
    {
        final Object value = json.get(key);
        assertTrue(value instanceof Integer || value instanceof Long, key + " is not a whole number in " + json);
        return ((Number)value).longValue();
    }

    /** One {@code rds} command running on its own thread, its output captured. */
    private static final class Node
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        private final Thread thread;
        private volatile int code = -1;

        private Node(final String... args)
        {
            final CommandLine cli = new CommandLine(new RdsCli());
            cli.setOut(new PrintWriter(out, true));
            cli.setErr(new PrintWriter(err, true));
            thread = new Thread(() -> code = cli.execute(args), "test-" + args[2]);
            thread.setDaemon(true);
        }

        static Node start(final String... args)
        {
            final Node node = new Node(args);
            node.thread.start();
            return node;
        }

        /** Waits for the first output line, printed once the socket is bound. */
        void awaitStarted()
        {
            Await.until(Duration.ofSeconds(10), () -> !out.toString().isEmpty() || !thread.isAlive(),
                () -> "the node to start: " + report());
            assertFalse(out.toString().isEmpty(), "the node did not start: " + report());
        }

        int await() throws InterruptedException
        {
            thread.join(TimeUnit.SECONDS.toMillis(20));
            assertFalse(thread.isAlive(), "still running: " + report());
            return code;
        }

        List<Map<String, Object>> jsonLines()
        {
            return out.toString().lines().map(Json::object).collect(Collectors.toList());
        }

        Map<String, Object> summary()
        {
            final List<Map<String, Object>> lines = jsonLines();
            final Map<String, Object> last = lines.get(lines.size() - 1);
            assertEquals("summary", last.get("type"), report());
            return last;
        }

        String report()
        {
            return "output:\n" + out + "\nerrors:\n" + err;
        }
    }

    private static double num(final Map<?, ?> json, final String key)
    {
        return ((Number)json.get(key)).doubleValue();
    }
}
