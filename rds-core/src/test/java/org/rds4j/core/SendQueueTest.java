package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.RdsHeader;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class SendQueueTest
{
    private static Message message(final long sequence, final int dport)
    {
        final Message message = new Message(0, java.nio.ByteBuffer.allocateDirect(RdsHeader.LENGTH + 256));
        message.sequence = sequence;
        message.dport = dport;
        return message;
    }

    @Test
    void acksRemoveMessagesUpToTheCumulativeAck()
    {
        final SendQueue queue = new SendQueue();
        for (int i = 1; i <= 5; i++)
        {
            queue.add(message(i, 1));
        }
        queue.markSent();
        queue.markSent();
        queue.markSent();
        assertEquals(3, queue.sentCount());
        assertEquals(1, queue.pollAcked(2, false).sequence);
        assertEquals(2, queue.pollAcked(2, false).sequence);
        assertNull(queue.pollAcked(2, false), "3 is not covered by ack 2");
        assertEquals(1, queue.sentCount());
        assertEquals(3, queue.pollAcked(5, true).sequence, "a sent head is never locked");
        assertEquals(0, queue.sentCount());
        assertNull(queue.pollAcked(5, true), "4 is being written: it stays until its write completes");
        assertEquals(4, queue.pollAcked(5, false).sequence,
            "a message waiting for retransmission that the peer acked is freed");
        assertEquals(1, queue.size());
    }

    @Test
    void growsPastItsInitialCapacityKeepingOrder()
    {
        final SendQueue queue = new SendQueue();
        for (int i = 1; i <= 1000; i++)
        {
            queue.add(message(i, 1));
        }
        for (int i = 0; i < 1000; i++)
        {
            assertEquals(i + 1, queue.get(i).sequence);
        }
    }

    @Test
    void removeIfKeepsOrderAndTheSentBoundary()
    {
        final SendQueue queue = new SendQueue();
        for (int i = 1; i <= 6; i++)
        {
            queue.add(message(i, i % 2 == 0 ? 7 : 8));
        }
        for (int i = 0; i < 4; i++)
        {
            queue.markSent();
        }
        final List<Long> removed = new ArrayList<>();
        assertEquals(3, queue.removeIf((index, m) -> m.dport == 7, m -> removed.add(m.sequence)));
        assertEquals(List.of(2L, 4L, 6L), removed);
        assertEquals(3, queue.size());
        assertEquals(2, queue.sentCount(), "1 and 3 were sent; 5 was not");
        assertEquals(1, queue.get(0).sequence);
        assertEquals(3, queue.get(1).sequence);
        assertEquals(5, queue.get(2).sequence);
    }

    @Test
    void markAllUnsentKeepsMessagesForRetransmission()
    {
        final SendQueue queue = new SendQueue();
        final Message first = message(1, 1);
        queue.add(first);
        queue.add(message(2, 1));
        queue.markSent();
        queue.markAllUnsent();
        assertEquals(0, queue.sentCount());
        assertEquals(2, queue.size());
        assertSame(first, queue.pollHead());
    }
}
