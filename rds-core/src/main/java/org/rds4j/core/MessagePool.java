package org.rds4j.core;

import org.agrona.concurrent.status.AtomicCounter;
import org.jctools.queues.MpmcArrayQueue;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

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

    private static final int SLAB_BYTES = 1 << 20;

    private final MpmcArrayQueue<Message>[] free;
    private final AtomicCounter allocated;
    private final ByteBuffer[] slabs = new ByteBuffer[CLASSES];

    /** @param allocated counts messages allocated because a class had none free. */
    @SuppressWarnings("unchecked")
    MessagePool(final AtomicCounter allocated)
    {
        this.allocated = allocated;
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
            message = new Message(c, allocateFrame(c));
            allocated.increment();
        }
        message.payloadLength = payloadLength;
        return message;
    }

    /**
     * Carves a frame out of the class's current 1 MiB slab, so that warming up to a deep send window costs
     * one direct allocation per slab rather than one per message. Frames of 1 MiB payloads get their own.
     */
    private ByteBuffer allocateFrame(final int sizeClass)
    {
        final int frameBytes = RdsHeader.LENGTH + capacityOf(sizeClass);
        if (frameBytes > SLAB_BYTES / 4)
        {
            return ByteBuffer.allocateDirect(frameBytes);
        }
        synchronized (slabs)
        {
            ByteBuffer slab = slabs[sizeClass];
            if (slab == null || slab.remaining() < frameBytes)
            {
                slab = ByteBuffer.allocateDirect(SLAB_BYTES);
                slabs[sizeClass] = slab;
            }
            final ByteBuffer frame = slab.slice(slab.position(), frameBytes);
            slab.position(slab.position() + frameBytes);
            return frame;
        }
    }

    void release(final Message message)
    {
        message.reset();
        free[message.sizeClass].relaxedOffer(message);
    }
}
