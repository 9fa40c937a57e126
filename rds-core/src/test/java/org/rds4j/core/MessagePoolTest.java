package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MessagePoolTest
{
    @Test
    void sizeClassesCoverZeroToOneMebibyteByFactorsOfFour()
    {
        assertEquals(0, MessagePool.sizeClassOf(0));
        assertEquals(0, MessagePool.sizeClassOf(256));
        assertEquals(1, MessagePool.sizeClassOf(257));
        assertEquals(1, MessagePool.sizeClassOf(1024));
        assertEquals(2, MessagePool.sizeClassOf(1025));
        assertEquals(MessagePool.CLASSES - 1, MessagePool.sizeClassOf(1 << 20));
        for (int length : new int[] {0, 1, 255, 256, 257, 4096, 4097, 65536, 100_000, 1 << 20})
        {
            final int c = MessagePool.sizeClassOf(length);
            assertTrue(MessagePool.capacityOf(c) >= length, "class fits " + length);
            assertTrue(c == 0 || MessagePool.capacityOf(c - 1) < length, "smallest class for " + length);
        }
    }

    @Test
    void releasedMessagesAreReusedReset()
    {
        final MessagePool pool = new MessagePool(new StackCounters().poolAlloc);
        final Message message = pool.acquire(100);
        message.sequence = 9;
        message.cancelled = true;
        pool.release(message);
        final Message again = pool.acquire(200);
        assertSame(message, again);
        assertEquals(200, again.payloadLength);
        assertEquals(0, again.sequence);
        assertEquals(false, again.cancelled);
    }
}
