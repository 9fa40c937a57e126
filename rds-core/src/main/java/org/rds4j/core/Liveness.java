package org.rds4j.core;

/**
 * The clocks that tell a path's peer is gone: the handshake deadline (no answer to the probe within the connect
 * timeout, renewed by every frame: a kernel answers the probe only after the data it had queued for us), the
 * heartbeat (a probe when nothing arrived for the heartbeat interval) and the heartbeat timeout (nothing for
 * that long drops the path: a silent or half-open peer). Time is passed in. Agent thread only.
 */
final class Liveness
{
    private final long heartbeatIntervalNs;
    private final long heartbeatTimeoutNs;
    private final long handshakeTimeoutNs;
    private long lastFrameReceivedNs;
    private long nextHeartbeatNs;
    private long handshakeDeadlineNs;

    /**
     * @param heartbeatIntervalNs silence after which a heartbeat goes.
     * @param heartbeatTimeoutNs  silence after which the peer is dead.
     * @param handshakeTimeoutNs  most time without a frame while the handshake waits for the peer.
     */
    Liveness(final long heartbeatIntervalNs, final long heartbeatTimeoutNs, final long handshakeTimeoutNs)
    {
        this.heartbeatIntervalNs = heartbeatIntervalNs;
        this.heartbeatTimeoutNs = heartbeatTimeoutNs;
        this.handshakeTimeoutNs = handshakeTimeoutNs;
    }

    /** @param nowNs a transport connection came up: every clock starts. */
    void onPathUp(final long nowNs)
    {
        lastFrameReceivedNs = nowNs;
        nextHeartbeatNs = nowNs + heartbeatIntervalNs;
        handshakeDeadlineNs = nowNs + handshakeTimeoutNs;
    }

    /**
     * A frame arrived: the peer is alive.
     *
     * @param nowNs       the time.
     * @param handshaking the handshake is not done: its deadline moves too.
     */
    void onFrame(final long nowNs, final boolean handshaking)
    {
        lastFrameReceivedNs = nowNs;
        if (handshaking)
        {
            handshakeDeadlineNs = nowNs + handshakeTimeoutNs;
        }
    }

    /**
     * @param nowNs       the time.
     * @param handshaking the handshake is not done.
     * @return true if the peer is to be given up: silent for the heartbeat timeout, or past the handshake deadline.
     */
    boolean isDead(final long nowNs, final boolean handshaking)
    {
        return nowNs - lastFrameReceivedNs >= heartbeatTimeoutNs || (handshaking && nowNs >= handshakeDeadlineNs);
    }

    /**
     * Checks the heartbeat clock; when it is due it restarts, and a heartbeat goes if nothing arrived for an
     * interval.
     *
     * @param nowNs the time.
     * @return true if a heartbeat is to be sent now.
     */
    boolean heartbeatDue(final long nowNs)
    {
        if (nowNs - nextHeartbeatNs < 0)
        {
            return false;
        }
        nextHeartbeatNs = nowNs + heartbeatIntervalNs;
        return nowNs - lastFrameReceivedNs >= heartbeatIntervalNs;
    }

    /** @return when the next heartbeat check or the heartbeat timeout falls, whichever comes first. */
    long deadlineNs()
    {
        return Math.min(nextHeartbeatNs, lastFrameReceivedNs + heartbeatTimeoutNs);
    }

    /**
     * @param nowNs the time.
     * @return how long nothing has arrived.
     */
    long silentNs(final long nowNs)
    {
        return nowNs - lastFrameReceivedNs;
    }
}
