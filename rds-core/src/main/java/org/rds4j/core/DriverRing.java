package org.rds4j.core;

import org.agrona.BufferUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ControlledMessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Frames one way between a client and its driver, in shared memory: the driver makes two files per client in its
 * directory, one for the client's frames to the driver and one for the driver's to the client; the client maps both
 * and deletes their names. One writer at a time (the client under its write lock; the driver under the client's
 * session's lock) and one reader at a time (the driver's conductor or its stack's agent, under that lock; the client's
 * thread reading for the stack): an agrona one-to-one ring buffer whose records are whole {@link DriverProtocol}
 * frames (the client's) or batches of whole frames (the driver's), each under its number in the writer's order (the
 * record's type: 1, 2, ... wrapping to 1 after {@link Integer#MAX_VALUE}). One that does not fit now (longer than
 * {@link #maxFrame()}, or the ring full) goes over the connection instead, after a {@code SEQ} frame with its number,
 * and the reader merges the two by number; so nothing waits for room in the ring, and a full ring slows the writer to
 * the connection's pace.
 * <p>
 * The doorbell: after the ring, a word the reader sets when it will not look at the ring without being told
 * ({@link #sleeping}) and a writer that finds set after a write clears, and then rings with a {@code DOORBELL} frame
 * on the connection, which wakes the reader's selector. A reader that is awake reads the ring without being told, so
 * a busy stream makes no system call per frame.
 * <p>
 * The driver trusts nothing in the memory: it checks every frame of the client's ring as it checks those of the
 * connection, and a ring whose records do not parse cuts the client off. Writing, the positions it reads from the
 * memory (which the client may have overwritten) only choose where in the ring it writes, as every index is masked to
 * the ring: a client that writes over the ring it reads loses its own frames, nothing else.
 */
final class DriverRing
{
    /** The records' room in the ring of a client's frames; frames up to an eighth of it go into the ring. */
    static final int CAPACITY = 1 << 20;
    /** The records' room in the ring of the driver's batches to a client. */
    static final int DOWN_CAPACITY = 1 << 22;

    private final ByteBuffer memory;
    /** Where the doorbell word is: after the ring and its trailer, on a cache line of its own. */
    private final int sleepingOffset;
    private final UnsafeBuffer words;
    private final OneToOneRingBuffer ring;
    /** The reader's look at the next record ({@link #nextNumber}). */
    private final ControlledMessageHandler peek = this::peek;
    private int peeked;

    private DriverRing(final ByteBuffer memory, final int capacity)
    {
        this.memory = memory;
        this.words = new UnsafeBuffer(memory);
        this.sleepingOffset = capacity + RingBufferDescriptor.TRAILER_LENGTH;
        this.ring = new OneToOneRingBuffer(new UnsafeBuffer(memory, 0, sleepingOffset));
    }

    /** @return the size of the file of a ring of {@code capacity}: the ring, its trailer and the doorbell's line. */
    static int fileBytes(final int capacity)
    {
        return capacity + RingBufferDescriptor.TRAILER_LENGTH + 128;
    }

    /** Driver: makes a file for a ring of {@code capacity}, which the client maps ({@link #attach}) and deletes. */
    static DriverRing create(final Path file, final int capacity, final boolean groupAccess) throws IOException
    {
        final ByteBuffer memory = SharedMemory.mapNew(file, fileBytes(capacity));
        DriverFiles.restrict(file, groupAccess);
        return new DriverRing(memory, capacity);
    }

    /** Client: maps a file the driver made for a ring of {@code capacity}. */
    static DriverRing attach(final Path file, final int capacity) throws IOException
    {
        return new DriverRing(SharedMemory.mapExisting(file, fileBytes(capacity)), capacity);
    }

    /** @return the most bytes a record takes (a frame, or a batch); longer ones go over the connection. */
    int maxFrame()
    {
        return ring.maxMsgLength();
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
        ring.buffer().putBytes(index, head, 0, headLength);
        if (payload != null)
        {
            ring.buffer().putBytes(index + headLength, payload, payload.position(), payload.remaining());
        }
        ring.commit(index);
        return true;
    }

    /**
     * Writer: claims room for {@code length} bytes as record {@code number}, to be written into
     * {@link #buffer()} from the index returned and then {@link #commit}ted.
     *
     * @return the index, or -1 if {@code length} is more than {@link #maxFrame()} or the ring has no room for it now.
     */
    int claim(final int number, final int length)
    {
        return length > ring.maxMsgLength() ? -1 : ring.tryClaim(number, length);
    }

    /** Writer: the memory a claimed record is written into. */
    UnsafeBuffer buffer()
    {
        return (UnsafeBuffer)ring.buffer();
    }

    /** Writer: the record claimed at {@code index} is written: the reader may take it. */
    void commit(final int index)
    {
        ring.commit(index);
    }

    /**
     * Writer, after its records: whether the reader sleeps, in which case the caller rings. Clears the word, so that
     * one frame rings per sleep.
     */
    boolean takeDoorbell()
    {
        // the record's commit is a release store: a full fence keeps this load after it, or a reader that looked at
        // the ring just before it slept would be missed (the reader's side is a volatile store then a load)
        VarHandle.fullFence();
        return words.getIntVolatile(sleepingOffset) != 0 && words.compareAndSetInt(sleepingOffset, 1, 0);
    }

    /**
     * Reader: it is about to sleep and will not look at the ring untold (true; the ring is then read, or looked at,
     * once more), or it looks again (false). On the driver's side, the conductor sleeps or the agent stops, and the
     * other does not look.
     */
    void sleeping(final boolean asleep)
    {
        words.putIntVolatile(sleepingOffset, asleep ? 1 : 0);
    }

    /** Reader: hands records to the handler, as {@link OneToOneRingBuffer#controlledRead}; throws on a bad ring. */
    int read(final ControlledMessageHandler handler, final int limit)
    {
        return ring.controlledRead(handler, limit);
    }

    /**
     * Reader: the number of the record a read would take next, or 0 if the ring holds none. Padding at the ring's end
     * is passed over, as a read passes it.
     */
    int nextNumber()
    {
        peeked = 0;
        if (ring.controlledRead(peek, 1) == 0 && peeked == 0 && !isEmpty())
        {
            ring.controlledRead(peek, 1); // that read passed the padding at the end: the record is at the start
        }
        return peeked;
    }

    private ControlledMessageHandler.Action peek(
        final int number, final MutableDirectBuffer buffer, final int index, final int length)
    {
        peeked = number;
        return ControlledMessageHandler.Action.ABORT;
    }

    /** Reader: whether the ring holds no record (the writer's committed records are seen). */
    boolean isEmpty()
    {
        return ring.size() == 0;
    }

    /** @return a view of the memory, for a record's payload to be handed on as a buffer (indices are the handler's). */
    ByteBuffer view()
    {
        return memory.duplicate();
    }

    /** Unmaps the memory; the caller makes sure no thread uses it any more. */
    void free()
    {
        BufferUtil.free(memory);
    }
}
