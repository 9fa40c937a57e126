package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.wire.RdsHeader.FLAG_ACK_REQUIRED;
import static org.rds4j.core.wire.RdsHeader.FLAG_RETRANSMITTED;

class ReceiveAcksTest
{
    private static final long DELAY = 1_000;

    private final StackCounters counters = new StackCounters();
    private final ReceiveAcks acks = new ReceiveAcks(DELAY, counters);

    @Test
    void aRequestedAckIsDueFromTheNextCycle()
    {
        assertTrue(acks.accept(1, FLAG_ACK_REQUIRED, 64, 0, 5));
        assertFalse(acks.isAckDue(0, 5, true), "a reply in the same cycle may carry it");
        assertTrue(acks.isAckDue(0, 6, true));
        acks.ackSent(1);
        assertFalse(acks.isAckDue(0, 7, true));
        assertFalse(acks.isAckOwed());
    }

    @Test
    void aFlowingStreamIsAckedEveryStreamAckBytesOrWhenACycleBringsNothing()
    {
        final int length = 16 * 1024;
        final int perWindow = (int)(ReceiveAcks.STREAM_ACK_BYTES / length); // 16
        long sequence = 1;
        long cycle = 10;
        int ackOnly = 0;
        // a frame asking for an ack in every cycle; each cycle decides on the ack before it reads, as a duty cycle does
        for (int i = 0; i < 4 * perWindow; i++, cycle++)
        {
            if (acks.isAckDue(0, cycle, true))
            {
                ackOnly++;
                acks.ackSent(acks.ackValue());
                // the first request in the next cycle (one cycle of frames is not yet a stream), then once
                // STREAM_ACK_BYTES have come since
                assertEquals(0, (sequence - 2) % perWindow, "acked at " + sequence);
            }
            assertTrue(acks.accept(sequence++, FLAG_ACK_REQUIRED, length, 0, cycle));
        }
        assertEquals(4, ackOnly, "64 frames of 16 KiB: after the first, then after 16, 32 and 48 more");
        assertTrue(acks.isAckOwed());
        assertFalse(acks.isAckDue(0, cycle, true), "frames came in the last two cycles, fewer than STREAM_ACK_BYTES");
        assertTrue(acks.isAckDue(0, cycle + 1, true), "a cycle that brought nothing: the sender may be waiting");
        assertTrue(acks.isAckDue(0, cycle, false), "kernel RDS over IB: acked from the cycle after the request");
    }

    @Test
    void aLoneRequestInACycleAfterAQuietOneIsAckedInTheNextCycle()
    {
        assertTrue(acks.accept(1, 0, 64, 0, 3));
        assertTrue(acks.accept(2, FLAG_ACK_REQUIRED, 64, 0, 5));
        assertTrue(acks.isAckDue(0, 6, true), "frames in one cycle only: not a stream");
    }

    @Test
    void anUnrequestedAckIsDueAfterTheDelay()
    {
        assertTrue(acks.accept(1, 0, 64, 100, 1));
        assertTrue(acks.isAckOwed());
        assertFalse(acks.isAckDue(100 + DELAY - 1, 2, true));
        assertTrue(acks.isAckDue(100 + DELAY, 2, true));
        assertTrue(acks.accept(2, 0, 64, 200, 2));
        assertTrue(acks.isAckDue(100 + DELAY, 2, true), "the deadline is the first unacked message's");
        acks.ackSent(1);
        assertTrue(acks.isAckDue(100 + DELAY, 2, true), "an ack below the highest received leaves the deadline");
        acks.ackSent(2);
        assertFalse(acks.isAckDue(Long.MAX_VALUE - 1, 3, true));
    }

    @Test
    void retransmissionsOnTheFirstSessionOrBelowTheNextExpectedAreDroppedButTheirRequestCounts()
    {
        assertFalse(acks.accept(5, FLAG_RETRANSMITTED | FLAG_ACK_REQUIRED, 64, 0, 1), "stale: meant for an earlier process");
        assertEquals(0, acks.nextRxSequence());
        assertFalse(acks.isAckDue(0, 2, true), "nothing received to ack");
        acks.onPathDown();
        assertTrue(acks.accept(5, FLAG_RETRANSMITTED, 64, 0, 2));
        assertTrue(acks.accept(3, 0, 64, 0, 2), "a sequence below is taken unless retransmitted");
        assertEquals(4, acks.nextRxSequence());
        assertTrue(acks.accept(5, 0, 64, 0, 2));
        assertFalse(acks.accept(5, FLAG_RETRANSMITTED | FLAG_ACK_REQUIRED, 64, 0, 2));
        assertTrue(acks.isAckDue(0, 3, true), "a repeated request is acked again");
        assertEquals(1, counters.recvDropStale.get());
        assertEquals(1, counters.recvDropOldSeq.get());
        assertEquals(2, counters.recvAckRequired.get());
    }

    @Test
    void retransmissionsFromAPeerThatNeverLearnsAGenerationAreTakenOnTheFirstSession()
    {
        acks.onPathUp(1, false);
        assertTrue(acks.accept(5, FLAG_RETRANSMITTED, 64, 0, 1), "a kernel peer over IB resends to a new process");
        assertEquals(6, acks.nextRxSequence());
        assertFalse(acks.accept(5, FLAG_RETRANSMITTED, 64, 0, 1), "a repeat is still old");
        assertEquals(0, counters.recvDropStale.get());
        assertEquals(1, counters.recvDropOldSeq.get());
    }

    @Test
    void loopbackAcksEverythingAtOnce()
    {
        acks.accept(2, FLAG_ACK_REQUIRED, 64, 0, 1);
        acks.markAllAcked();
        assertFalse(acks.isAckOwed());
    }

    @Test
    void aNewPathRepeatsTheLastAckAtOnce()
    {
        acks.accept(3, 0, 64, 0, 1);
        acks.ackSent(3);
        assertFalse(acks.isAckDue(0, 10, true));
        acks.onPathUp(10, true);
        assertTrue(acks.isAckDue(0, 10, true));
        assertEquals(3, acks.ackValue());
        assertEquals(4, acks.nextRxSequence());
    }

    @Test
    void aRestartedPeerIsOwedNothing()
    {
        acks.accept(3, FLAG_ACK_REQUIRED, 64, 0, 1);
        acks.reset();
        assertEquals(0, acks.nextRxSequence());
        assertEquals(0, acks.ackValue());
        assertFalse(acks.isAckOwed());
        assertFalse(acks.isAckDue(Long.MAX_VALUE - 1, 9, true));
    }
}
