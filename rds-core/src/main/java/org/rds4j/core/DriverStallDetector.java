package org.rds4j.core;

/**
 * Tells a client that its driver has stopped running (stopped with SIGSTOP, or hung): the driver's heartbeat
 * ({@link DriverHeartbeat}, the wall-clock time its agent last ran) has stood still for longer than the client's
 * {@code driverTimeout}. Time is passed in. The client's reader thread only.
 * <p>
 * The silence is measured on this process's monotonic clock, from when the driver wrote the heartbeat last seen.
 * That moment is the time of the look that first saw it less the heartbeat's age by the wall clock, the age bounded
 * by the time since the look before (the heartbeat was not there then). So a step of the wall clock (NTP), which
 * both processes read, moves the estimate by at most the time between two looks, where a heartbeat's age taken as
 * is would make every client let a running driver go at a step forward of the timeout.
 */
final class DriverStallDetector
{
    private static final long NANOS_PER_MILLI = 1_000_000L;

    private final long timeoutNs;
    /** The heartbeat last seen (epoch ms). */
    private long heartbeatMs;
    /** When the driver wrote {@link #heartbeatMs}, on this process's clock. */
    private long heartbeatNs;
    private long lookedNs;

    /**
     * @param timeoutNs   the silence after which the driver is taken as stopped.
     * @param heartbeatMs the driver's heartbeat when the client attached.
     * @param nowNs       this process's clock then: the driver has just answered, so it ran.
     */
    DriverStallDetector(final long timeoutNs, final long heartbeatMs, final long nowNs)
    {
        this.timeoutNs = timeoutNs;
        this.heartbeatMs = heartbeatMs;
        this.heartbeatNs = nowNs;
        this.lookedNs = nowNs;
    }

    /**
     * Looks at the driver's heartbeat.
     *
     * @param heartbeatMs the driver's heartbeat now (epoch ms).
     * @param nowMs       the wall clock now (epoch ms).
     * @param nowNs       this process's monotonic clock now.
     * @return true if the driver has not run for longer than the timeout: stopped or hung.
     */
    boolean hasStopped(final long heartbeatMs, final long nowMs, final long nowNs)
    {
        if (heartbeatMs != this.heartbeatMs)
        {
            final long ageNs = Math.min(Math.max(0, (nowMs - heartbeatMs) * NANOS_PER_MILLI), nowNs - lookedNs);
            this.heartbeatMs = heartbeatMs;
            this.heartbeatNs = nowNs - ageNs;
        }
        lookedNs = nowNs;
        return silentNs(nowNs) > timeoutNs;
    }

    /**
     * @param nowNs this process's clock now.
     * @return how long the driver has not run, as far as the last look tells.
     */
    long silentNs(final long nowNs)
    {
        return nowNs - heartbeatNs;
    }
}
