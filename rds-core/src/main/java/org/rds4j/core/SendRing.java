package org.rds4j.core;

import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A socket's send ring: the shared memory its messages are written into by the application threads that send
 * them, read in order by the thread running the duty cycle (the ring is the socket's queue to the stack), and
 * transmitted (and, after a reconnect, retransmitted) from until their destination acks them. A record is one
 * frame, header then payload, at a multiple of {@link #ALIGN} bytes; the stack stamps the header in place. Records
 * go to many destinations and are acked out of order, so the ring is freed out of order and reclaimed in order: an
 * ack marks its record free, and the ring's head moves over the freed records at its front only. A destination
 * that stops acking so holds the head; writers that find no room take pooled messages instead
 * ({@code send_ring_spill}), so the other destinations go on, and a cancel frees the stuck records. The send buffer
 * ({@code SO_SNDBUF}) stays the count of unacked payload bytes: the ring's room never changes what a send returns.
 * <p>
 * A record's life, in its state word:
 * <pre>
 *   0 --claim--> WRITING --commit--> COMMITTED --read--> (the stack's) --free--> FREE --head passes--> 0
 *   0 --claimAside--> ASIDE --------------------------------------------free--> FREE
 * </pre>
 * The reader takes COMMITTED records in position order and stops at a WRITING one, or at a 0 (the tail, or a record
 * whose writer has claimed it and not marked it yet). An ASIDE record (an {@link org.rds4j.RdsClaim}'s) reaches the
 * stack through the socket's queue when committed, in the order of commits, so the reader passes it by, as it
 * passes a FREE one (a padding, an aborted claim).
 * <p>
 * Memory, on {@link SharedMemory}: the records ({@code capacity} bytes), then a state word per {@link #ALIGN}-byte
 * slot (0: no record starts here, or its writer has not marked it yet; a live record's slot count with its
 * COMMITTED or ASIDE bit; minus the slot count: that record is free). Beside it, in memory of this process that is
 * never unmapped, the tail, the head, the writers' cache of the head and the reader's position, absolute byte
 * positions, each on its own cache line: the head's line moves to a writer only when the cached head shows no room,
 * not at every claim (agrona's many-to-one ring buffer does the same).
 * <p>
 * Threads. Writers (any application thread) claim room at the tail with a compare-and-set and mark their record;
 * whoever releases a record (the stack, or a thread aborting a claim) marks it free; only the thread running the
 * duty cycle reads records ({@link #next}), moves the head ({@link #reclaim}, as it frees each record) and unmaps the
 * memory. Before the head passes a record it clears the record's state word, so every word but those of live
 * records and of paddings is 0: the head stops at a 0 without reading the tail, whose line the writers keep.
 * The memory is unmapped when the socket is closed and every record is free (no transport is still writing
 * one, no claim is open); a claim left open across close leaves it to the garbage collector. A writer touches the
 * mapped memory only once its compare-and-set has made its record live, and the stack unmaps only after a
 * compare-and-set of its own has moved the tail from the head to {@link #CLOSED}, which fails while a record is
 * live and makes every later claim fail: so no writer needs to count itself in and out (two atomic instructions
 * per message).
 */
final class SendRing
{
    /** Records start at multiples of this: a 64-byte message and its 48-byte header fill two. */
    static final int ALIGN = 64;
    private static final int TAIL_INDEX = 0;
    private static final int HEAD_INDEX = 128;
    private static final int HEAD_CACHE_INDEX = 256;
    private static final int READ_INDEX = 384;
    private static final int POSITIONS_LENGTH = 512;
    /** A live record's state bits, above its slot count: written (the reader takes it), or claimed aside. */
    private static final int COMMITTED = 1 << 30;
    private static final int ASIDE = 1 << 29;
    private static final int SLOTS = ASIDE - 1;
    /** The tail of a ring whose memory is gone. */
    private static final long CLOSED = Long.MIN_VALUE;

    private final int capacity;
    private final int mask;
    private final int stateOffset;
    private final ByteBuffer memory;
    private final UnsafeBuffer words;
    /** The tail, the head and the head's cache: process memory, so that a writer may read them after the unmap. */
    private final UnsafeBuffer positions = new UnsafeBuffer(ByteBuffer.allocateDirect(POSITIONS_LENGTH));
    /**
     * Per slot, the message of the record that starts there, its frame a view of the memory from the slot to the
     * ring's end: made at the slot's first record, handed to each record after. A record's message is its own
     * until freed, so a slot's message serves one record at a time.
     */
    private final Message[] messages;

    private volatile boolean closed;
    /** A writer freed a record (an aborted claim): the stack's next look reclaims. */
    private volatile boolean freedByWriter;

    // The thread running the duty cycle.
    private boolean unmapped;
    /** The head, which only this thread moves. */
    private long head;
    /** The reader's position: the records before it are taken or passed by; never behind the head. */
    private long read;

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
        this.memory = SharedMemory.map(directory, "tx", capacity + slots * Integer.BYTES);
        this.words = new UnsafeBuffer(memory);
        this.messages = new Message[slots];
    }

    /** @return the longest frame a record holds (an eighth of the ring); longer ones go to pooled messages. */
    int maxFrame()
    {
        return capacity / 8;
    }

    /**
     * Writer: takes room at the tail for a frame that the reader takes once {@link #commit committed}.
     *
     * @param frameLength header and payload bytes.
     * @return the record's position, or -1 if the frame is longer than {@link #maxFrame()}, the ring has no room
     *         for it now, or the ring is closed.
     */
    long claim(final int frameLength)
    {
        return claim(frameLength, 0);
    }

    /**
     * Writer: takes room at the tail for a frame that reaches the stack another way (an {@link org.rds4j.RdsClaim}'s,
     * through the socket's queue in the order of commits): the reader passes it by.
     *
     * @return as {@link #claim(int)}.
     */
    long claimAside(final int frameLength)
    {
        return claim(frameLength, ASIDE);
    }

    private long claim(final int frameLength, final int kind)
    {
        if (frameLength > maxFrame())
        {
            return -1;
        }
        if (closed)
        {
            return -1;
        }
        final int need = BitUtil.align(frameLength, ALIGN);
        while (true)
        {
            final long tail = positions.getLongVolatile(TAIL_INDEX);
            if (tail == CLOSED)
            {
                return -1;
            }
            final int toEnd = capacity - (int)(tail & mask);
            final int padding = need > toEnd ? toEnd : 0;
            if (tail + padding + need - positions.getLong(HEAD_CACHE_INDEX) > capacity)
            {
                final long head = positions.getLongVolatile(HEAD_INDEX);
                positions.putLongOrdered(HEAD_CACHE_INDEX, head);
                if (tail + padding + need - head > capacity)
                {
                    return -1;
                }
            }
            if (positions.compareAndSetLong(TAIL_INDEX, tail, tail + padding + need))
            {
                // the record is live from here (its slot's 0 stops the head), so the memory stays mapped
                if (padding > 0)
                {
                    words.putIntOrdered(stateIndex(tail), -(padding / ALIGN)); // free at once
                }
                final long position = tail + padding;
                words.putIntOrdered(stateIndex(position), need / ALIGN | kind);
                return position;
            }
        }
    }

    /**
     * @param position a claimed record's position.
     * @return the record's message, reset, its frame from the record's start (header at index 0) with a capacity
     *         to the ring's end; the record's owner alone uses it until {@link MessagePool#release} frees the
     *         record.
     */
    Message message(final long position)
    {
        final int slot = (int)(position & mask) / ALIGN;
        Message message = messages[slot];
        if (message == null)
        {
            final int offset = slot * ALIGN;
            message = new Message(this, memory.slice(offset, capacity - offset));
            messages[slot] = message;
        }
        message.ringPosition = position;
        return message;
    }

    /** Writer: the record at {@code position}, claimed with {@link #claim(int)}, is written: the reader may take it. */
    void commit(final long position)
    {
        final int index = stateIndex(position);
        // a full fence, not an ordered store: the writer reads next whether the stack is parking, and the stack sets
        // that before it looks here; with either store passing the other's load, both miss and the stack sleeps
        words.putIntVolatile(index, words.getInt(index) | COMMITTED);
    }

    /** Any thread, the record's owner: the record at {@code position} is no longer needed. */
    void free(final long position)
    {
        final int index = stateIndex(position);
        words.putIntOrdered(index, -(Math.abs(words.getIntVolatile(index)) & SLOTS));
    }

    /**
     * The thread running the duty cycle: takes the next committed record.
     *
     * @return the record's message, as its writer left it ({@link #message}), or null if the reader is at the tail
     *         or at a record not committed yet (it waits there: the records after it are read after it).
     */
    Message next()
    {
        final int state = passBy();
        if (state <= 0 || (state & COMMITTED) == 0)
        {
            return null;
        }
        final Message message = messages[(int)(read & mask) / ALIGN];
        read += (long)(state & SLOTS) * ALIGN;
        return message;
    }

    /**
     * The thread running the duty cycle: where the reader is, past the records it passes by. A message that reached
     * the stack another way with a mark at or below it follows every record committed before its mark.
     */
    long readPosition()
    {
        passBy();
        return read;
    }

    /** The thread running the duty cycle: whether {@link #next} would return a record. */
    boolean hasCommitted()
    {
        final int state = passBy();
        return state > 0 && (state & COMMITTED) != 0;
    }

    /** The thread running the duty cycle: makes the reader's position visible to {@link #unreadBytes}. */
    void publishRead()
    {
        if (!unmapped)
        {
            positions.putLongOrdered(READ_INDEX, read);
        }
    }

    /** Any thread: bytes from the reader's position last published to the tail (a record being written counts). */
    long unreadBytes()
    {
        return unmapped ? 0 : positions.getLongVolatile(TAIL_INDEX) - positions.getLongVolatile(READ_INDEX);
    }

    /** Any thread: the tail, the mark of a message handed to the stack outside the ring (a closed ring's is lowest). */
    long tail()
    {
        return positions.getLongVolatile(TAIL_INDEX);
    }

    /** Moves the reader over records that reach the stack another way and freed ones; @return the state it stops at. */
    private int passBy()
    {
        if (unmapped)
        {
            return 0;
        }
        if (read < head)
        {
            read = head; // the head passed freed records the reader had not reached (an aborted claim's)
        }
        // a lap past the head is the tail of a full ring, whose slot is the head's record
        while (read - head < capacity)
        {
            final int state = words.getIntVolatile(stateIndex(read));
            if (state < 0)
            {
                read += (long)-state * ALIGN;
            }
            else if ((state & ASIDE) != 0)
            {
                read += (long)(state & SLOTS) * ALIGN;
            }
            else
            {
                return state;
            }
        }
        return 0;
    }

    /** The thread running the duty cycle: moves the head over the freed records at the front, and unmaps a closed, empty ring. */
    void reclaim()
    {
        if (unmapped)
        {
            return;
        }
        final long start = head;
        while (true)
        {
            final int index = stateIndex(head);
            final int state = words.getIntVolatile(index);
            if (state >= 0)
            {
                break; // live, claimed and not yet marked, or nothing claimed here: the tail
            }
            words.putIntOrdered(index, 0);
            head += (long)-state * ALIGN;
        }
        if (head != start)
        {
            positions.putLongOrdered(HEAD_INDEX, head);
        }
        if (closed && positions.compareAndSetLong(TAIL_INDEX, head, CLOSED))
        {
            unmapped = true;
            SharedMemory.free(memory);
        }
    }

    /** A writer freed a record outside the duty cycle (an aborted claim): {@link #reclaimFreedByWriters} will see it. */
    void freedByWriter()
    {
        freedByWriter = true;
    }

    /** The thread running the duty cycle: reclaims if a writer freed a record; else only one volatile read. */
    void reclaimFreedByWriters()
    {
        if (freedByWriter)
        {
            freedByWriter = false;
            reclaim();
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
        return unmapped ? 0 : positions.getLongVolatile(TAIL_INDEX) - positions.getLongVolatile(HEAD_INDEX);
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
