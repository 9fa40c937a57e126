package org.rds4j.core;

import org.rds4j.core.wire.RdsHeader;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The receive side's sequence and ack state of one path, as the kernel's {@code rds_recv_incoming} and
 * {@code rds_send_ack} keep it: which sequenced frames are taken, the next sequence expected, the ack last
 * sent, and when the next ack is due.
 * <p>
 * A frame is dropped only when it is RETRANSMITTED and its sequence is below the next expected one, or when it
 * is RETRANSMITTED and arrives on the first transport connection of this stack's life with a peer that learns
 * generations: a peer retransmits only what it sent on an earlier connection, and this stack had none with it,
 * so the frame was meant for an earlier process at this address (a kernel peer over TCP resends its unacked
 * messages before it has seen the new generation, and flushes the rest once it has). A peer that never learns
 * a generation (kernel RDS over IB) never flushes: what it resends is delivered, as a restarted kernel node
 * would deliver it; among it may be messages sent after this process bound its port, into a connection the
 * peer had not yet seen die. Every other frame is taken and sets the next expected sequence after it (gaps
 * are taken: a sender's cancelled messages leave holes).
 * <p>
 * An ack is due when the peer asked for one (even a repeat: its retransmission shows it missed ours), from the
 * duty cycle after the one that received the request, or when a received message has waited {@code ackDelay}
 * without a piggybacked ack. Waiting one cycle lets a reply the application sends at once (an echo, a
 * response) carry the ack, instead of an ack-only frame going ahead of it on every eighth request; the cycle
 * that received the request did work, so the next follows without idling.
 * <p>
 * While a stream flows (frames came in each of the last two cycles) a requested ack waits further, until
 * {@link #STREAM_ACK_BYTES} have come since the last ack or a cycle brings nothing: a sender asks on nearly every
 * message once half its send buffer is used, and an ack-only frame per read cost a receiving thread a fifth of its
 * time at 1 KiB (a write, and over loopback the sender's receive path run in it). A sender whose window is smaller
 * stops, and the cycle that brings nothing acks. Kernel RDS over IB is acked as before (its default send buffer is
 * smaller than that). Agent thread only.
 */
final class ReceiveAcks
{
    /** Payload bytes of a flowing stream between two acks it asked for: a quarter of the default send buffer. */
    static final long STREAM_ACK_BYTES = 256 * 1024;

    private final long ackDelayNs;
    private final StackCounters counters;
    /**
     * The first transport connection of this stack's life with the peer is up, or not yet made, and the peer
     * learns generations: its retransmissions were meant for an earlier process.
     */
    private boolean firstSession = true;
    /**
     * Written by the agent with release stores (a volatile store is a full fence, per frame), read by it plainly and
     * by the info snapshot and {@code connectionInfos} with {@link #nextRxSequence()}.
     */
    private final AtomicLong nextRxSequence = new AtomicLong();
    private long lastAckSent;
    private boolean urgent;
    /** The duty cycle in which the peer asked for an ack: the ack waits for the next, where a reply can carry it. */
    private long urgentCycle;
    private long deadlineNs = Long.MAX_VALUE;
    /** The last duty cycle that took a sequenced frame, and how many cycles in a row up to it did. */
    private long frameCycle = Long.MIN_VALUE;
    private int cyclesInRow;
    /** Payload bytes taken since the last ack that covered everything. */
    private long bytesSinceAck;

    /**
     * @param ackDelayNs how long a received message may wait for a piggybacked ack.
     * @param counters   the stack's counters.
     */
    ReceiveAcks(final long ackDelayNs, final StackCounters counters)
    {
        this.ackDelayNs = ackDelayNs;
        this.counters = counters;
    }

    /** @return the next sequence expected: the highest received plus one, 0 if none yet; any thread. */
    long nextRxSequence()
    {
        return nextRxSequence.get();
    }

    /** @return the cumulative ack this side would send now: the highest sequence received, 0 if none. */
    long ackValue()
    {
        final long next = nextRxSequence.getPlain();
        return next == 0 ? 0 : next - 1;
    }

    /**
     * Applies the receive rules to a sequenced frame. Its ACK_REQUIRED counts even when the frame is dropped: a
     * repeated request shows the peer missed our ack.
     *
     * @param sequence its sequence, not 0.
     * @param flags    its flags.
     * @param length   its payload's length.
     * @param nowNs    the time.
     * @param cycle    the duty cycle.
     * @return false if it is to be dropped (an old or stale retransmission).
     */
    boolean accept(final long sequence, final int flags, final long length, final long nowNs, final long cycle)
    {
        if ((flags & RdsHeader.FLAG_ACK_REQUIRED) != 0)
        {
            counters.recvAckRequired.incrementOrdered();
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
        if ((flags & RdsHeader.FLAG_RETRANSMITTED) != 0)
        {
            if (sequence < nextRxSequence.getPlain())
            {
                counters.recvDropOldSeq.incrementOrdered();
                return false;
            }
            if (firstSession)
            {
                counters.recvDropStale.incrementOrdered();
                return false;
            }
        }
        nextRxSequence.setRelease(sequence + 1);
        if (cycle != frameCycle)
        {
            cyclesInRow = cycle == frameCycle + 1 ? cyclesInRow + 1 : 1;
            frameCycle = cycle;
        }
        bytesSinceAck += length;
        return true;
    }

    /**
     * @param nowNs       the time.
     * @param cycle       the duty cycle.
     * @param streamWaits whether a flowing stream's requests may wait ({@link #STREAM_ACK_BYTES}): not for kernel RDS
     *                    over IB, whose send buffer (about 100 KiB by default) would run dry between acks.
     * @return true if an ack-only frame is due (when no data frame carries the ack).
     */
    boolean isAckDue(final long nowNs, final long cycle, final boolean streamWaits)
    {
        final long ack = ackValue();
        return (urgent && ack > 0 && cycle != urgentCycle && !(streamWaits && streamFlows(cycle))) ||
            (lastAckSent < ack && nowNs >= deadlineNs);
    }

    /** Whether a requested ack may wait for more of a stream: frames came in the last two cycles, not yet enough. */
    private boolean streamFlows(final long cycle)
    {
        return frameCycle == cycle - 1 && cyclesInRow >= 2 && bytesSinceAck < STREAM_ACK_BYTES;
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
            bytesSinceAck = 0;
        }
    }

    /**
     * A new transport connection came up: an ack may have been lost with the old one, so repeat it at once.
     *
     * @param cycle                the duty cycle.
     * @param peerLearnsGeneration the peer is told this process's generation (a handshake), so it flushes what
     *                             it sent to an earlier process; false for one that is not, whose
     *                             retransmissions are all delivered.
     */
    void onPathUp(final long cycle, final boolean peerLearnsGeneration)
    {
        if (!peerLearnsGeneration)
        {
            firstSession = false;
        }
        urgent = ackValue() > 0;
        urgentCycle = cycle - 1;
    }

    /** The transport connection went: a retransmission may now come from this process's own past. */
    void onPathDown()
    {
        firstSession = false;
    }

    /** Loopback: what was received was acked implicitly, so no ack frame is due. */
    void markAllAcked()
    {
        ackSent(ackValue());
    }

    /** The peer restarted: nothing of the old process is expected or owed an ack. */
    void reset()
    {
        nextRxSequence.setRelease(0);
        lastAckSent = 0;
        urgent = false;
        deadlineNs = Long.MAX_VALUE;
        bytesSinceAck = 0;
    }
}
