package org.rds4j.core;

import org.agrona.concurrent.status.AtomicCounter;
import org.jctools.queues.MpmcArrayQueue;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

/**
 * Pools {@link Message}s in size classes (256 B, 1 KiB, ... 1 MiB, by factors of 4) so that the steady
 * state allocates nothing. Any thread may acquire and release.
 * <p>
 * Each thread first uses a small stack of its own per class (a magazine, at most {@link #MAGAZINE_BYTES} of
 * frames): the message it released last is the one it gets next, still in its cache. A thread that receives
 * and consumes, or sends and handles acks (INVOKER mode), so works on a batch's worth of messages instead of
 * walking through every message the pool ever made; that is worth about twice the message rate for small
 * messages. What a magazine cannot hold goes to, and an empty magazine takes from, the class's shared queue.
 * The shared queue of a class keeps at most about 64 MiB (and at most 65536) of free messages, enough for a
 * 1 MiB send buffer and a 1 MiB receive buffer of the smallest messages; a release beyond that leaves the
 * message to the garbage collector, as does a thread's end its magazine.
 */
final class MessagePool
{
    private static final int MIN_SHIFT = 8;
    static final int CLASSES = 7;
    private static final long RETAINED_BYTES_PER_CLASS = 64L << 20;

    private static final int SLAB_BYTES = 1 << 20;
    /** Bytes of frames a thread's magazine holds per class: a read batch of small messages, and some. */
    static final int MAGAZINE_BYTES = 512 * 1024;
    private static final int MAGAZINE_MAX_MESSAGES = 1024;

    private final ThreadLocal<Magazine> magazines = ThreadLocal.withInitial(Magazine::new);

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
        Message message = magazines.get().pop(c);
        if (message == null)
        {
            message = free[c].relaxedPoll();
        }
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

    /**
     * Takes back a message; a send ring's message stays its ring's, and its record is freed (reset first: once
     * freed, the slot's message may be handed to the next record at once).
     */
    void release(final Message message)
    {
        message.reset();
        if (message.ring != null)
        {
            message.ring.free(message.ringPosition);
            return;
        }
        if (!magazines.get().push(message))
        {
            free[message.sizeClass].relaxedOffer(message);
        }
    }

    /** @return how many messages a magazine keeps of a class: {@link #MAGAZINE_BYTES} of frames, 1 to 1024. */
    static int magazineCapacity(final int sizeClass)
    {
        return Math.max(1, Math.min(MAGAZINE_MAX_MESSAGES, MAGAZINE_BYTES / (RdsHeader.LENGTH + capacityOf(sizeClass))));
    }

    /** One thread's stacks of free messages, one per class; only that thread touches it. */
    private static final class Magazine
    {
        private final Message[][] stacks = new Message[CLASSES][];
        private final int[] sizes = new int[CLASSES];

        Magazine()
        {
            for (int c = 0; c < CLASSES; c++)
            {
                stacks[c] = new Message[magazineCapacity(c)];
            }
        }

        Message pop(final int sizeClass)
        {
            final int size = sizes[sizeClass];
            if (size == 0)
            {
                return null;
            }
            final Message[] stack = stacks[sizeClass];
            final Message message = stack[size - 1];
            stack[size - 1] = null;
            sizes[sizeClass] = size - 1;
            return message;
        }

        boolean push(final Message message)
        {
            final int sizeClass = message.sizeClass;
            final int size = sizes[sizeClass];
            final Message[] stack = stacks[sizeClass];
            if (size == stack.length)
            {
                return false;
            }
            stack[size] = message;
            sizes[sizeClass] = size + 1;
            return true;
        }
    }
}
