package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.transport.tcp.TcpConfig;


class PingCommandTest
{
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void everyPingOfALiveStackIsAnswered() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26600, "127.0.9.1", "127.0.9.2");
        try (RdsStack target = pongStack(tcpPort, "127.0.9.2"))
        {
            final CliRun run = CliRun.run("ping", "127.0.9.2", "-c", "3", "-i", "0.01", "-I", "127.0.9.1", "--tcp-port", String.valueOf(tcpPort));

            assertEquals(0, run.code(), run.report());
            final List<String> seqLines = run.lines("seq=");
            assertEquals(3, seqLines.size(), run.report());
            for (int seq = 1; seq <= 3; seq++)
            {
                final String line = seqLines.get(seq - 1);
                assertTrue(line.matches("seq=" + seq + " from 127\\.0\\.9\\.2: time=\\d+\\.\\d us"), line);
            }
            assertTrue(run.out().contains("--- 127.0.9.2 rds ping: 3 sent, 3 received, 0% loss; rtt min/avg/max/p50/p90/p99 = "),
                run.report());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aHostNameIsResolvedAndQuietPrintsOnlyTheSummary() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26640, "127.0.0.1", "127.0.9.1");
        try (RdsStack target = pongStack(tcpPort, "127.0.0.1"))
        {
            final CliRun run = CliRun.run("ping", "localhost", "-q", "-c", "2", "-i", "10ms", "-I", "127.0.9.1",
                "--tcp-port", String.valueOf(tcpPort));

            assertEquals(0, run.code(), run.report());
            final List<String> lines = run.out().lines().collect(Collectors.toList());
            assertEquals(1, lines.size(), run.report());
            assertTrue(lines.get(0).startsWith("--- localhost (127.0.0.1) rds ping: 2 sent, 2 received, 0% loss; rtt "),
                run.report());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void jsonHasOneObjectPerPingAndTheSummaryLast() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26660, "127.0.9.1", "127.0.9.2");
        try (RdsStack target = pongStack(tcpPort, "127.0.9.2"))
        {
            final CliRun run = CliRun.run("ping", "127.0.9.2", "--json", "-c", "2", "-i", "0", "-s", "1k", "-I", "127.0.9.1",
                "--tcp-port", String.valueOf(tcpPort));

            assertEquals(0, run.code(), run.report());
            final List<Map<String, Object>> lines = run.out().lines().map(Json::object).collect(Collectors.toList());
            assertEquals(3, lines.size(), run.report());
            for (int seq = 1; seq <= 2; seq++)
            {
                final Map<String, Object> pong = lines.get(seq - 1);
                assertEquals("pong", pong.get("type"), run.report());
                assertEquals(seq, pong.get("seq"), run.report());
                assertEquals("127.0.9.2", pong.get("from"), run.report());
                assertTrue(((Number)pong.get("rtt_us")).doubleValue() > 0, run.report());
            }
            final Map<String, Object> summary = lines.get(2);
            assertEquals("summary", summary.get("type"));
            assertEquals("127.0.9.2", summary.get("destination"));
            assertEquals(2, summary.get("sent"));
            assertEquals(2, summary.get("received"));
            assertEquals(0, summary.get("lost"));
            final Map<?, ?> rtt = (Map<?, ?>)summary.get("rtt_us");
            for (final String key : new String[] {"min", "avg", "max", "p50", "p90", "p99", "p999"})
            {
                assertTrue(((Number)rtt.get(key)).doubleValue() > 0, key + " in " + summary);
            }
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theDeadlineEndsAnUnboundedRun() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26680, "127.0.9.1", "127.0.9.2");
        try (RdsStack target = pongStack(tcpPort, "127.0.9.2"))
        {
            final long start = System.nanoTime();
            final CliRun run = CliRun.run("ping", "127.0.9.2", "-w", "0.6", "-i", "0.1", "-I", "127.0.9.1",
                "--tcp-port", String.valueOf(tcpPort));
            final long elapsed = System.nanoTime() - start;

            assertEquals(0, run.code(), run.report());
            // without -c, -w alone bounds the run: more than the default 5 pings fit in 0.6 s at 0.1 s apart
            assertTrue(run.lines("seq=").size() >= 6, run.report());
            assertTrue(elapsed < TimeUnit.SECONDS.toNanos(5), "took " + elapsed + " ns: " + run.report());

            // -c and -w: the count must be answered before the deadline
            final CliRun tooMany = CliRun.run("ping", "127.0.9.2", "-c", "1000", "-w", "0.3", "-i", "0.05", "-q",
                "-I", "127.0.9.1", "--tcp-port", String.valueOf(tcpPort));
            assertEquals(PingCommand.EXIT_LOST, tooMany.code(), tooMany.report());
            assertTrue(tooMany.out().matches("(?s)--- 127\\.0\\.9\\.2 rds ping: (\\d+) sent, \\1 received, 0% loss.*"),
                tooMany.report());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pingsToAnAddressWithoutAStackAreLost()
    {
        final int tcpPort = TestPorts.freeTcpPort(26620, "127.0.9.1", "127.0.9.99");

        final CliRun run = CliRun.run("ping", "127.0.9.99", "-c", "2", "-i", "10ms", "-W", "200ms", "-I", "127.0.9.1",
            "--tcp-port", String.valueOf(tcpPort));

        assertEquals(PingCommand.EXIT_LOST, run.code(), run.report());
        assertEquals(List.of("seq=1 timeout", "seq=2 timeout"), run.lines("seq="), run.report());
        assertTrue(run.out().contains("--- 127.0.9.99 rds ping: 2 sent, 0 received, 100% loss"), run.report());
        assertFalse(run.out().contains("rtt"), run.report());
    }

    @Test
    void badArgumentsAreUsageErrors()
    {
        CliRun.assertUsageError("without a port", "ping", "127.0.9.2:4000");
        CliRun.assertUsageError("unknown host: no-such-host.invalid", "ping", "no-such-host.invalid");
        CliRun.assertUsageError("-c must be", "ping", "127.0.9.2", "-c", "-1");
        CliRun.assertUsageError("-s must be", "ping", "127.0.9.2", "-s", "2m");
        CliRun.assertUsageError("'1x' is not a size", "ping", "127.0.9.2", "-s", "1x");
        CliRun.assertUsageError("-W/--timeout must be at least 1ms: 0s", "ping", "127.0.9.2", "--timeout", "0");
        CliRun.assertUsageError("-w must be more than 0", "ping", "127.0.9.2", "-w", "0");
        CliRun.assertUsageError("'-5' is not a duration", "ping", "127.0.9.2", "-i", "-5");
        CliRun.assertUsageError("Missing required parameter", "ping");
    }

    @Test
    void successIsAnyAnswerUnlessACountAndADeadlineAreBothGiven()
    {
        assertTrue(PingCommand.answeredEnough(5L, null, 1));
        assertTrue(PingCommand.answeredEnough(null, null, 1));
        assertFalse(PingCommand.answeredEnough(5L, null, 0));
        assertTrue(PingCommand.answeredEnough(null, Duration.ofSeconds(1), 1));
        assertFalse(PingCommand.answeredEnough(3L, Duration.ofSeconds(1), 2));
        assertTrue(PingCommand.answeredEnough(3L, Duration.ofSeconds(1), 3));
        assertTrue(PingCommand.answeredEnough(0L, Duration.ofSeconds(1), 1));
    }

    @Test
    void summaryStatistics()
    {
        final PingCommand.Statistics statistics = new PingCommand.Statistics(TimeUnit.HOURS.toNanos(1));
        for (final long rtt : new long[] {90_200, 40_100, 52_300, 55_000, 37_400})
        {
            statistics.recordReceived(rtt);
        }
        // min, avg and max exact; the percentiles within the histogram's 3 digits
        assertEquals("--- 127.0.0.2 rds ping: 5 sent, 5 received, 0% loss; rtt min/avg/max/p50/p90/p99 = "
            + "37.4/55.0/90.2/52.3/90.2/90.2 us", statistics.summary("127.0.0.2"));
        assertEquals("{\"type\":\"summary\",\"destination\":\"d\",\"address\":\"127.0.0.2\",\"sent\":5,\"received\":5,"
            + "\"lost\":0,\"loss_pct\":0,\"rtt_us\":{\"min\":37.4,\"avg\":55,\"max\":90.2,\"p50\":52.319,\"p90\":90.2,"
            + "\"p99\":90.2,\"p999\":90.2}}", statistics.summaryJson("d", "127.0.0.2").toString());
        statistics.recordLost();
        assertEquals(5, statistics.received());
        assertTrue(statistics.summary("x").startsWith("--- x rds ping: 6 sent, 5 received, 16.7% loss"));
        assertEquals("0", PingCommand.Statistics.lossPercent(0, 0));
        assertEquals("100", PingCommand.Statistics.lossPercent(2, 2));
        assertEquals("0.1", PingCommand.Statistics.lossPercent(100_000, 1));
        assertEquals("99.9", PingCommand.Statistics.lossPercent(100_000, 99_999));

        final PingCommand.Statistics none = new PingCommand.Statistics(TimeUnit.HOURS.toNanos(1));
        assertEquals("--- y rds ping: 0 sent, 0 received, 0% loss", none.summary("y"));
        assertNull(Json.object(none.summaryJson("y", "127.0.0.3").toString()).get("rtt_us"));
    }

    @Test
    void memoryDoesNotGrowWithThePings()
    {
        final PingCommand.Statistics statistics = new PingCommand.Statistics(TimeUnit.HOURS.toNanos(1));
        final int before = statistics.footprint();
        for (long i = 1; i <= 1_000_000; i++)
        {
            statistics.recordReceived(i * 997 % 50_000_000);
        }
        assertEquals(before, statistics.footprint());
        assertEquals(1_000_000, statistics.received());
    }

    /** @return a stack bound on {@code address} (any port: the stack answers port 0 itself). */
    private static RdsStack pongStack(final int tcpPort, final String address) throws Exception
    {
        final RdsStack stack = RdsStack.open(RdsStackConfig.builder().name("pong")
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build()).build());
        final RdsSocket socket = stack.openSocket();
        socket.bind(new InetSocketAddress(InetAddress.getByName(address), 4000));
        return stack;
    }
}
