package org.rds4j.core.test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * CPU time and heap allocation of a fixed set of this JVM's threads: the threads of one or more stacks (every
 * thread named {@code rds4j-<role>-<stack name>}: the agent, IB's event thread), plus any application threads a
 * test adds. Read through HotSpot's {@link com.sun.management.ThreadMXBean}, so both are exact per thread,
 * unlike process-wide figures that also count the JIT and GC. Tests only.
 */
public final class ThreadMeter
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    private final List<Thread> threads;

    private ThreadMeter(final List<Thread> threads)
    {
        this.threads = threads;
        THREADS.setThreadCpuTimeEnabled(true);
        THREADS.setThreadAllocatedMemoryEnabled(true);
    }

    /**
     * @param stackNames names of running stacks.
     * @return a meter of every thread of those stacks.
     * @throws AssertionError if a stack has no thread (a stack in {@code INVOKER} mode runs none).
     */
    public static ThreadMeter ofStacks(final String... stackNames)
    {
        final Set<Thread> live = Thread.getAllStackTraces().keySet();
        final List<Thread> found = new ArrayList<>();
        for (final String name : stackNames)
        {
            final List<Thread> ofStack = live.stream()
                .filter(t -> t.getName().startsWith("rds4j-") && t.getName().endsWith("-" + name))
                .collect(Collectors.toList());
            if (ofStack.isEmpty())
            {
                throw new AssertionError("no thread of stack " + name);
            }
            found.addAll(ofStack);
        }
        return new ThreadMeter(found);
    }

    /** @return a meter of these threads and the given ones (such as the test's own sending thread). */
    public ThreadMeter and(final Thread... more)
    {
        final List<Thread> all = new ArrayList<>(threads);
        all.addAll(Arrays.asList(more));
        return new ThreadMeter(all);
    }

    /** @return CPU time (ns) the threads have used so far, summed. */
    public long cpuNs()
    {
        long sum = 0;
        for (final Thread t : threads)
        {
            sum += Math.max(0, THREADS.getThreadCpuTime(t.getId()));
        }
        return sum;
    }

    /**
     * Starts counting heap allocation. The arrays of the answer are allocated here, before the threads' counters
     * are read, so that a metered thread that reads the meter does not count the reading.
     *
     * @return what {@link #allocatedSince} takes.
     */
    public AllocationStart startAllocation()
    {
        final AllocationStart start = new AllocationStart(new long[threads.size()], new long[threads.size()]);
        read(start.before);
        return start;
    }

    /** @return the heap bytes each thread allocated since {@code start}, in the order of {@link #toString()}. */
    public long[] allocatedSince(final AllocationStart start)
    {
        read(start.since);
        for (int i = 0; i < start.since.length; i++)
        {
            start.since[i] -= start.before[i];
        }
        return start.since;
    }

    private void read(final long[] bytes)
    {
        for (int i = 0; i < bytes.length; i++)
        {
            bytes[i] = Math.max(0, THREADS.getThreadAllocatedBytes(threads.get(i).getId()));
        }
    }

    /** Work a thread repeats while its allocation is counted ({@link #allocatedByCallerPerRound}). */
    @FunctionalInterface
    public interface Round
    {
        void run() throws Exception;
    }

    /**
     * The heap bytes the calling thread allocated in each of {@code rounds} runs of {@code round}. A round may see a
     * one-off allocation of the JVM's own as code is compiled; an allocation per call shows in every round, so code
     * that allocates nothing has a round of 0.
     *
     * @param rounds how many times to run {@code round}.
     * @param round  the calls measured.
     * @return the bytes of each round.
     * @throws Exception what {@code round} threw.
     */
    public static long[] allocatedByCallerPerRound(final int rounds, final Round round) throws Exception
    {
        THREADS.setThreadAllocatedMemoryEnabled(true);
        final long[] allocated = new long[rounds];
        for (int r = 0; r < rounds; r++)
        {
            final long before = THREADS.getCurrentThreadAllocatedBytes();
            round.run();
            allocated[r] = THREADS.getCurrentThreadAllocatedBytes() - before;
        }
        return allocated;
    }

    /** Each thread's allocated bytes at the start, and room for the answer. */
    public record AllocationStart(long[] before, long[] since)
    {
    }

    /** @return the metered threads' names, for messages. */
    @Override
    public String toString()
    {
        return threads.stream().map(Thread::getName).collect(Collectors.joining(", ", "[", "]"));
    }
}
