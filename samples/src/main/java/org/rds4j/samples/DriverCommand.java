package org.rds4j.samples;

import org.rds4j.RdsStackConfig;
import org.rds4j.core.DriverServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code rds driver}: runs a stack as a process of its own that every JVM of the host attaches to
 * ({@code --driver DIR}, or {@code rds4j.driver.dir}), until it is stopped (SIGTERM, Ctrl-C).
 */
@Command(
    name = "driver",
    description = {
        "Run an RDS stack that every process on this host shares: they attach with --driver (or rds4j.driver.dir) " +
            "and share its one connection per node pair, as processes share the kernel's RDS.",
        "Runs until stopped (SIGTERM, Ctrl-C)."},
    mixinStandardHelpOptions = true)
final class DriverCommand implements Callable<Integer>
{
    @Mixin
    private StackOptions stackOptions;

    @Option(
        names = "--dir",
        paramLabel = "DIR",
        description = "The driver's directory (its socket, lock and congestion file). Default: ${DEFAULT-VALUE}.")
    private Path directory = Path.of(RdsStackConfig.defaultDriverDirectory());

    @Option(
        names = "--group",
        description = "Let the directory's group use the driver too (files rw for the group); else its user only.")
    private boolean group;

    @picocli.CommandLine.Spec
    private picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        final RdsStackConfig config = stackOptions.configBuilder("driver").driverDirectory("").build();
        final DriverServer driver = DriverServer.start(config, directory, group);
        final Thread stop = new Thread(driver::close, "rds-driver-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        final PrintWriter out = spec.commandLine().getOut();
        out.println("rds driver: serving " + directory + " (pid " + ProcessHandle.current().pid() + ")");
        out.flush();
        driver.awaitStopped();
        return 0;
    }
}
