package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When a client takes its driver as stopped, with the driver's heartbeat, the wall clock and the client's monotonic
 * clock all given: exactly past the timeout of silence, measured from when the last heartbeat was written, and not
 * fooled by steps of the wall clock.
 */
class DriverStallDetectorTest
{
    private static final long MS = 1_000_000L;
    private static final long TIMEOUT_NS = 1_000 * MS;
    /** The wall clock at attach (epoch ms). */
    private static final long WALL = 1_800_000_000_000L;
    /** The client's monotonic clock at attach. */
    private static final long MONO = 5_000 * MS;

    @Test
    void aHeartbeatThatStandsStillIsAStopExactlyPastTheTimeoutFromAttach()
    {
        final DriverStallDetector detector = new DriverStallDetector(TIMEOUT_NS, WALL - 40, MONO);
        assertFalse(detector.hasStopped(WALL - 40, WALL + 250, MONO + 250 * MS));
        assertFalse(detector.hasStopped(WALL - 40, WALL + 1_000, MONO + TIMEOUT_NS), "exactly the timeout");
        assertTrue(detector.hasStopped(WALL - 40, WALL + 1_000, MONO + TIMEOUT_NS + 1), "one nanosecond past it");
        assertEquals(TIMEOUT_NS + 1, detector.silentNs(MONO + TIMEOUT_NS + 1));
    }

    @Test
    void aMovingHeartbeatIsNeverAStopHoweverSeldomTheClientLooks()
    {
        final DriverStallDetector detector = new DriverStallDetector(TIMEOUT_NS, WALL, MONO);
        for (int look = 1; look <= 100; look++)
        {
            final long elapsedMs = look * 900L;
            // written 100 ms before each look, as a driver beating every 100 ms may have
            assertFalse(detector.hasStopped(WALL + elapsedMs - 100, WALL + elapsedMs, MONO + elapsedMs * MS));
            assertEquals(100 * MS, detector.silentNs(MONO + elapsedMs * MS));
        }
    }

    @Test
    void theSilenceCountsFromWhenTheLastHeartbeatWasWrittenByTheWallClock()
    {
        final DriverStallDetector detector = new DriverStallDetector(TIMEOUT_NS, WALL, MONO);
        // a look 500 ms in finds a heartbeat written 300 ms before it: the driver stopped 200 ms after attach
        assertFalse(detector.hasStopped(WALL + 200, WALL + 500, MONO + 500 * MS));
        assertEquals(300 * MS, detector.silentNs(MONO + 500 * MS));
        assertFalse(detector.hasStopped(WALL + 200, WALL + 1_200, MONO + 1_200 * MS), "exactly the timeout");
        assertTrue(detector.hasStopped(WALL + 200, WALL + 1_200, MONO + 1_200 * MS + 1));
    }

    @Test
    void aStepForwardOfTheWallClockMovesTheEstimateByAtMostTheTimeBetweenLooks()
    {
        final long hour = 3_600_000L;
        final DriverStallDetector running = new DriverStallDetector(TIMEOUT_NS, WALL, MONO);
        assertFalse(running.hasStopped(WALL + 200, WALL + 250, MONO + 250 * MS));
        // the wall clock jumps an hour ahead; the driver's next beat has the new time, 10 ms before the look
        assertFalse(running.hasStopped(WALL + hour + 490, WALL + hour + 500, MONO + 500 * MS));
        assertEquals(10 * MS, running.silentNs(MONO + 500 * MS));

        final DriverStallDetector stopped = new DriverStallDetector(TIMEOUT_NS, WALL, MONO);
        assertFalse(stopped.hasStopped(WALL + 200, WALL + 250, MONO + 250 * MS));
        // the driver beats at 300 ms and stops; the wall clock jumps an hour ahead before the next look
        assertFalse(stopped.hasStopped(WALL + 300, WALL + hour + 500, MONO + 500 * MS), "not an hour of silence");
        // the heartbeat's age by the wall clock, an hour and 200 ms, is bounded by the 250 ms since the look before
        assertEquals(250 * MS, stopped.silentNs(MONO + 500 * MS));
        assertFalse(stopped.hasStopped(WALL + 300, WALL + hour + 1_250, MONO + 1_250 * MS), "exactly the timeout");
        assertTrue(stopped.hasStopped(WALL + 300, WALL + hour + 1_250, MONO + 1_250 * MS + 1));
    }

    @Test
    void aStepBackOfTheWallClockCountsTheHeartbeatAsJustWritten()
    {
        final DriverStallDetector detector = new DriverStallDetector(TIMEOUT_NS, WALL, MONO);
        // a heartbeat ahead of the client's wall clock (it stepped back after the driver wrote it)
        assertFalse(detector.hasStopped(WALL + 5_000, WALL + 300, MONO + 300 * MS));
        assertEquals(0, detector.silentNs(MONO + 300 * MS));
        assertFalse(detector.hasStopped(WALL + 5_000, WALL + 1_300, MONO + 1_300 * MS), "exactly the timeout");
        assertTrue(detector.hasStopped(WALL + 5_000, WALL + 1_300, MONO + 1_300 * MS + 1));
    }
}
