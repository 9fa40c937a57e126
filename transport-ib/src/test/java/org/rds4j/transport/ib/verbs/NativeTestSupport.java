package org.rds4j.transport.ib.verbs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Compiles the C helpers under src/test/c with gcc (build host only). */
final class NativeTestSupport
{
    static final Path SOURCES = Path.of("src", "test", "c");
    static final Path OUT = Path.of("target", "native-test");

    private NativeTestSupport()
    {
    }

    /** Runs gcc with the arguments; fails the test with gcc's output (and what to install) if it fails. */
    static Path gcc(final String output, final String... arguments) throws IOException, InterruptedException
    {
        Files.createDirectories(OUT);
        final Path target = OUT.resolve(output);
        final List<String> command = new ArrayList<>(List.of("gcc", "-Wall", "-Werror", "-O1", "-o", target.toString()));
        command.addAll(Arrays.asList(arguments));
        final Process process;
        try
        {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        }
        catch (final IOException e)
        {
            throw new AssertionError("gcc is needed to check the verbs struct layout: apt-get install gcc " +
                "libibverbs-dev librdmacm-dev libffi-dev (or -Drds4j.ib.skipNativeTests=true)", e);
        }
        final String log = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            throw new AssertionError(String.join(" ", command) + " failed (install gcc libibverbs-dev " +
                "librdmacm-dev libffi-dev):\n" + log);
        }
        return target.toAbsolutePath();
    }

    static String run(final Path executable) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(executable.toString()).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            throw new AssertionError(executable + " failed:\n" + out);
        }
        return out;
    }

    /** @return whether {@code -Drds4j.ib.skipNativeTests=true} (a test switch, not a setting) skips the gcc tests. */
    static boolean skipped()
    {
        return Boolean.getBoolean("rds4j.ib.skipNativeTests");
    }
}
