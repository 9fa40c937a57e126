package org.rds4j.samples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.DriverServer;
import org.rds4j.core.test.Await;
import org.rds4j.transport.tcp.TcpConfig;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rds info --driver}: the clients of a driver, as a table and in the {@code --json} document. The client is
 * another process ({@code rds echo --driver}), since a driver lists every client but the one asking.
 */
class InfoDriverTest
{
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void listsTheDriversClientsAsATableAndAsJson(@TempDir final Path driverDir, @TempDir final Path infoDir)
        throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(27330, "127.0.8.5");
        final RdsStackConfig config = RdsStackConfig.builder().name("info-driver").infoDirectory(infoDir.toString())
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build()).build();
        try (DriverServer driver = DriverServer.start(config, driverDir, false))
        {
            final Process echo = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), RdsCli.class.getName(), "echo",
                "--driver", driverDir.toString(), "--bind", "127.0.8.5:5000").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            try
            {
                final String pid = String.valueOf(echo.pid());
                // attached, then its socket opened and bound: wait for both
                Await.until(WAIT, () -> clients(driverDir, infoDir).stream().anyMatch(c ->
                    ((Number)c.get("sockets")).intValue() == 1), () -> "the echo attached and bound: " +
                    CliRun.run("info", "--dir", infoDir.toString(), "--driver", driverDir.toString(), "--json").report());
                final Map<String, Object> client = clients(driverDir, infoDir).get(0);
                assertEquals(pid, String.valueOf(client.get("pid")));
                assertEquals(1, ((Number)client.get("sockets")).intValue());
                assertEquals(0, ((Number)client.get("send_queued_bytes")).intValue());
                assertEquals(0, ((Number)client.get("receive_untaken_bytes")).intValue());

                final CliRun table = CliRun.run("info", "--dir", infoDir.toString(), "--driver", driverDir.toString());
                assertEquals(0, table.code(), table.report());
                assertTrue(table.out().contains("driver " + driverDir + ": 1 client(s)"), table.report());
                assertEquals(List.of(pid, "1", "0", "0"), List.of(table.lines("  " + pid).get(0).trim().split(" +")),
                    table.report());
            }
            finally
            {
                echo.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            // a client that dies is forgotten at once
            Await.until(WAIT, () -> clients(driverDir, infoDir).isEmpty(), () -> "the echo's end noticed");
        }
    }

    @Test
    void noDriverIsAnErrorInTheDocumentAndTheExitStatus(@TempDir final Path nowhere, @TempDir final Path infoDir)
    {
        final CliRun run = CliRun.run("info", "--dir", infoDir.toString(), "--driver", nowhere.toString(), "--json");
        assertEquals(1, run.code(), run.report());
        @SuppressWarnings("unchecked")
        final Map<String, Object> driver = (Map<String, Object>)Json.object(run.out()).get("driver");
        assertEquals(nowhere.toString(), driver.get("directory"));
        assertTrue(String.valueOf(driver.get("error")).contains("no driver runs in " + nowhere), run.report());
        CliRun.assertUsageError("--driver is not available with --prometheus", "info", "--dir", infoDir.toString(),
            "--driver", nowhere.toString(), "--prometheus");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> clients(final Path driverDir, final Path infoDir)
    {
        final CliRun run = CliRun.run("info", "--dir", infoDir.toString(), "--driver", driverDir.toString(), "--json");
        final Map<String, Object> driver = (Map<String, Object>)Json.object(run.out()).get("driver");
        return (List<Map<String, Object>>)driver.get("clients");
    }
}
