package org.rds4j.core;

/**
 * The receive side's sequence and ack state of one path, as the kernel's {@code rds_recv_incoming} and
 * {@code rds_send_ack} keep it: the next sequence expected, the ack last sent, and when the next ack is due.
 * <p>
 * An ack is due when the peer asked for one (even a repeat: its retransmission shows it missed ours), from the
 * duty cycle after the one that received the request, or when a received message has waited {@code ackDelay}
 * without a piggybacked ack. Waiting one cycle lets a reply the application sends at once (an echo, a
 * response) carry the ack, instead of an ack-only frame going ahead of it on every eighth request; the cycle
 * that received the request did work, so the next follows without idling. Agent thread only.
 */
final class ReceiveAcks
{
    private final long ackDelayNs;
    /** Written by the agent, read by the info snapshot and {@code connectionInfos}. */
    private volatile long nextRxSequence;
    private long lastAckSent;
    private boolean urgent;
    /** The duty cycle in which the peer asked for an ack: the ack waits for the next, where a reply can carry it. */
    private long urgentCycle;
    private long deadlineNs = Long.MAX_VALUE;

    /** @param ackDelayNs how long a received message may wait for a piggybacked ack. */
    ReceiveAcks(final long ackDelayNs)
    {
        this.ackDelayNs = ackDelayNs;
    }

    /** @return the next sequence expected: the highest received plus one, 0 if none yet. */
    long nextRxSequence()
    {
        return nextRxSequence;
    }

    /** @return the cumulative ack this side would send now: the highest sequence received, 0 if none. */
    long ackValue()
    {
        return nextRxSequence == 0 ? 0 : nextRxSequence - 1;
    }

    /**
     * A sequenced frame arrived (before the receive rules decide whether to keep it: a repeated request still
     * wants an ack).
     *
     * @param ackRequired the frame carries ACK_REQUIRED.
     * @param nowNs       the time.
     * @param cycle       the duty cycle.
     */
    void onSequenced(final boolean ackRequired, final long nowNs, final long cycle)
    {
        if (ackRequired)
        {
            if (!urgent)
            {
                urgent = true;
                urgentCycle = cycle;
            }
        }
        else if (deadlineNs == Long.MAX_VALUE)
        {
            deadlineNs = nowNs + ackDelayNs;
        }
    }

    /** @param sequence a sequenced frame was accepted: the next expected follows it. */
    void accept(final long sequence)
    {
        nextRxSequence = sequence + 1;
    }

    /**
     * @param nowNs the time.
     * @param cycle the duty cycle.
     * @return true if an ack-only frame is due (when no data frame carries the ack).
     */
    boolean isAckDue(final long nowNs, final long cycle)
    {
        final long ack = ackValue();
        return (urgent && ack > 0 && cycle != urgentCycle) || (lastAckSent < ack && nowNs >= deadlineNs);
    }

    /** @return true if something received has not been acked yet, or the peer asked for an ack. */
    boolean isAckOwed()
    {
        return urgent || lastAckSent < ackValue();
    }

    /** @param ack a frame carrying this ack was sent (or the peer has it another way). */
    void ackSent(final long ack)
    {
        lastAckSent = Math.max(lastAckSent, ack);
        if (ack >= ackValue())
        {
            urgent = false;
            deadlineNs = Long.MAX_VALUE;
        }
    }

    /**
     * A new transport connection came up: an ack may have been lost with the old one, so repeat it at once.
     *
     * @param cycle the duty cycle.
     */
    void onPathUp(final long cycle)
    {
        urgent = ackValue() > 0;
        urgentCycle = cycle - 1;
    }

    /** The peer restarted: nothing of the old process is expected or owed an ack. */
    void reset()
    {
        nextRxSequence = 0;
        lastAckSent = 0;
        urgent = false;
        deadlineNs = Long.MAX_VALUE;
    }
}
