package org.rds4j.core.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Counts how often a thread of this JVM woke from a wait, from Linux {@code /proc/self/task/TID/status}: each
 * voluntary context switch is one wait (a park, a selector or {@code poll(2)} wait, a blocking read); and its read
 * system calls, from {@code /proc/self/task/TID/io}. A count,
 * unlike CPU time, does not depend on how fast the machine runs the code, so an idle thread that wakes too often
 * shows the same under emulation. Tests only; Linux only.
 */
public final class ThreadWakeUps
{
    /** The kernel keeps this many characters of a thread's name ({@code comm}). */
    public static final int NAME_CHARS = 15;

    private final Path task;

    private ThreadWakeUps(final Path task)
    {
        this.task = task;
    }

    /**
     * @param threadName the thread's name; its first {@link #NAME_CHARS} characters must name no other thread.
     * @return the counter of that thread, once the thread has started and named itself (within 10 s: a thread
     *         names itself when it first runs, which on a loaded machine may be after its start returned).
     * @throws AssertionError if no thread, or more than one, has that name by then.
     */
    public static ThreadWakeUps of(final String threadName)
    {
        final String comm = threadName.substring(0, Math.min(NAME_CHARS, threadName.length()));
        final List<Path> found = new ArrayList<>();
        Await.until(Duration.ofSeconds(10), () ->
        {
            found.clear();
            found.addAll(tasksNamed(comm));
            return found.size() == 1;
        }, () -> "threads named " + comm + ": " + found);
        return new ThreadWakeUps(found.get(0));
    }

    /** @return the counter of the calling thread. */
    public static ThreadWakeUps ofCurrentThread()
    {
        try
        {
            return new ThreadWakeUps(Path.of("/proc/thread-self").toRealPath());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static List<Path> tasksNamed(final String comm)
    {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task")))
        {
            return tasks.filter(t -> read(t.resolve("comm")).strip().equals(comm)).toList();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** @return the thread's voluntary context switches so far. */
    public long count()
    {
        return field("status", "voluntary_ctxt_switches");
    }

    /** @return the thread's read system calls so far ({@code read(2)} and its kin, {@code syscr}). */
    public long readCalls()
    {
        return field("io", "syscr");
    }

    /** @return the number after {@code name:} in the thread's file {@code file}. */
    private long field(final String file, final String name)
    {
        return read(task.resolve(file)).lines()
            .filter(l -> l.startsWith(name + ":"))
            .mapToLong(l -> Long.parseLong(l.substring(l.indexOf(':') + 1).strip()))
            .findFirst().orElseThrow(() -> new AssertionError("no " + name + " in " + task + "/" + file));
    }

    /** A task that has ended reads as empty. */
    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file);
        }
        catch (final NoSuchFileException ex)
        {
            return "";
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
