package org.rds4j.samples;

import java.io.IOException;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The {@code rds} command line, the main class of {@code rds.jar}: {@code rds demo}, {@code echo}, {@code ping},
 * {@code stress}, {@code info}, {@code cp}, and {@code rds help <command>}. Run {@code java -jar rds.jar --help}.
 */
@Command(
    name = "rds",
    mixinStandardHelpOptions = true,
    versionProvider = RdsCli.Version.class,
    description = "Reliable Datagram Sockets (Linux RDS semantics) for the JVM: samples and tools.",
    subcommands = {DemoCommand.class, EchoCommand.class, PingCommand.class, StressCommand.class, InfoCommand.class,
        DriverCommand.class,
        CpCommand.class, CommandLine.HelpCommand.class})
public final class RdsCli implements Callable<Integer>
{
    @Spec
    private CommandSpec spec;

    /** Creates the top command; its subcommands are created by picocli. */
    public RdsCli()
    {
    }

    /**
     * Runs {@code rds}: the only place that calls {@link System#exit(int)}.
     *
     * @param args the command line.
     */
    public static void main(final String[] args)
    {
        System.exit(commandLine().execute(args));
    }

    /**
     * @return the {@code rds} command line as {@link #main} runs it: an I/O or setup failure prints one line
     *         ({@code rds: ...}) instead of a stack trace.
     */
    public static CommandLine commandLine()
    {
        return new CommandLine(new RdsCli()).setExecutionExceptionHandler(new ShortErrors());
    }

    /** Without a subcommand, {@code rds} shows its usage and fails. */
    @Override
    public Integer call()
    {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand (demo, echo, ping, stress, info, cp or help)");
    }

    /**
     * {@code rds --version}: on the module path the module's version (the build compiles it into the descriptor),
     * on the class path the jar's Implementation-Version; a package in a named module has no manifest version.
     */
    static final class Version implements IVersionProvider
    {
        @Override
        public String[] getVersion()
        {
            final Module module = RdsCli.class.getModule();
            final String version = module.isNamed()
                ? module.getDescriptor().rawVersion().orElse(null)
                : RdsCli.class.getPackage().getImplementationVersion();
            return new String[] {"rds4j " + (version == null ? "(development build)" : version)};
        }
    }

    /** Expected failures (I/O, a stack that cannot open) as one line; anything else with its stack trace. */
    private static final class ShortErrors implements IExecutionExceptionHandler
    {
        @Override
        public int handleExecutionException(final Exception ex, final CommandLine cmd, final ParseResult parseResult)
        {
            if (ex instanceof IOException || ex instanceof IllegalStateException || ex instanceof IllegalArgumentException)
            {
                cmd.getErr().println(cmd.getColorScheme().errorText(cmd.getCommandSpec().qualifiedName() + ": " + ex.getMessage()));
            }
            else
            {
                ex.printStackTrace(cmd.getErr());
            }
            cmd.getErr().flush();
            return cmd.getExitCodeExceptionMapper() != null
                ? cmd.getExitCodeExceptionMapper().getExitCode(ex)
                : cmd.getCommandSpec().exitCodeOnExecutionException();
        }
    }
}
