package org.rds4j.core.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What idle stacks' threads do over a measurement window, by two measures that each catch what the other cannot:
 * the CPU time of each stack's threads ({@link ThreadMeter}: an agent that spins or yields takes a core but
 * rarely parks) and the wake-ups of each stack's agent ({@link ThreadWakeUps}: an agent that parks for 1 ms at a
 * time wakes a thousand times a second at a small CPU cost). Tests only; Linux only.
 */
public final class IdleWindow
{
    private IdleWindow()
    {
    }

    /** One stack over the window: its agent's wake-ups and the share of one core all its threads used. */
    public record Reading(String stack, double seconds, long agentWakeUps, double cpuShare)
    {
        @Override
        public String toString()
        {
            return String.format("idle stack %s over %.2f s: agent woke %d times, its threads used %.2f%% of a core",
                stack, seconds, agentWakeUps, cpuShare * 100);
        }
    }

    /**
     * Measures the stacks together over one window; prints and returns a reading per stack.
     *
     * @param window     how long to measure.
     * @param stackNames running stacks with an agent thread; the agents' names must stay whole in the kernel's
     *                   {@link ThreadWakeUps#NAME_CHARS} characters.
     * @return the readings, in the order of {@code stackNames}.
     */
    public static List<Reading> measure(final Duration window, final String... stackNames) throws InterruptedException
    {
        final int n = stackNames.length;
        final ThreadWakeUps[] agents = new ThreadWakeUps[n];
        final ThreadMeter[] threads = new ThreadMeter[n];
        final long[] wakeUps = new long[n];
        final long[] cpuNs = new long[n];
        for (int i = 0; i < n; i++)
        {
            agents[i] = ThreadWakeUps.of("rds4j-agent-" + stackNames[i]);
            threads[i] = ThreadMeter.ofStacks(stackNames[i]);
            wakeUps[i] = agents[i].count();
            cpuNs[i] = threads[i].cpuNs();
        }
        final long start = System.nanoTime();
        Thread.sleep(window.toMillis()); // the measurement window
        final long elapsedNs = System.nanoTime() - start;
        final List<Reading> readings = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
        {
            final Reading reading = new Reading(stackNames[i], elapsedNs / 1e9, agents[i].count() - wakeUps[i],
                (threads[i].cpuNs() - cpuNs[i]) / (double)elapsedNs);
            System.out.println(reading);
            readings.add(reading);
        }
        return readings;
    }
}
