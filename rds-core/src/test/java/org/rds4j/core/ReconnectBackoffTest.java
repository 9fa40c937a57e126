package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReconnectBackoffTest
{
    private static final long MS = 1_000_000L;

    @Test
    void firstAttemptAtOnceThenRandomBelowADoublingBound()
    {
        final ReconnectBackoff backoff = new ReconnectBackoff(MS, 1000 * MS);
        assertEquals(0, backoff.nextDelayNs());
        long bound = MS;
        for (int attempt = 0; attempt < 20; attempt++)
        {
            assertEquals(bound, backoff.boundNs());
            final long delay = backoff.nextDelayNs();
            assertTrue(delay >= 0 && delay < bound, "attempt " + attempt + ": " + delay + " not in [0, " + bound + ")");
            bound = Math.min(bound * 2, 1000 * MS);
        }
        assertEquals(1000 * MS, backoff.boundNs(), "capped at the maximum");
    }

    @Test
    void resetMakesTheNextAttemptImmediate()
    {
        final ReconnectBackoff backoff = new ReconnectBackoff(MS, 1000 * MS);
        for (int i = 0; i < 5; i++)
        {
            backoff.nextDelayNs();
        }
        backoff.reset();
        assertEquals(0, backoff.nextDelayNs());
        assertEquals(MS, backoff.boundNs());
    }
}
