package org.rds4j.core;

import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The positions and framing of a ring of records in shared memory with one writer and one reader at a time, which
 * {@link ReceiveRing} and {@link DriverRing} share. A record starts with its length (its header included) as an int,
 * at a multiple of {@link #ALIGNMENT} bytes; what follows the length is the owner's. A record that does not fit
 * before the ring's end starts it again, after a length of {@link #PADDING} that tells the reader to skip to the
 * end. After the records ({@code capacity} bytes) come the tail (the writer's position) and the head (the reader's),
 * absolute byte positions, each on a cache line of its own.
 * <p>
 * Each side keeps its own position and a copy of the other's, looked at again only when that copy shows no record
 * (the reader) or no room (the writer), and publishes its own with an ordered store: a record costs neither side a
 * fence or an atomic instruction, and nothing is cleared after it is read (agrona's one-to-one ring clears each
 * record and reads both positions at every call, which showed in profiles of 64 B traffic).
 * <p>
 * Neither side trusts what the other may have written. The reader checks the tail and each record's length against
 * the ring and throws {@link IllegalStateException} on one that does not fit. The writer reads only the head and
 * keeps its tail to itself, so a reader that writes over the positions chooses only where in the ring the writer
 * writes, never outside it.
 */
final class RecordRing
{
    /** Records start at multiples of this. */
    static final int ALIGNMENT = 8;
    /** Where the tail is, from the end of the records. */
    static final int TAIL_OFFSET = 0;
    /** Where the head is, from the end of the records. */
    static final int HEAD_OFFSET = 128;
    /** The positions' room after the records. */
    static final int POSITIONS_LENGTH = 256;
    /** The length that marks the rest of the ring as padding. */
    private static final int PADDING = -1;

    private final UnsafeBuffer buffer;
    private final int capacity;
    private final int mask;
    private final int tailIndex;
    private final int headIndex;

    // The writer.
    private long tail;
    /** The head as the writer last read it: the reader has consumed at least up to it (if it tells the truth). */
    private long headCache;
    /** Where the claimed record ends: {@link #commit} publishes it as the tail. */
    private long claimedEnd;
    /** The claimed record's room. */
    private int claimedAligned;

    // The reader.
    private long head;
    /** The tail as the reader last read it, checked: records up to it are complete. */
    private long tailCache;
    private long publishedHead;
    /**
     * The record {@link #next} returned and its length as checked there: the length is read once, so that a writer
     * that changes it after the check (another process's) cannot move the head by what was not checked.
     */
    private int nextIndex = -1;
    private int nextLength;

    /**
     * @param buffer   the memory: the records, then at least {@link #POSITIONS_LENGTH} bytes.
     * @param capacity the records' room, a power of two.
     */
    RecordRing(final UnsafeBuffer buffer, final int capacity)
    {
        if (!BitUtil.isPowerOfTwo(capacity) || buffer.capacity() < capacity + POSITIONS_LENGTH)
        {
            throw new IllegalArgumentException("a ring of " + capacity + " bytes in " + buffer.capacity());
        }
        this.buffer = buffer;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.tailIndex = capacity + TAIL_OFFSET;
        this.headIndex = capacity + HEAD_OFFSET;
    }

    /**
     * Writer: claims room for a record of {@code recordLength} bytes (its length included) and writes its length,
     * for the caller to write the rest and {@link #commit} before the next claim.
     *
     * @return the record's index, or -1 if the ring has no room for it now.
     */
    int claim(final int recordLength)
    {
        final int aligned = BitUtil.align(recordLength, ALIGNMENT);
        final int index = (int)(tail & mask);
        final int toEnd = capacity - index;
        final int padding = aligned > toEnd ? toEnd : 0;
        final long end = tail + padding + aligned;
        if (end - headCache > capacity)
        {
            headCache = buffer.getLongVolatile(headIndex);
            if (end - headCache > capacity)
            {
                return -1;
            }
        }
        final int at;
        if (padding > 0)
        {
            buffer.putInt(index, PADDING);
            at = 0;
        }
        else
        {
            at = index;
        }
        buffer.putInt(at, recordLength);
        claimedEnd = end;
        claimedAligned = aligned;
        return at;
    }

    /** Writer: the record claimed last is written: the reader may take it. */
    void commit()
    {
        tail = claimedEnd;
        buffer.putLongOrdered(tailIndex, tail);
    }

    /**
     * Writer: the record claimed last is written, shorter than claimed: its length becomes {@code recordLength} and the
     * room after it stays the writer's.
     *
     * @param at           the record's index, as {@link #claim} returned it.
     * @param recordLength its length, its header included: at least 4 and at most what was claimed.
     */
    void commit(final int at, final int recordLength)
    {
        buffer.putInt(at, recordLength);
        claimedEnd = claimedEnd - claimedAligned + BitUtil.align(recordLength, ALIGNMENT);
        commit();
    }

    /**
     * Reader: the index of the oldest record, past any padding at the ring's end, its length checked; -1 if there is
     * none. It stays the oldest until {@link #take}n.
     *
     * @throws IllegalStateException if the tail or the record's length does not fit the ring.
     */
    int next()
    {
        if (head == tailCache)
        {
            final long published = buffer.getLongVolatile(tailIndex);
            if (published - head < 0 || published - head > capacity)
            {
                throw new IllegalStateException("the ring's tail " + published + " is not within a ring of its head " +
                    head);
            }
            tailCache = published;
            if (head == tailCache)
            {
                return -1;
            }
        }
        int index = (int)(head & mask);
        int length = buffer.getInt(index);
        if (length == PADDING)
        {
            final int toEnd = capacity - index;
            if (tailCache - head < toEnd + Integer.BYTES)
            {
                throw new IllegalStateException("padding at " + index + " with no record after it");
            }
            head += toEnd; // the record that did not fit here starts the ring
            index = 0;
            length = buffer.getInt(0);
        }
        // index is a multiple of the alignment, as every position is: a length within the room aligns within it
        if (length < Integer.BYTES || length > capacity - index || BitUtil.align(length, ALIGNMENT) > tailCache - head)
        {
            throw new IllegalStateException("a record of " + length + " bytes at " + index + " does not fit the ring");
        }
        nextIndex = index;
        nextLength = length;
        return index;
    }

    /** Reader: the length (its header included) of the record {@link #next} returned last. */
    int length()
    {
        return nextLength;
    }

    /**
     * Reader: takes the record {@link #next} returned; the writer gets its room once the head is published.
     *
     * @param at the record's index, as {@link #next} returned it.
     * @return the head before, for {@link #putBack}.
     * @throws IllegalStateException if it is not the record {@link #next} returned last, or that one was taken already
     *         (a read from within the handler of a read of the same ring): the head would not move past {@code at}.
     */
    long take(final int at)
    {
        if (at != nextIndex)
        {
            throw notLookedAt(at, nextIndex);
        }
        nextIndex = -1;
        final long before = head;
        head += BitUtil.align(nextLength, ALIGNMENT);
        return before;
    }

    /** Built out of line: {@link #take} runs for every record and stays small enough to inline. */
    private static IllegalStateException notLookedAt(final int at, final int nextIndex)
    {
        return new IllegalStateException("the record at " + at + " is not the one the ring's reader looked at last (" +
            nextIndex + "): a read within a read?");
    }

    /** Reader: the record taken last was not, after all: the head goes back to where {@link #take} found it. */
    void putBack(final long before)
    {
        head = before;
    }

    /** Reader: gives the writer the room of the records taken, if any (the head's line stays put otherwise). */
    void publishHead()
    {
        if (head != publishedHead)
        {
            publishedHead = head;
            buffer.putLongOrdered(headIndex, head);
        }
    }

    /** @return true if no record is waiting by the published positions; any thread (a racy read). */
    boolean isEmpty()
    {
        return buffer.getLongVolatile(headIndex) == buffer.getLongVolatile(tailIndex);
    }
}
