package org.rds4j.compare;

import java.io.PrintStream;
import java.time.Duration;

import org.rds4j.samples.DurationConverter;
import org.rds4j.samples.SizeConverter;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The comparison suite's command line, parsed by picocli: {@code <system>-<role>}, {@code report} or
 * {@code handoff}, then options.
 * Every option of every system and of the report is declared here, so an unknown or misspelt option is a usage
 * error, with the help; a value that does not parse is one too. Durations and sizes take the units of the
 * {@code rds} tools ({@link DurationConverter}, {@link SizeConverter}). Defaults stay with the code that reads an
 * option (some depend on others), and reading an option not declared here is a programming error.
 */
final class Args
{
    /** Exit status for a usage error, as picocli's and the {@code rds} tools'. */
    static final int USAGE = CommandLine.ExitCode.USAGE;

    private final ParseResult parsed;

    private Args(final ParseResult parsed)
    {
        this.parsed = parsed;
    }

    /** @return the command line's model: the command, then every option. */
    static CommandSpec spec()
    {
        final CommandSpec spec = CommandSpec.create().name("compare");
        spec.usageMessage()
            .description("Runs one role of one system of the comparison suite, or turns collected result lines into the "
                + "tables. run.sh is the usual caller.")
            .footer("", "Durations are seconds (2, 0.5) or a whole number with a unit (500ms); sizes are bytes or k/m/g "
                + "(powers of 1024). Defaults not shown depend on other options.");
        spec.addPositional(PositionalParamSpec.builder().paramLabel("COMMAND").arity("1").required(true).type(String.class)
            .description("<rds4j|nio|aeron|jgroups>-<rtt-server|rtt-client|sink|source>, rds4j-driver, handoff, or report")
            .build());
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("Show this help and exit.").build());
        // every role
        size(spec, "--size", "payload bytes, at least 16 (default 64)");
        integer(spec, "--receivers", "sink sockets, streams or members of the fan-out case (default 1)");
        integer(spec, "--peers", "the scale case, rds4j and nio only: N receivers on 127.0.2.1 ... N (default 0: none)");
        string(spec, "--peer-net", "the first three octets of the scale case's addresses (default 127.0.2)");
        duration(spec, "--warmup", "throughput: time before measuring (default 2)");
        duration(spec, "--duration", "throughput: time measured (default 5)");
        duration(spec, "--grace", "throughput: how long the source sends on after the sink's window (default 2)");
        integer(spec, "--warmup-rt", "round trips before measuring, at least (default 20000; the warm-up also lasts --warmup)");
        integer(spec, "--rt", "round trips measured (default 100000)");
        duration(spec, "--start-timeout", "how long a role waits for its peer before it gives up (default 30)");
        duration(spec, "--timeout", "how long before the process halts itself (default 120)");
        flag(spec, "--trace", "print the sink's rate every 100 ms on stderr");
        integer(spec, "--port", "the first port (default 5000)");
        string(spec, "--server-ip", "address of the server and sink (default 127.0.0.2)");
        string(spec, "--client-ip", "address of the client and source (default 127.0.0.1)");
        // rds4j, nio, aeron
        string(spec, "--io", "rds4j and nio: block or poll (default block)");
        string(spec, "--idle", "rds4j, nio, aeron: the application thread's idle strategy (default yield)");
        string(spec, "--threading", "rds4j: agent or invoker (default agent); aeron: shared, dedicated or invoker "
            + "(default shared)");
        integer(spec, "--invoke-batch", "rds4j and aeron with --threading invoker: sends between duty cycles");
        // rds4j
        string(spec, "--agent-idle", "rds4j: the stack's idle strategy, backoff, spin, yield or sleep:us (default backoff)");
        flag(spec, "--claim", "rds4j: the source writes each message in place with tryClaim");
        flag(spec, "--driver", "rds4j: attach to a driver started as a child process (its CPU time is counted)");
        string(spec, "--dir", "rds4j-driver: the driver's directory");
        string(spec, "--name", "rds4j-driver: the driver's stack's name (default driver)");
        size(spec, "--sndbuf", "rds4j: SO_SNDBUF (default the stack's, 1 MiB)");
        size(spec, "--rcvbuf", "rds4j: SO_RCVBUF (default the stack's, 1 MiB)");
        integer(spec, "--tcp-port", "rds4j: the TCP port of RDS over TCP (default 29500)");
        size(spec, "--tcp-send-ring", "rds4j: each TCP connection's zero-copy send ring, 0 to copy every write "
            + "(default the transport's, 2 MiB)");
        // aeron
        string(spec, "--driver-idle", "aeron: the media driver's idle strategy (default backoff)");
        size(spec, "--mtu", "aeron: MTU (default 1408)");
        size(spec, "--term-length", "aeron: term length (default 16 MiB, 4 MiB with several receivers)");
        size(spec, "--so-buf", "aeron: UDP socket buffers (default 2 MiB)");
        size(spec, "--rcv-window", "aeron: receiver window (default the socket buffer divided among the streams, at "
            + "most 2 MiB)");
        string(spec, "--aeron-dir", "aeron: directory prefix of the embedded driver (default /dev/shm/rds4j-compare-aeron)");
        // jgroups
        string(spec, "--bundler", "jgroups: transfer-queue or per-destination (default transfer-queue)");
        string(spec, "--ufc-credits", "jgroups: UFC's and MFC's max_credits (default 1M up to 256 B, else 10M)");
        // report
        string(spec, "--results", "report: the result lines (default results.jsonl)");
        string(spec, "--meta", "report: Markdown put before the tables in --docs");
        string(spec, "--docs", "report: the document whose tables are replaced");
        return spec;
    }

    /**
     * Parses the command line; prints the help, or the problem and the help, and exits when it asks for help or
     * is wrong.
     *
     * @param args the arguments of {@code main}.
     * @param out  where the help goes.
     * @param err  where a problem and the help go.
     * @return the options, with the command as {@link #command()}.
     */
    static Args parseOrExit(final String[] args, final PrintStream out, final PrintStream err)
    {
        final CommandLine cli = new CommandLine(spec());
        try
        {
            final ParseResult parsed = cli.parseArgs(args);
            if (parsed.isUsageHelpRequested())
            {
                cli.usage(out);
                System.exit(0);
            }
            return new Args(parsed);
        }
        catch (final ParameterException e)
        {
            err.println(e.getMessage());
            UnmatchedArgumentException.printSuggestions(e, err); // "Did you mean: --duration?"
            cli.usage(err);
            System.exit(USAGE);
            throw e; // not reached
        }
    }

    /**
     * @param args the arguments.
     * @return them parsed, or the problem.
     * @throws ParameterException for an unknown option or a value that does not parse.
     */
    static Args parse(final String... args)
    {
        return new Args(new CommandLine(spec()).parseArgs(args));
    }

    /** @return {@code <system>-<role>} or {@code report}. */
    String command()
    {
        return parsed.matchedPositional(0).getValue();
    }

    /** @return whether the option was given. */
    boolean has(final String key)
    {
        return parsed.hasMatchedOption(declared(key));
    }

    String str(final String key, final String defaultValue)
    {
        return parsed.matchedOptionValue(declared(key), defaultValue);
    }

    int integer(final String key, final int defaultValue)
    {
        return parsed.matchedOptionValue(declared(key), defaultValue);
    }

    /** A size: bytes, or with a k/m/g suffix (powers of 1024): {@code 64}, {@code 1k}, {@code 16m}. */
    int size(final String key, final int defaultValue)
    {
        return parsed.matchedOptionValue(declared(key), defaultValue);
    }

    /** A duration: seconds ({@code 2}, {@code 0.5}) or with a unit ({@code 500ms}). */
    Duration duration(final String key, final Duration defaultValue)
    {
        return parsed.matchedOptionValue(declared(key), defaultValue);
    }

    boolean flag(final String key)
    {
        return parsed.matchedOptionValue(declared(key), false);
    }

    private String declared(final String key)
    {
        final String name = "--" + key;
        if (parsed.commandSpec().findOption(name) == null)
        {
            throw new IllegalStateException("option " + name + " is read but not declared in Args.spec()");
        }
        return name;
    }

    private static void string(final CommandSpec spec, final String name, final String description)
    {
        spec.addOption(OptionSpec.builder(name).paramLabel("VALUE").type(String.class).description(description).build());
    }

    private static void integer(final CommandSpec spec, final String name, final String description)
    {
        spec.addOption(OptionSpec.builder(name).paramLabel("N").type(Integer.class).description(description).build());
    }

    private static void size(final CommandSpec spec, final String name, final String description)
    {
        spec.addOption(OptionSpec.builder(name).paramLabel("BYTES").type(Integer.class).converters(new SizeConverter())
            .description(description).build());
    }

    private static void duration(final CommandSpec spec, final String name, final String description)
    {
        spec.addOption(OptionSpec.builder(name).paramLabel("DURATION").type(Duration.class)
            .converters(new DurationConverter()).description(description).build());
    }

    private static void flag(final CommandSpec spec, final String name, final String description)
    {
        spec.addOption(OptionSpec.builder(name).arity("0").type(boolean.class).description(description).build());
    }
}
