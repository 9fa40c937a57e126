package org.rds4j.core;

import org.agrona.BufferUtil;
import org.agrona.concurrent.ControlledMessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A client's frames to its driver, in shared memory: the driver makes a file per client in its directory, the
 * client maps it and deletes the name. One writer (the client, under its write lock) and one reader at a time (the
 * driver's conductor, or its stack's agent, under the client's session's lock): an agrona one-to-one ring buffer
 * whose records are whole {@link DriverProtocol} frames, each under its number in the client's order of frames (the
 * record's type: 1, 2, ... wrapping to 1 after {@link Integer#MAX_VALUE}). A frame that does not fit now (longer
 * than {@link #maxFrame()}, or the ring full) goes over the connection instead, after a {@code SEQ} frame with its
 * number, and the driver merges the two by number; so nothing waits for room in the ring, and a full ring slows the
 * client to the connection's pace.
 * <p>
 * The doorbell: after the ring, a word the driver sets when neither its conductor nor its agent will look at the
 * ring without being told ({@link #sleeping}) and a client that finds set after a write clears, and then rings with
 * a {@code DOORBELL} frame on the connection, which wakes the conductor's selector. A driver that is awake reads the
 * ring without being told, so a busy client makes no system call per frame.
 * <p>
 * The driver trusts nothing in the memory: it checks every frame as it checks those of the connection, and a ring
 * whose records do not parse cuts the client off.
 */
final class DriverRing
{
    /** The records' room; frames up to an eighth of it go into the ring. */
    static final int CAPACITY = 1 << 20;
    private static final int SLEEPING_OFFSET = CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;
    /** The file's size: the ring, its trailer and the doorbell word on a cache line of its own. */
    static final int FILE_BYTES = SLEEPING_OFFSET + 128;

    private final ByteBuffer memory;
    private final UnsafeBuffer words;
    private final OneToOneRingBuffer ring;

    private DriverRing(final ByteBuffer memory)
    {
        this.memory = memory;
        this.words = new UnsafeBuffer(memory);
        this.ring = new OneToOneRingBuffer(new UnsafeBuffer(memory, 0, SLEEPING_OFFSET));
    }

    /** Driver: makes the file, which the client maps ({@link #attach}) and deletes. */
    static DriverRing create(final Path file, final boolean groupAccess) throws IOException
    {
        final ByteBuffer memory = SharedMemory.mapNew(file, FILE_BYTES);
        DriverFiles.restrict(file, groupAccess);
        return new DriverRing(memory);
    }

    /** Client: maps the file the driver made. */
    static DriverRing attach(final Path file) throws IOException
    {
        return new DriverRing(SharedMemory.mapExisting(file, FILE_BYTES));
    }

    /** @return the longest frame a record takes; longer ones go over the connection. */
    int maxFrame()
    {
        return ring.maxMsgLength();
    }

    /**
     * Client: writes a frame as record {@code number}, if it fits now.
     *
     * @param head    the frame's first {@code headLength} bytes.
     * @param payload the rest (its bytes are not consumed), or null.
     * @return false if the frame is longer than {@link #maxFrame()} or the ring has no room for it now.
     */
    boolean offer(final int number, final UnsafeBuffer head, final int headLength, final ByteBuffer payload)
    {
        final int length = headLength + (payload == null ? 0 : payload.remaining());
        if (length > ring.maxMsgLength())
        {
            return false;
        }
        final int index = ring.tryClaim(number, length);
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
     * Client, after {@link #offer}: whether the conductor sleeps, in which case the caller rings. Clears the word, so
     * that one frame rings per sleep.
     */
    boolean takeDoorbell()
    {
        // the record's commit is a release store: a full fence keeps this load after it, or a conductor that
        // checked the ring just before it slept would be missed (the conductor's side is a volatile store then a load)
        VarHandle.fullFence();
        return words.getIntVolatile(SLEEPING_OFFSET) != 0 && words.compareAndSetInt(SLEEPING_OFFSET, 1, 0);
    }

    /**
     * Driver: the conductor is about to sleep, or the agent stops, and the other does not look (true; the ring is
     * then read, or looked at, once more), or the conductor has woken (false).
     */
    void sleeping(final boolean asleep)
    {
        words.putIntVolatile(SLEEPING_OFFSET, asleep ? 1 : 0);
    }

    /** Driver: hands records to the handler, as {@link OneToOneRingBuffer#controlledRead}; throws on a bad ring. */
    int read(final ControlledMessageHandler handler, final int limit)
    {
        return ring.controlledRead(handler, limit);
    }

    /** Driver: whether the ring holds no record (the client's committed records are seen). */
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
