package org.rds4j.compare;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * {@code handoff}: what it costs to move one cache line between the machine's CPUs, measured as two threads hand a
 * counter back and forth by spinning on it; prints {@code HANDOFF <ns per one-way hand-off>}. run.sh records it before
 * and after a run: on a virtual machine the host may place the vCPUs on cores that share a cache or on cores that do
 * not, and move them, and at 1 KiB that decided whether a whole stretch of runs was fast or slow (2026-11-27: 39-75
 * ns against 180-240 ns; raw NIO lost 17 % in the slow placement, rds4j 41 %). Two spinning threads on an idle
 * machine run on two CPUs; the figure means nothing on a busy one.
 */
final class HandOff
{
    private static final int WARMUP = 200_000;
    private static final int SAMPLES = 3;
    private static final int HAND_OFFS = 200_000;
    /** The counter is the middle element of an array of 32 longs, so that no other object shares its cache line. */
    private static final int SLOT = 16;

    private HandOff()
    {
    }

    /** Prints the median of {@value #SAMPLES} samples of {@value #HAND_OFFS} hand-offs each, in ns per hand-off. */
    static void run()
    {
        final double[] samples = new double[SAMPLES];
        measure(WARMUP);
        for (int i = 0; i < SAMPLES; i++)
        {
            samples[i] = measure(HAND_OFFS);
        }
        Arrays.sort(samples);
        System.out.printf("HANDOFF %.1f%n", samples[SAMPLES / 2]);
    }

    /** @return ns per one-way hand-off over {@code count} hand-offs (an even count: each thread takes half). */
    private static double measure(final int count)
    {
        final AtomicLongArray line = new AtomicLongArray(2 * SLOT);
        final Thread other = new Thread(() ->
        {
            for (long turn = 1; turn < count; turn += 2)
            {
                while (line.get(SLOT) != turn)
                {
                    Thread.onSpinWait();
                }
                line.lazySet(SLOT, turn + 1);
            }
        }, "handoff");
        other.setDaemon(true);
        other.start();
        final long start = System.nanoTime();
        for (long turn = 0; turn < count; turn += 2)
        {
            while (line.get(SLOT) != turn)
            {
                Thread.onSpinWait();
            }
            line.lazySet(SLOT, turn + 1);
        }
        while (line.get(SLOT) != count)
        {
            Thread.onSpinWait();
        }
        final long elapsed = System.nanoTime() - start;
        try
        {
            other.join();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return (double)elapsed / count;
    }
}
