package org.rds4j.core;

import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A socket's send ring: the shared memory its messages are written into by the application threads that send
 * them, and transmitted (and, after a reconnect, retransmitted) from until their destination acks them. A
 * record is one frame, header then payload, at a multiple of {@link #ALIGN} bytes; the stack stamps the header
 * in place. Records go to many destinations and are acked out of order, so the ring is freed out of order and
 * reclaimed in order: an ack marks its record free, and the ring's head moves over the freed records at its
 * front only. A destination that stops acking so holds the head; writers that find no room take pooled
 * messages instead ({@code send_ring_spill}), so the other destinations go on, and a cancel frees the stuck
 * records. The send buffer ({@code SO_SNDBUF}) stays the count of unacked payload bytes: the ring's room
 * never changes what a send returns.
 * <p>
 * Memory, on {@link SharedMemory}: the records ({@code capacity} bytes), then a state word per
 * {@link #ALIGN}-byte slot (0: no record starts here, or its writer has not marked it yet; +n: a record of n
 * slots starts here; -n: that record is free), then the tail and the head, absolute byte positions, each
 * on its own cache line.
 * <p>
 * Threads. Writers (any application thread) claim room at the tail with a compare-and-set and mark their record;
 * whoever releases a record (the stack, or a thread aborting a claim) marks it free; only the thread running the
 * duty cycle moves the head ({@link #reclaim}) and unmaps the memory. Before the head passes a record it clears
 * the record's state word, so every word but those of live records is 0 when a writer claims the slot again.
 * The memory is unmapped when the socket is closed, no writer is claiming, and every record is free (no
 * transport is still writing one, no claim is open); a claim left open across close leaves it to the garbage
 * collector.
 */
final class SendRing
{
    /** Records start at multiples of this: a 64-byte message and its 48-byte header fill two. */
    static final int ALIGN = 64;
    private static final int TAIL_OFFSET = 0;
    private static final int HEAD_OFFSET = 128;
    private static final int TRAILER_LENGTH = 256;

    private final int capacity;
    private final int mask;
    private final int stateOffset;
    private final int tailIndex;
    private final int headIndex;
    private final ByteBuffer memory;
    private final UnsafeBuffer words;
    /** Per slot, a view of the memory from the slot to the ring's end, made at the slot's first record. */
    private final ByteBuffer[] views;

    /** Threads inside {@link #claim}: the memory stays mapped while one is. */
    private final AtomicInteger writers = new AtomicInteger();
    private volatile boolean closed;

    // The thread running the duty cycle.
    private boolean unmapped;

    /**
     * @param directory where the ring's file is made (and at once unlinked).
     * @param capacity  the ring's size, a power of two of at least 4096 bytes.
     */
    SendRing(final Path directory, final int capacity)
    {
        if (!BitUtil.isPowerOfTwo(capacity) || capacity < 4096)
        {
            throw new IllegalArgumentException("a send ring is a power of two of at least 4096 bytes: " + capacity);
        }
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.stateOffset = capacity;
        final int slots = capacity / ALIGN;
        this.tailIndex = stateOffset + slots * Integer.BYTES + TAIL_OFFSET;
        this.headIndex = stateOffset + slots * Integer.BYTES + HEAD_OFFSET;
        this.memory = SharedMemory.map(directory, "tx", capacity + slots * Integer.BYTES + TRAILER_LENGTH);
        this.words = new UnsafeBuffer(memory);
        this.views = new ByteBuffer[slots];
    }

    /** @return the longest frame a record holds (an eighth of the ring); longer ones go to pooled messages. */
    int maxFrame()
    {
        return capacity / 8;
    }

    /**
     * Writer: takes room for a frame at the tail.
     *
     * @param frameLength header and payload bytes.
     * @return the record's position, or -1 if the frame is longer than {@link #maxFrame()}, the ring has no room
     *         for it now, or the ring is closed.
     */
    long claim(final int frameLength)
    {
        if (frameLength > maxFrame())
        {
            return -1;
        }
        writers.incrementAndGet();
        try
        {
            if (closed)
            {
                return -1;
            }
            final int need = BitUtil.align(frameLength, ALIGN);
            while (true)
            {
                final long head = words.getLongVolatile(headIndex);
                final long tail = words.getLongVolatile(tailIndex);
                final int toEnd = capacity - (int)(tail & mask);
                final int padding = need > toEnd ? toEnd : 0;
                if (tail + padding + need - head > capacity)
                {
                    return -1;
                }
                if (words.compareAndSetLong(tailIndex, tail, tail + padding + need))
                {
                    if (padding > 0)
                    {
                        words.putIntOrdered(stateIndex(tail), -(padding / ALIGN)); // free at once
                    }
                    final long position = tail + padding;
                    words.putIntOrdered(stateIndex(position), need / ALIGN);
                    return position;
                }
            }
        }
        finally
        {
            writers.decrementAndGet();
        }
    }

    /**
     * @param position a claimed record's position.
     * @return a view of the memory from the record's start, header at index 0, capacity to the ring's end; the
     *         record's owner alone uses it until the record is freed.
     */
    ByteBuffer view(final long position)
    {
        final int slot = (int)(position & mask) / ALIGN;
        ByteBuffer view = views[slot];
        if (view == null)
        {
            final int offset = slot * ALIGN;
            view = memory.slice(offset, capacity - offset);
            views[slot] = view;
        }
        return view;
    }

    /** Any thread, the record's owner: the record at {@code position} is no longer needed. */
    void free(final long position)
    {
        final int index = stateIndex(position);
        words.putIntOrdered(index, -Math.abs(words.getIntVolatile(index)));
    }

    /** The thread running the duty cycle: moves the head over the freed records at the front, and unmaps a closed, empty ring. */
    void reclaim()
    {
        if (unmapped)
        {
            return;
        }
        long head = words.getLongVolatile(headIndex);
        final long tail = words.getLongVolatile(tailIndex);
        final long start = head;
        while (head < tail)
        {
            final int index = stateIndex(head);
            final int state = words.getIntVolatile(index);
            if (state >= 0)
            {
                break; // live, or claimed and not yet marked
            }
            words.putIntOrdered(index, 0);
            head += (long)-state * ALIGN;
        }
        if (head != start)
        {
            words.putLongOrdered(headIndex, head);
        }
        if (closed && head == tail && writers.get() == 0 && words.getLongVolatile(tailIndex) == tail)
        {
            unmapped = true;
            SharedMemory.free(memory);
        }
    }

    /** The thread running the duty cycle: the socket is closed; the memory goes once every record is free. */
    void close()
    {
        closed = true;
        reclaim();
    }

    /** @return bytes between head and tail: live records, and freed ones the head has not passed yet. */
    long usedBytes()
    {
        return unmapped ? 0 : words.getLongVolatile(tailIndex) - words.getLongVolatile(headIndex);
    }

    /** @return true once the memory is released (tests). */
    boolean isUnmapped()
    {
        return unmapped;
    }

    private int stateIndex(final long position)
    {
        return stateOffset + (int)((position & mask) / ALIGN) * Integer.BYTES;
    }
}
