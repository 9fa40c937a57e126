package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReceiveAcksTest
{
    private static final long DELAY = 1_000;

    private final ReceiveAcks acks = new ReceiveAcks(DELAY);

    @Test
    void aRequestedAckIsDueFromTheNextCycle()
    {
        acks.onSequenced(true, 0, 5);
        acks.accept(1);
        assertFalse(acks.isAckDue(0, 5), "a reply in the same cycle may carry it");
        assertTrue(acks.isAckDue(0, 6));
        acks.ackSent(1);
        assertFalse(acks.isAckDue(0, 7));
        assertFalse(acks.isAckOwed());
    }

    @Test
    void anUnrequestedAckIsDueAfterTheDelay()
    {
        acks.onSequenced(false, 100, 1);
        acks.accept(1);
        assertTrue(acks.isAckOwed());
        assertFalse(acks.isAckDue(100 + DELAY - 1, 2));
        assertTrue(acks.isAckDue(100 + DELAY, 2));
        acks.onSequenced(false, 200, 2);
        acks.accept(2);
        assertTrue(acks.isAckDue(100 + DELAY, 2), "the deadline is the first unacked message's");
        acks.ackSent(1);
        assertTrue(acks.isAckDue(100 + DELAY, 2), "an ack below the highest received leaves the deadline");
        acks.ackSent(2);
        assertFalse(acks.isAckDue(Long.MAX_VALUE - 1, 3));
    }

    @Test
    void aRequestWithNothingReceivedAsksForNoAck()
    {
        acks.onSequenced(true, 0, 1);
        assertFalse(acks.isAckDue(0, 2));
        assertEquals(0, acks.ackValue());
    }

    @Test
    void aNewPathRepeatsTheLastAckAtOnce()
    {
        acks.accept(3);
        acks.ackSent(3);
        assertFalse(acks.isAckDue(0, 10));
        acks.onPathUp(10);
        assertTrue(acks.isAckDue(0, 10));
        assertEquals(3, acks.ackValue());
        assertEquals(4, acks.nextRxSequence());
    }

    @Test
    void aRestartedPeerIsOwedNothing()
    {
        acks.onSequenced(true, 0, 1);
        acks.accept(3);
        acks.reset();
        assertEquals(0, acks.nextRxSequence());
        assertEquals(0, acks.ackValue());
        assertFalse(acks.isAckOwed());
        assertFalse(acks.isAckDue(Long.MAX_VALUE - 1, 9));
    }
}
