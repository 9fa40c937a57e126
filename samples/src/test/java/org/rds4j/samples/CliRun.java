package org.rds4j.samples;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.stream.Collectors;

import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One in-process run of the {@code rds} command line, with its exit code and captured output. Tests only.
 *
 * @param command the arguments, joined, for failure messages.
 * @param code    the exit code.
 * @param out     what the command printed to its standard output.
 * @param err     what it printed to its error output.
 */
record CliRun(String command, int code, String out, String err)
{
    /** Runs {@code rds ARGS...} in this JVM, capturing its output. */
    static CliRun run(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cli = new CommandLine(new RdsCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        final int code = cli.execute(args);
        return new CliRun(String.join(" ", args), code, out.toString(), err.toString());
    }

    /** Asserts that {@code rds ARGS...} is a usage error (exit 2) whose message contains {@code expected}. */
    static void assertUsageError(final String expected, final String... args)
    {
        final CliRun run = run(args);
        assertEquals(CommandLine.ExitCode.USAGE, run.code, run.report());
        assertTrue(run.err.contains(expected), run.report());
    }

    /** @return the output lines that start with {@code prefix}. */
    List<String> lines(final String prefix)
    {
        return out.lines().filter(l -> l.startsWith(prefix)).collect(Collectors.toList());
    }

    /** @return the command, its exit code and its output, for a failure message. */
    String report()
    {
        return command + " -> " + code + "\noutput:\n" + out + "\nerrors:\n" + err;
    }
}
