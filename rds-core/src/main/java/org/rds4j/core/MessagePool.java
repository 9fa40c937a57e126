package org.rds4j.core;

import org.jctools.queues.MpmcArrayQueue;

/**
 * Pools {@link Message}s in size classes (256 B, 1 KiB, ... 1 MiB, by factors of 4) so that the steady
 * state allocates nothing. Any thread may acquire and release. A class keeps at most about 64 MiB (and at
 * most 65536) of free messages, enough for a 1 MiB send buffer and a 1 MiB receive buffer of the smallest
 * messages; a release beyond that leaves the message to the garbage collector.
 */
final class MessagePool
{
    private static final int MIN_SHIFT = 8;
    static final int CLASSES = 7;
    private static final long RETAINED_BYTES_PER_CLASS = 64L << 20;

    private final MpmcArrayQueue<Message>[] free;

    @SuppressWarnings("unchecked")
    MessagePool()
    {
        free = new MpmcArrayQueue[CLASSES];
        for (int c = 0; c < CLASSES; c++)
        {
            final int capacity = (int)Math.max(64, Math.min(65536, RETAINED_BYTES_PER_CLASS / capacityOf(c)));
            free[c] = new MpmcArrayQueue<>(capacity);
        }
    }

    static int capacityOf(final int sizeClass)
    {
        return 1 << (MIN_SHIFT + 2 * sizeClass);
    }

    static int sizeClassOf(final int payloadLength)
    {
        if (payloadLength <= (1 << MIN_SHIFT))
        {
            return 0;
        }
        final int bits = 32 - Integer.numberOfLeadingZeros(payloadLength - 1);
        return (bits - MIN_SHIFT + 1) >>> 1;
    }

    /**
     * @param payloadLength 0 to 1 MiB.
     * @return a reset message with room for the payload, its {@code payloadLength} set.
     */
    Message acquire(final int payloadLength)
    {
        final int c = sizeClassOf(payloadLength);
        Message message = free[c].relaxedPoll();
        if (message == null)
        {
            message = new Message(c, capacityOf(c));
        }
        message.payloadLength = payloadLength;
        return message;
    }

    void release(final Message message)
    {
        message.reset();
        free[message.sizeClass].relaxedOffer(message);
    }
}
