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

    @Test
    void aThreadGetsBackWhatItReleasedLastFirst()
    {
        final MessagePool pool = new MessagePool(new StackCounters().poolAlloc);
        final Message first = pool.acquire(64);
        final Message second = pool.acquire(64);
        pool.release(first);
        pool.release(second);
        assertSame(second, pool.acquire(10), "the last released, still in cache");
        assertSame(first, pool.acquire(10));
    }

    @Test
    void whatAThreadsCacheCannotHoldGoesToEveryThread() throws Exception
    {
        final StackCounters counters = new StackCounters();
        final MessagePool pool = new MessagePool(counters.poolAlloc);
        final int sizeClass = MessagePool.sizeClassOf(1000);
        final int cached = MessagePool.magazineCapacity(sizeClass);
        final Message[] messages = new Message[cached + 1];
        for (int i = 0; i < messages.length; i++)
        {
            messages[i] = pool.acquire(1000);
        }
        final long allocated = counters.poolAlloc.get();
        assertEquals(cached + 1, allocated);
        final Thread releaser = new Thread(() ->
        {
            for (final Message message : messages)
            {
                pool.release(message);
            }
        });
        releaser.start();
        releaser.join();
        assertSame(messages[cached], pool.acquire(1000), "the one the releasing thread could not keep is shared");
        final Message fresh = pool.acquire(1000);
        assertEquals(allocated + 1, counters.poolAlloc.get(), "the rest stay with the thread that released them");
        assertEquals(sizeClass, fresh.sizeClass);
    }
}
