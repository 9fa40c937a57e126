package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LivenessTest
{
    private static final long INTERVAL = 1_000;
    private static final long TIMEOUT = 10_000;
    private static final long HANDSHAKE = 5_000;

    private final Liveness liveness = new Liveness(INTERVAL, TIMEOUT, HANDSHAKE);

    @Test
    void aHeartbeatGoesAfterAnIntervalOfSilenceOnly()
    {
        liveness.onPathUp(0);
        assertFalse(liveness.heartbeatDue(INTERVAL - 1));
        assertTrue(liveness.heartbeatDue(INTERVAL));
        assertFalse(liveness.heartbeatDue(INTERVAL + 500), "the next check is an interval later");
        liveness.onFrame(1_800, false);
        assertFalse(liveness.heartbeatDue(2 * INTERVAL), "something arrived 200 ns ago");
        assertEquals(3 * INTERVAL, liveness.deadlineNs());
        assertTrue(liveness.heartbeatDue(3 * INTERVAL));
    }

    @Test
    void silenceForTheTimeoutIsDeath()
    {
        liveness.onPathUp(0);
        assertFalse(liveness.isDead(TIMEOUT - 1, false));
        assertTrue(liveness.isDead(TIMEOUT, false));
        liveness.onFrame(TIMEOUT - 1, false);
        assertFalse(liveness.isDead(TIMEOUT, false));
        assertEquals(7, liveness.silentNs(TIMEOUT + 6));
    }

    @Test
    void theHandshakeDeadlineMovesWithEachFrameWhileHandshaking()
    {
        liveness.onPathUp(0);
        assertFalse(liveness.isDead(HANDSHAKE - 1, true));
        assertTrue(liveness.isDead(HANDSHAKE, true));
        assertFalse(liveness.isDead(HANDSHAKE, false), "after the handshake only the heartbeat timeout counts");
        liveness.onFrame(4_000, true);
        assertFalse(liveness.isDead(4_000 + HANDSHAKE - 1, true));
        assertTrue(liveness.isDead(4_000 + HANDSHAKE, true));
    }

    @Test
    void aFrameAfterTheHandshakeLeavesItsDeadline()
    {
        liveness.onPathUp(0);
        liveness.onFrame(4_000, false);
        assertTrue(liveness.isDead(HANDSHAKE, true));
    }
}
