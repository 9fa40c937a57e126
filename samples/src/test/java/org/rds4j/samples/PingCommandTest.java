package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
        try (RdsStack target = RdsStack.open(RdsStackConfig.builder().name("pong")
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build()).build());
            RdsSocket socket = target.openSocket())
        {
            // any port: the bind makes the stack listen on 127.0.9.2, and the stack answers port 0 itself
            socket.bind(new InetSocketAddress(InetAddress.getByName("127.0.9.2"), 4000));

            final CliRun run = CliRun.run("ping", "127.0.9.2", "-c", "3", "-i", "10", "-I", "127.0.9.1", "--tcp-port", String.valueOf(tcpPort));

            assertEquals(0, run.code(), run.report());
            final List<String> seqLines = run.lines("seq=");
            assertEquals(3, seqLines.size(), run.report());
            for (int seq = 1; seq <= 3; seq++)
            {
                final String line = seqLines.get(seq - 1);
                assertTrue(line.matches("seq=" + seq + " from 127\\.0\\.9\\.2: time=\\d+\\.\\d us"), line);
            }
            assertTrue(run.out().contains("--- 127.0.9.2 rds ping: 3 sent, 3 received, 0% loss; rtt min/avg/max/p50/p99 = "),
                run.report());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pingsToAnAddressWithoutAStackAreLost()
    {
        final int tcpPort = TestPorts.freeTcpPort(26620, "127.0.9.1", "127.0.9.99");

        final CliRun run = CliRun.run("ping", "127.0.9.99", "-c", "2", "-i", "10", "--timeout", "200", "-I", "127.0.9.1",
            "--tcp-port", String.valueOf(tcpPort));

        assertEquals(PingCommand.EXIT_LOST, run.code(), run.report());
        assertEquals(List.of("seq=1 timeout", "seq=2 timeout"), run.lines("seq="), run.report());
        assertTrue(run.out().contains("--- 127.0.9.99 rds ping: 2 sent, 0 received, 100% loss"), run.report());
        assertTrue(!run.out().contains("rtt"), run.report());
    }

    @Test
    void badArgumentsAreUsageErrors()
    {
        CliRun.assertUsageError("without a port", "ping", "127.0.9.2:4000");
        CliRun.assertUsageError("not an IP address", "ping", "localhost");
        CliRun.assertUsageError("-c must be", "ping", "127.0.9.2", "-c", "-1");
        CliRun.assertUsageError("-s must be", "ping", "127.0.9.2", "-s", "2000000");
        CliRun.assertUsageError("--timeout must be", "ping", "127.0.9.2", "--timeout", "0");
        CliRun.assertUsageError("-i must not be negative", "ping", "127.0.9.2", "-i", "-5");
        CliRun.assertUsageError("Missing required parameter", "ping");
    }

    @Test
    void summaryStatistics()
    {
        final PingCommand.Statistics statistics = new PingCommand.Statistics();
        for (final double rtt : new double[] {90.2, 40.1, 52.3, 55.0, 37.4})
        {
            statistics.recordReceived(rtt);
        }
        assertEquals("--- 127.0.0.2 rds ping: 5 sent, 5 received, 0% loss; rtt min/avg/max/p50/p99 = "
            + "37.4/55.0/90.2/52.3/90.2 us", statistics.summary("127.0.0.2"));
        statistics.recordLost();
        assertEquals(1, statistics.lost());
        assertTrue(statistics.summary("x").startsWith("--- x rds ping: 6 sent, 5 received, 16.7% loss"));
        assertEquals("0", PingCommand.Statistics.lossPercent(0, 0));
        assertEquals("100", PingCommand.Statistics.lossPercent(2, 2));
        assertEquals("0.1", PingCommand.Statistics.lossPercent(100_000, 1));
        assertEquals("99.9", PingCommand.Statistics.lossPercent(100_000, 99_999));
        assertEquals(2.0, PingCommand.Statistics.percentile(new double[] {1, 2, 3, 4}, 50));
        assertEquals(4.0, PingCommand.Statistics.percentile(new double[] {1, 2, 3, 4}, 99));
        assertEquals(7.0, PingCommand.Statistics.percentile(new double[] {7}, 50));
    }

}
