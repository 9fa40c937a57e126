package org.rds4j.core;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Randomised exponential backoff between connection attempts, as the kernel's {@code rds_queue_reconnect}:
 * the first attempt after a reset goes at once; each later one waits a random time in {@code [0, d)}, with
 * {@code d} doubling from the minimum to the maximum.
 */
final class ReconnectBackoff
{
    private final long minNs;
    private final long maxNs;
    private long boundNs;

    ReconnectBackoff(final long minNs, final long maxNs)
    {
        this.minNs = minNs;
        this.maxNs = maxNs;
    }

    /** @return the delay before the next attempt, in nanoseconds. */
    long nextDelayNs()
    {
        if (boundNs == 0)
        {
            boundNs = minNs;
            return 0;
        }
        final long delay = ThreadLocalRandom.current().nextLong(boundNs);
        boundNs = Math.min(boundNs * 2, maxNs);
        return delay;
    }

    /** @return the current upper bound, 0 after a reset. */
    long boundNs()
    {
        return boundNs;
    }

    /** A connection came up: the next attempt goes at once. */
    void reset()
    {
        boundNs = 0;
    }
}
