package org.rds4j.faults;

import org.rds4j.core.test.Await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A {@link FaultNode} in a child JVM (this JVM's java and class path). Its stdout is read by a thread:
 * {@code READY}, {@code PROGRESS} and the summary line are kept; its stderr (the stack's log at INFO) goes to
 * {@code target/fault-logs/<name>.log}, appended to, so that a failed test's log outlives the tests of its class that
 * run after it with the same names. Tests only.
 */
final class ChildNode implements AutoCloseable
{
    private static final Path LOG_DIR = Path.of("target", "fault-logs");

    final String address;
    private final Process process;
    private final Writer stdin;
    private final Thread reader;
    private final Path log;
    private final Map<String, Long> progress = new ConcurrentHashMap<>();
    private final List<String> output = new ArrayList<>();
    private volatile boolean ready;
    private volatile String summary;

    /**
     * @param name    names the log file, e.g. {@code PeerKillTest-127.0.20.1}.
     * @param address the node's address ({@code --bind}).
     * @param args    FaultNode's arguments other than {@code --bind}.
     */
    ChildNode(final String name, final String address, final List<String> args) throws IOException
    {
        this(name, address, FaultNode.class, args);
    }

    /**
     * @param name    names the log file.
     * @param address the node's address, passed as {@code --bind}.
     * @param main    the child's main class, on this JVM's class path.
     * @param args    its arguments other than {@code --bind}.
     */
    ChildNode(final String name, final String address, final Class<?> main, final List<String> args) throws IOException
    {
        this(name, address, main, List.of("-Xmx256m"), args);
    }

    /**
     * @param name       names the log file.
     * @param address    the node's address, passed as {@code --bind}.
     * @param main       the child's main class, on this JVM's class path.
     * @param jvmOptions such as the heap's size.
     * @param args       its arguments other than {@code --bind}.
     */
    ChildNode(final String name, final String address, final Class<?> main, final List<String> jvmOptions,
        final List<String> args) throws IOException
    {
        this.address = address;
        Files.createDirectories(LOG_DIR);
        log = LOG_DIR.resolve(name + ".log");
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-XX:+UseSerialGC",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            "-cp", System.getProperty("java.class.path"),
            main.getName(), "--bind", address));
        command.addAll(args);
        process = new ProcessBuilder(command)
            .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())) // a later test's node does not erase it
            .start();
        stdin = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        reader = new Thread(this::readStdout, "stdout " + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a {@link DriverNode} at {@code address} serving {@code directory}, adds it to {@code children} (so the
     * caller's teardown ends it) and waits for its READY.
     */
    static ChildNode startDriver(final List<ChildNode> children, final String name, final String address,
        final Path directory, final int tcpPort) throws IOException
    {
        final ChildNode driver = new ChildNode(name, address, DriverNode.class,
            List.of("--dir", directory.toString(), "--tcp-port", String.valueOf(tcpPort)));
        children.add(driver);
        driver.awaitReady(Duration.ofSeconds(30));
        return driver;
    }

    private void readStdout()
    {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = in.readLine()) != null)
            {
                if (line.equals("READY"))
                {
                    ready = true;
                }
                else if (line.startsWith("PROGRESS "))
                {
                    for (final String field : line.substring("PROGRESS ".length()).split(" "))
                    {
                        final int eq = field.indexOf('=');
                        progress.put(field.substring(0, eq), Long.parseLong(field.substring(eq + 1)));
                    }
                }
                else if (line.startsWith("{"))
                {
                    summary = line;
                }
                else
                {
                    synchronized (output)
                    {
                        output.add(line);
                    }
                }
            }
        }
        catch (final IOException ex)
        {
            // the process died: the test sees it in its exit status
        }
    }

    /** Waits for the node's READY line. */
    void awaitReady(final Duration timeout)
    {
        Await.until(timeout, () -> ready || !process.isAlive(), () -> address + " READY");
        if (!ready)
        {
            throw new AssertionError(address + " exited before READY: " + describe());
        }
    }

    /** Writes one line (GO, STOP) to the node's stdin. */
    void command(final String line) throws IOException
    {
        stdin.write(line + "\n");
        stdin.flush();
    }

    /** @return messages received from {@code peer} as of the last PROGRESS line, 0 before the first. */
    long received(final String peer)
    {
        return progress.getOrDefault(peer, 0L);
    }

    /** Waits for the node to exit and for its stdout to end; fails the test past the timeout. */
    int awaitExit(final Duration timeout) throws InterruptedException
    {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
        {
            throw new AssertionError(address + " still running after " + timeout + ": " + describe());
        }
        reader.join(10_000);
        return process.exitValue();
    }

    /** @return the summary line, parsed; fails the test if the node printed none. */
    NodeSummary summary()
    {
        if (summary == null)
        {
            throw new AssertionError(address + " printed no summary: " + describe());
        }
        return NodeSummary.parse(summary);
    }

    /** SIGKILL (Process.destroyForcibly on Linux), then waits for the process to be gone. */
    void kill9() throws InterruptedException
    {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS))
        {
            throw new AssertionError(address + " survived SIGKILL");
        }
    }

    long pid()
    {
        return process.pid();
    }

    /**
     * Freezes the process (SIGSTOP) and returns once every one of its threads has stopped: {@code kill} returns
     * when the signal is sent, and a thread still running then could go on reading its socket.
     */
    void freeze() throws IOException, InterruptedException
    {
        final Process kill = new ProcessBuilder("kill", "-STOP", Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0)
        {
            throw new AssertionError("kill -STOP " + process.pid() + " failed");
        }
        final Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
        Await.until(Duration.ofSeconds(10), () -> allStopped(tasks), () -> "process " + process.pid() + " stopped");
    }

    /** Lets a frozen process run again (SIGCONT). */
    void resume() throws IOException, InterruptedException
    {
        final Process kill = new ProcessBuilder("kill", "-CONT", Long.toString(process.pid())).inheritIO().start();
        if (kill.waitFor() != 0)
        {
            throw new AssertionError("kill -CONT " + process.pid() + " failed");
        }
    }

    /** @return whether every thread under {@code /proc/PID/task} is in state T (stopped). */
    private static boolean allStopped(final Path tasks)
    {
        try (var threads = Files.list(tasks))
        {
            return threads.allMatch(task ->
            {
                try
                {
                    final String stat = Files.readString(task.resolve("stat"));
                    // the state follows the command name, which is in parentheses and may hold any character
                    return stat.charAt(stat.lastIndexOf(')') + 2) == 'T';
                }
                catch (final IOException ex)
                {
                    return true; // the thread has ended
                }
            });
        }
        catch (final IOException ex)
        {
            throw new AssertionError("cannot read " + tasks, ex);
        }
    }

    /** @return a copy of the stdout lines that were not READY, PROGRESS or the summary, in order. */
    List<String> otherOutput()
    {
        synchronized (output)
        {
            return new ArrayList<>(output);
        }
    }

    String describe()
    {
        synchronized (output)
        {
            return "other stdout " + output + ", log " + log.toAbsolutePath();
        }
    }

    @Override
    public void close()
    {
        process.destroyForcibly();
        try
        {
            process.waitFor(10, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
