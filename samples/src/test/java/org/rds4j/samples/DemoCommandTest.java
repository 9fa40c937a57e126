package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import picocli.CommandLine;

class DemoCommandTest
{
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void everyPairReceivesAllMessagesInOrder()
    {
        final int tcpPort = TestPorts.freeTcpPort(26395, "127.0.0.1", "127.0.0.2", "127.0.0.3");
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cli = new CommandLine(new RdsCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));

        final int code = cli.execute("demo", "--messages", "200", "--tcp-port", String.valueOf(tcpPort));

        final String report = "output:\n" + out + "\nerrors:\n" + err;
        assertEquals(0, code, report);
        final List<String> pairLines = out.toString().lines().filter(l -> l.contains(" -> ")).collect(Collectors.toList());
        assertEquals(6, pairLines.size(), report);
        for (int from = 1; from <= 3; from++)
        {
            for (int to = 1; to <= 3; to++)
            {
                if (from != to)
                {
                    final String expected = "node" + from + " -> node" + to + ": received 200 of 200, in order: yes";
                    assertTrue(pairLines.contains(expected), "missing '" + expected + "' in " + report);
                }
            }
        }
        assertTrue(out.toString().contains("demo: OK"), report);
        assertTrue(out.toString().contains("counters of node1:"), report);
    }

    @Test
    void badOptionsAreUsageErrors()
    {
        CliRun.assertUsageError("--size must be", "demo", "--size", "4");
        CliRun.assertUsageError("--messages must be", "demo", "--messages", "0");
        CliRun.assertUsageError("--port must be", "demo", "--port", "1");
        CliRun.assertUsageError("'udp' is not a transport", "demo", "--transport", "udp");
        CliRun.assertUsageError("--tcp-port", "demo", "--tcp-port", "70000");
        CliRun.assertUsageError("Missing required subcommand");
    }

    @Test
    void everyCommandHasHelp()
    {
        for (final String[] args : new String[][] {{"--help"}, {"demo", "--help"}, {"echo", "--help"}, {"help", "demo"}})
        {
            final StringWriter out = new StringWriter();
            final CommandLine cli = new CommandLine(new RdsCli());
            cli.setOut(new PrintWriter(out, true));
            assertEquals(0, cli.execute(args), String.join(" ", args));
            assertTrue(out.toString().startsWith("Usage: rds"), out.toString());
            if (args.length > 1)
            {
                assertTrue(out.toString().contains("--tcp-port"), out.toString());
                assertTrue(out.toString().contains("--transport"), out.toString());
            }
        }
    }

}
