package org.rds4j.core;

import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Frames one way between a client and its driver, in shared memory: the driver makes two files per client in its
 * directory, one for the client's frames to the driver and one for the driver's to the client; the client maps both
 * and deletes their names. One writer at a time (the client under its write lock; the driver under the client's
 * session's lock) and one reader at a time (the driver's conductor or its stack's agent, under that lock; the client's
 * thread reading for the stack). Records are whole {@link DriverProtocol} frames (the client's) or batches of whole
 * frames (the driver's), each under its number in the writer's order: 1, 2, ... wrapping to 1 after
 * {@link Integer#MAX_VALUE}. One longer than {@link #maxFrame()} goes over the connection instead, after a
 * {@code SEQ} frame with its number, and the reader merges the two by number. When the ring is full, a client waits
 * for room (the driver reads it; over the connection each frame would cost both sides a system call), and the driver
 * sends its batch over the connection (it waits for no client).
 * <p>
 * Layout: a {@link RecordRing} (the records, then the tail and the head), then the doorbell word and the connection
 * mark, each on a cache line of its own. A record: its length (header included) and its number, two ints, then the
 * frame. A frame costs neither side a fence (but the doorbell's) or an atomic instruction, and nothing is cleared
 * after it is read (agrona's one-to-one ring, used here before, cleared every record and read both positions at every
 * call).
 * <p>
 * The doorbell: a word the reader sets when it will not look at the ring without being told ({@link #sleeping}) and a
 * writer that finds set after a write clears, and then rings with a {@code DOORBELL} frame on the connection, which
 * wakes the reader's selector. A reader that is awake reads the ring without being told, so a busy stream makes no
 * system call per frame.
 * <p>
 * The connection mark: the number of the last record the writer sent over the connection instead. The driver's
 * connection brings a client only such records and doorbells, so the client reads it while the mark names a record it
 * has not taken, or when its selector saw input: an idle cycle of a client waiting for a reply makes no system call.
 * The driver reads its clients' connections when its selector says, and does not use the mark of their rings.
 * <p>
 * Neither side trusts what the other may write ({@link RecordRing}): a ring whose tail or records do not fit makes the
 * reader throw, and the driver cuts off the client whose ring it is (and checks every frame in it as it checks those
 * of the connection); a client that writes over the positions of the ring the driver writes to it chooses only where
 * in that ring the driver writes: it loses its own frames, nothing else.
 */
final class DriverRing
{
    /** The records' room in the ring of a client's frames; frames up to an eighth of it go into the ring. */
    static final int CAPACITY = 1 << 20;
    /** The records' room in the ring of the driver's batches to a client. */
    static final int DOWN_CAPACITY = 1 << 22;
    /** A record's length and number, before its frame. */
    private static final int RECORD_HEADER = 8;
    private static final int NUMBER_OFFSET = 4;

    private final ByteBuffer memory;
    private final UnsafeBuffer buffer;
    private final RecordRing records;
    private final int capacity;
    /** The doorbell word, after the ring's positions. */
    private final int sleepingIndex;
    /** The connection mark, a cache line after the doorbell: written by the writer only. */
    private final int connectionMarkIndex;

    private DriverRing(final ByteBuffer memory, final int capacity)
    {
        this.memory = memory;
        this.buffer = new UnsafeBuffer(memory);
        this.records = new RecordRing(buffer, capacity);
        this.capacity = capacity;
        this.sleepingIndex = capacity + RecordRing.POSITIONS_LENGTH;
        this.connectionMarkIndex = sleepingIndex + 64;
    }

    /**
     * @return the size of the file of a ring of {@code capacity}: the records, the positions, the doorbell and the
     *         connection mark.
     */
    static int fileBytes(final int capacity)
    {
        return capacity + RecordRing.POSITIONS_LENGTH + 128;
    }

    /** Driver: makes a file for a ring of {@code capacity}, which the client maps ({@link #attach}) and deletes. */
    static DriverRing create(final Path file, final int capacity, final boolean groupAccess) throws IOException
    {
        checkCapacity(capacity);
        final ByteBuffer memory = SharedMemory.mapNew(file, fileBytes(capacity));
        DriverFiles.restrict(file, groupAccess);
        return new DriverRing(memory, capacity);
    }

    /** Client: maps a file the driver made for a ring of {@code capacity}. */
    static DriverRing attach(final Path file, final int capacity) throws IOException
    {
        checkCapacity(capacity);
        return new DriverRing(SharedMemory.mapExisting(file, fileBytes(capacity)), capacity);
    }

    private static void checkCapacity(final int capacity)
    {
        if (!BitUtil.isPowerOfTwo(capacity) || capacity < 1024)
        {
            throw new IllegalArgumentException("a driver's ring is a power of two of at least 1 KiB: " + capacity);
        }
    }

    /** @return the most bytes a record's frame takes (a frame, or a batch); longer ones go over the connection. */
    int maxFrame()
    {
        return capacity / 8 - RECORD_HEADER;
    }

    /**
     * Writer: writes a frame as record {@code number}, if it fits now.
     *
     * @param head    the frame's first {@code headLength} bytes.
     * @param payload the rest (its bytes are not consumed), or null.
     * @return false if the frame is longer than {@link #maxFrame()} or the ring has no room for it now.
     */
    boolean offer(final int number, final UnsafeBuffer head, final int headLength, final ByteBuffer payload)
    {
        final int index = claim(number, headLength + (payload == null ? 0 : payload.remaining()));
        if (index < 0)
        {
            return false;
        }
        buffer.putBytes(index, head, 0, headLength);
        if (payload != null)
        {
            buffer.putBytes(index + headLength, payload, payload.position(), payload.remaining());
        }
        commit();
        return true;
    }

    /**
     * Writer: claims room for a frame of {@code length} bytes as record {@code number}, to be written into
     * {@link #buffer()} from the index returned and then {@link #commit}ted before the next claim.
     *
     * @return the index, or -1 if {@code length} is more than {@link #maxFrame()} or the ring has no room for it now.
     */
    int claim(final int number, final int length)
    {
        if (length > maxFrame())
        {
            return -1;
        }
        final int at = records.claim(RECORD_HEADER + length);
        if (at < 0)
        {
            return -1;
        }
        buffer.putInt(at + NUMBER_OFFSET, number);
        return at + RECORD_HEADER;
    }

    /** Writer: the memory a claimed record is written into. */
    UnsafeBuffer buffer()
    {
        return buffer;
    }

    /** Writer: the record claimed last is written: the reader may take it. */
    void commit()
    {
        records.commit();
    }

    /**
     * Writer, after its records: whether the reader sleeps, in which case the caller rings. Clears the word, so that
     * one frame rings per sleep.
     */
    boolean takeDoorbell()
    {
        // the tail is published with a release store: a full fence keeps this load after it, or a reader that looked
        // at the ring just before it slept would be missed (the reader's side is a volatile store then a load)
        VarHandle.fullFence();
        return buffer.getIntVolatile(sleepingIndex) != 0 && buffer.compareAndSetInt(sleepingIndex, 1, 0);
    }

    /**
     * Writer: record {@code number} goes over the connection instead of into the ring (after its {@code SEQ}), so a
     * reader that is awake reads the connection until it has taken it.
     */
    void markConnection(final int number)
    {
        buffer.putIntOrdered(connectionMarkIndex, number);
    }

    /** Reader: the number of the last record the writer sent over the connection instead, 0 if none yet. */
    int connectionMark()
    {
        return buffer.getIntVolatile(connectionMarkIndex);
    }

    /**
     * Reader: it is about to sleep and will not look at the ring untold (true; the ring is then read, or looked at,
     * once more), or it looks again (false). On the driver's side, the conductor sleeps or the agent stops, and the
     * other does not look.
     */
    void sleeping(final boolean asleep)
    {
        buffer.putIntVolatile(sleepingIndex, asleep ? 1 : 0);
    }

    /**
     * Reader: hands records to the handler in order until it declines one (which stays, to be handed again), the ring
     * holds no more, or {@code limit} were taken. Their room goes back to the writer when this returns (or throws):
     * until then a handler may keep reading the records it took.
     *
     * @return how many the handler took.
     * @throws IllegalStateException if the ring's tail or a record's length does not fit the ring.
     */
    int read(final Handler handler, final int limit)
    {
        int taken = 0;
        try
        {
            int at;
            while (taken < limit && (at = next()) >= 0)
            {
                final int length = records.length();
                final long before = records.take(at); // taken even if the handler throws: not handed over twice
                if (!handler.onRecord(buffer.getInt(at + NUMBER_OFFSET), buffer, at + RECORD_HEADER,
                    length - RECORD_HEADER))
                {
                    records.putBack(before);
                    break;
                }
                taken++;
            }
        }
        finally
        {
            records.publishHead();
        }
        return taken;
    }

    /** Reader: the number of the record a read would take next, or 0 if the ring holds none. */
    int nextNumber()
    {
        final int at = next();
        return at < 0 ? 0 : buffer.getInt(at + NUMBER_OFFSET);
    }

    /** Reader: whether the ring holds no record (the writer's committed records are seen). */
    boolean isEmpty()
    {
        return records.isEmpty();
    }

    /** Reader: the oldest record's index, -1 if none; one shorter than a record's header does not fit either. */
    private int next()
    {
        final int at = records.next();
        if (at >= 0 && records.length() < RECORD_HEADER)
        {
            throw new IllegalStateException("a record of " + records.length() + " bytes, shorter than its header");
        }
        return at;
    }

    /** @return a view of the memory, for a record's payload to be handed on as a buffer (indices are the handler's). */
    ByteBuffer view()
    {
        return memory.duplicate();
    }

    /** Unmaps the memory; the caller makes sure no thread uses it any more. */
    void free()
    {
        SharedMemory.free(memory);
    }

    /** Takes a ring's records. */
    @FunctionalInterface
    interface Handler
    {
        /**
         * @param number the record's number.
         * @param buffer the ring's memory.
         * @param index  where the record's frame starts.
         * @param length the frame's length.
         * @return true if the record is taken; false leaves it, and ends the read.
         */
        boolean onRecord(int number, UnsafeBuffer buffer, int index, int length);
    }
}
