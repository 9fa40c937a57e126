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
        assertTrue(acks.accept(1, FLAG_ACK_REQUIRED, 0, 5));
        assertFalse(acks.isAckDue(0, 5), "a reply in the same cycle may carry it");
        assertTrue(acks.isAckDue(0, 6));
        acks.ackSent(1);
        assertFalse(acks.isAckDue(0, 7));
        assertFalse(acks.isAckOwed());
    }

    @Test
    void anUnrequestedAckIsDueAfterTheDelay()
    {
        assertTrue(acks.accept(1, 0, 100, 1));
        assertTrue(acks.isAckOwed());
        assertFalse(acks.isAckDue(100 + DELAY - 1, 2));
        assertTrue(acks.isAckDue(100 + DELAY, 2));
        assertTrue(acks.accept(2, 0, 200, 2));
        assertTrue(acks.isAckDue(100 + DELAY, 2), "the deadline is the first unacked message's");
        acks.ackSent(1);
        assertTrue(acks.isAckDue(100 + DELAY, 2), "an ack below the highest received leaves the deadline");
        acks.ackSent(2);
        assertFalse(acks.isAckDue(Long.MAX_VALUE - 1, 3));
    }

    @Test
    void retransmissionsOnTheFirstSessionOrBelowTheNextExpectedAreDroppedButTheirRequestCounts()
    {
        assertFalse(acks.accept(5, FLAG_RETRANSMITTED | FLAG_ACK_REQUIRED, 0, 1), "stale: meant for an earlier process");
        assertEquals(0, acks.nextRxSequence());
        assertFalse(acks.isAckDue(0, 2), "nothing received to ack");
        acks.onPathDown();
        assertTrue(acks.accept(5, FLAG_RETRANSMITTED, 0, 2));
        assertTrue(acks.accept(3, 0, 0, 2), "a sequence below is taken unless retransmitted");
        assertEquals(4, acks.nextRxSequence());
        assertTrue(acks.accept(5, 0, 0, 2));
        assertFalse(acks.accept(5, FLAG_RETRANSMITTED | FLAG_ACK_REQUIRED, 0, 2));
        assertTrue(acks.isAckDue(0, 3), "a repeated request is acked again");
        assertEquals(1, counters.recvDropStale.get());
        assertEquals(1, counters.recvDropOldSeq.get());
        assertEquals(2, counters.recvAckRequired.get());
    }

    @Test
    void retransmissionsFromAPeerThatNeverLearnsAGenerationAreTakenOnTheFirstSession()
    {
        acks.onPathUp(1, false);
        assertTrue(acks.accept(5, FLAG_RETRANSMITTED, 0, 1), "a kernel peer over IB resends to a new process");
        assertEquals(6, acks.nextRxSequence());
        assertFalse(acks.accept(5, FLAG_RETRANSMITTED, 0, 1), "a repeat is still old");
        assertEquals(0, counters.recvDropStale.get());
        assertEquals(1, counters.recvDropOldSeq.get());
    }

    @Test
    void loopbackAcksEverythingAtOnce()
    {
        acks.accept(2, FLAG_ACK_REQUIRED, 0, 1);
        acks.markAllAcked();
        assertFalse(acks.isAckOwed());
    }

    @Test
    void aNewPathRepeatsTheLastAckAtOnce()
    {
        acks.accept(3, 0, 0, 1);
        acks.ackSent(3);
        assertFalse(acks.isAckDue(0, 10));
        acks.onPathUp(10, true);
        assertTrue(acks.isAckDue(0, 10));
        assertEquals(3, acks.ackValue());
        assertEquals(4, acks.nextRxSequence());
    }

    @Test
    void aRestartedPeerIsOwedNothing()
    {
        acks.accept(3, FLAG_ACK_REQUIRED, 0, 1);
        acks.reset();
        assertEquals(0, acks.nextRxSequence());
        assertEquals(0, acks.ackValue());
        assertFalse(acks.isAckOwed());
        assertFalse(acks.isAckDue(Long.MAX_VALUE - 1, 9));
    }
}
