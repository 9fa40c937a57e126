package org.rds4j.core;

import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.RdsMessageHandler;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.function.IntConsumer;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * A socket's receive ring: the shared memory the stack writes each delivered message into, once, and the
 * application reads it from: {@code poll} hands the message to its handler in place, {@code receive} copies it
 * out. One writer (the thread running the duty cycle) and one reader at a time (the socket's receive lock), on
 * {@link SharedMemory}, with the positions and framing of a {@link RecordRing}: no fence and no atomic instruction
 * per record on either side.
 * <p>
 * A record: its length (header included) and the sender's port, two ints; the sender's address, 16 bytes (IPv4 in
 * its IPv6-mapped form); the payload. A <em>run</em> record holds messages of one sender as the frames they came in
 * (each a 48-byte RDS header, then its payload, back to back): its port word has {@link #RUN} set, and each frame's
 * header gives its payload's length. The stack opens a run at a frame of a transport's read, appends the socket's
 * next frames from that read as they are parsed (copying those that lie back to back in one piece), and commits the
 * record once at the read's end; the reader takes its frames one by one with a cursor, and the record, with its room,
 * once the last is taken (docs/receive-runs.md). The reader turns senders back into cached {@link InetSocketAddress} objects,
 * so reading allocates nothing once each sender has been seen.
 */
final class ReceiveRing
{
    private static final int PORT_OFFSET = 4;
    private static final int ADDRESS_OFFSET = 8;
    private static final int ADDRESS_LENGTH = 16;
    /** Where the payload starts in a record, and a run's first frame. */
    private static final int PAYLOAD_OFFSET = ADDRESS_OFFSET + ADDRESS_LENGTH;
    /** Set in the port word of a run record, above the port's 16 bits. */
    private static final int RUN = 1 << 16;
    private static final int PORT_MASK = 0xFFFF;

    private final int capacity;
    private final ByteBuffer memory;
    private final UnsafeBuffer buffer;
    private final RecordRing records;
    /** A read-only view of the mapped memory: a polled payload's position and limit are set on it. */
    private final ByteBuffer view;

    // The writer (the thread running the duty cycle).
    /** The open run's record, and the bytes of frames appended to it. */
    private int runAt;
    private int runLength;
    /** The run's last frames, not yet copied in: back to back in {@code pendingSrc} from {@code pendingOffset}. */
    private DirectBuffer pendingSrc;
    private int pendingOffset;
    private int pendingLength;
    /** Per address object (a connection's, so few and stable): its 16 bytes as the two longs a record holds. */
    private final IdentityHashMap<InetAddress, long[]> senderWords = new IdentityHashMap<>();
    private InetAddress recentAddress;
    private long[] recentWords;

    // The reader (under the socket's receive lock).
    private final Long2ObjectHashMap<Sender> senders = new Long2ObjectHashMap<>();
    /** The sender of the record read last. */
    private Sender recentSender;
    private int lastLength;
    /** The record being read: a single message's, or the run's whose frames are being taken. */
    private int recordAt;
    /** In a run being taken, the index of its next frame; -1 when no run is begun. */
    private int frame = -1;
    /** Where the run being taken ends. */
    private int runEnd;
    // The message {@link #next} found: its payload's index and length, and its sender's port.
    private int messageAt;
    private int messageLength;
    private int messagePort;

    /**
     * @param directory where the ring's file is made (and at once unlinked).
     * @param capacity  the ring's size, a power of two of at least 1 KiB.
     */
    ReceiveRing(final Path directory, final int capacity)
    {
        if (!BitUtil.isPowerOfTwo(capacity) || capacity < 1024)
        {
            throw new IllegalArgumentException("a receive ring is a power of two of at least 1 KiB: " + capacity);
        }
        this.capacity = capacity;
        memory = SharedMemory.map(directory, "rx", capacity + RecordRing.POSITIONS_LENGTH);
        buffer = new UnsafeBuffer(memory);
        records = new RecordRing(buffer, capacity);
        view = memory.duplicate().asReadOnlyBuffer();
    }

    /**
     * @return the largest payload, or run of frames, a record can carry (a record of an eighth of the ring); larger
     *         payloads wait outside.
     */
    int maxPayload()
    {
        return capacity / 8 - PAYLOAD_OFFSET;
    }

    /**
     * Writer: one record, if it fits now.
     *
     * @return false if the ring has no room for it (or it is larger than {@link #maxPayload()}).
     */
    boolean write(final InetSocketAddress sender, final DirectBuffer src, final int offset, final int length)
    {
        if (length > maxPayload())
        {
            return false;
        }
        final int at = records.claim(PAYLOAD_OFFSET + length);
        if (at < 0)
        {
            return false;
        }
        writeSender(at, sender.getPort(), sender);
        buffer.putBytes(at + PAYLOAD_OFFSET, src, offset, length);
        records.commit();
        return true;
    }

    /**
     * Writer: opens a run record for frames of {@code sender} with room for {@link #maxPayload()} bytes of them, the
     * first frame its first. Until {@link #closeRun} the run holds the ring's one claim: nothing else is written. The
     * frames appended stay where they are, unchanged, until the run is closed: those lying back to back in one buffer
     * are copied in one piece when the next does not follow them, or at the close.
     *
     * @param src    holds the frame: a valid RDS header, then its payload.
     * @param length the frame's bytes, its header included.
     * @return false if the ring has no room for a run now, or the frame is larger than a run.
     */
    boolean openRun(final InetSocketAddress sender, final DirectBuffer src, final int offset, final int length)
    {
        final int at = length > maxPayload() ? -1 : records.claim(PAYLOAD_OFFSET + maxPayload());
        if (at < 0)
        {
            return false;
        }
        writeSender(at, RUN | sender.getPort(), sender);
        runAt = at;
        runLength = length;
        pendingSrc = src;
        pendingOffset = offset;
        pendingLength = length;
        return true;
    }

    /**
     * Writer: appends a frame of the open run's sender to it, if it has room.
     *
     * @return false if the run is full: close it, and write the frame otherwise.
     */
    boolean appendToRun(final DirectBuffer src, final int offset, final int length)
    {
        if (length > maxPayload() - runLength)
        {
            return false;
        }
        if (src != pendingSrc || offset != pendingOffset + pendingLength)
        {
            copyPending();
            pendingSrc = src;
            pendingOffset = offset;
        }
        pendingLength += length;
        runLength += length;
        return true;
    }

    /** @return the bytes of the open run's frames so far, their headers included (the writer's view). */
    int runLength()
    {
        return runLength;
    }

    /** Writer: the open run is complete: the reader may take its frames, and the room it did not use is free. */
    void closeRun()
    {
        copyPending();
        records.commit(runAt, PAYLOAD_OFFSET + runLength);
    }

    /** Writer: copies the frames appended since the last copy, which lie back to back, into the open run. */
    private void copyPending()
    {
        if (pendingLength > 0)
        {
            buffer.putBytes(runAt + PAYLOAD_OFFSET + runLength - pendingLength, pendingSrc, pendingOffset, pendingLength);
            pendingLength = 0;
        }
        pendingSrc = null;
    }

    /** Writer: a record's port word and its sender's address. */
    private void writeSender(final int at, final int portWord, final InetSocketAddress sender)
    {
        final long[] address = wordsOf(sender);
        buffer.putInt(at + PORT_OFFSET, portWord);
        buffer.putLong(at + ADDRESS_OFFSET, address[0]);
        buffer.putLong(at + ADDRESS_OFFSET + 8, address[1]);
    }

    /** @return true if no record is waiting; any thread (a racy read). */
    boolean isEmpty()
    {
        return records.isEmpty();
    }

    /**
     * Reader: copies the oldest message's payload into {@code dst}, truncated to its room.
     *
     * @return the sender, or null if the ring holds no message.
     */
    InetSocketAddress takeInto(final ByteBuffer dst)
    {
        if (!next())
        {
            return null;
        }
        final int at = messageAt;
        final int length = messageLength;
        buffer.getBytes(at, dst, Math.min(length, dst.remaining()));
        final InetSocketAddress sender = sender(recordAt, messagePort);
        lastLength = length;
        consume(at, length);
        return sender;
    }

    /** @return the payload length of the message {@link #takeInto} last took. */
    int lastLength()
    {
        return lastLength;
    }

    /**
     * Reader: hands up to {@code limit} messages to the handler, each payload in place.
     *
     * @param taken told each payload's length once the handler has returned (or thrown).
     * @return how many were handed over.
     * @throws IllegalStateException if the handler read this ring (a read within a read): the message it got again is
     *         taken once, and no other is skipped.
     */
    int poll(final RdsMessageHandler handler, final int limit, final IntConsumer taken)
    {
        int read = 0;
        while (read < limit && next())
        {
            read++;
            final int at = messageAt;
            final int length = messageLength;
            view.limit(at + length).position(at);
            try
            {
                handler.onMessage(sender(recordAt, messagePort), view);
            }
            finally
            {
                view.clear();
                consume(at, length); // after the handler: until then its payload is read in place
                taken.accept(length);
            }
        }
        return read;
    }

    /**
     * Reader: finds the oldest message (a single record's, or the next frame of a run) and sets {@link #messageAt},
     * {@link #messageLength} and {@link #messagePort}; it stays the oldest until {@link #consume}d.
     *
     * @return false if the ring holds none.
     * @throws IllegalStateException if a record or a frame does not fit where it lies.
     */
    private boolean next()
    {
        if (frame < 0)
        {
            final int at = records.next();
            if (at < 0)
            {
                return false;
            }
            recordAt = at;
            final int portWord = buffer.getInt(at + PORT_OFFSET);
            messagePort = portWord & PORT_MASK;
            if ((portWord & RUN) == 0)
            {
                messageAt = at + PAYLOAD_OFFSET;
                messageLength = records.length() - PAYLOAD_OFFSET;
                return true;
            }
            frame = at + PAYLOAD_OFFSET;
            runEnd = at + records.length();
        }
        final int room = runEnd - frame - RdsHeader.LENGTH;
        if (room < 0)
        {
            throw frameOutsideRun(frame, runEnd);
        }
        final long length = RdsHeader.length(buffer, frame);
        if (length > room)
        {
            throw frameOutsideRun(frame, runEnd);
        }
        messageAt = frame + RdsHeader.LENGTH;
        messageLength = (int)length;
        return true;
    }

    /**
     * Reader: the message {@link #next} found at {@code at} is done with: the writer gets the room of its record once
     * the record holds no other message to take.
     */
    private void consume(final int at, final int length)
    {
        if (frame < 0)
        {
            records.take(at - PAYLOAD_OFFSET); // throws if taken already (a read within a read)
        }
        else
        {
            if (at != frame + RdsHeader.LENGTH)
            {
                throw readWithinRead(at, frame);
            }
            frame = at + length;
            if (frame < runEnd)
            {
                return;
            }
            frame = -1;
            records.take(recordAt);
        }
        records.publishHead();
    }

    private static IllegalStateException frameOutsideRun(final int frame, final int runEnd)
    {
        return new IllegalStateException("the frame at " + frame + " does not fit its run, which ends at " + runEnd);
    }

    private static IllegalStateException readWithinRead(final int at, final int frame)
    {
        return new IllegalStateException("the message at " + at + " is not the one the ring's reader looked at last (" +
            (frame + RdsHeader.LENGTH) + "): a read within a read?");
    }

    /** Releases the memory. The caller makes sure no thread reads or writes the ring any more. */
    void free()
    {
        SharedMemory.free(memory);
    }

    /** Writer: the sender's address as the two longs of its 16 bytes (IPv4 in its IPv6-mapped form). */
    private long[] wordsOf(final InetSocketAddress sender)
    {
        final InetAddress address = sender.getAddress();
        if (address == recentAddress)
        {
            return recentWords; // a read's frames mostly come from one connection
        }
        long[] words = senderWords.get(address);
        if (words == null)
        {
            final UnsafeBuffer bytes = new UnsafeBuffer(sixteenBytes(address));
            words = new long[] {bytes.getLong(0), bytes.getLong(8)};
            senderWords.put(address, words);
        }
        recentAddress = address;
        recentWords = words;
        return words;
    }

    /** Reader: the cached address of the sender of the record at {@code at}, whose port word gave {@code port}. */
    private InetSocketAddress sender(final int at, final int port)
    {
        final int index = at + ADDRESS_OFFSET;
        final long high = buffer.getLong(index);
        final long low = buffer.getLong(index + 8);
        final Sender last = recentSender;
        if (last != null && last.is(high, low, port))
        {
            return last.address; // a stream's records mostly follow one of the same sender: no map lookup
        }
        final long key = isMappedIpv4(buffer, index) ?
            (1L << 48) | ((buffer.getInt(index + 12, BIG_ENDIAN) & 0xFFFF_FFFFL) << 16) | port :
            (high * 31 + low) * 31 + port;
        Sender known = senders.get(key);
        if (known == null || !known.is(high, low, port))
        {
            final byte[] bytes = new byte[ADDRESS_LENGTH];
            buffer.getBytes(index, bytes);
            try
            {
                known = new Sender(high, low, port, new InetSocketAddress(InetAddress.getByAddress(bytes), port));
            }
            catch (final UnknownHostException ex)
            {
                throw new IllegalStateException("16 bytes are always an address", ex);
            }
            senders.put(key, known);
        }
        recentSender = known;
        return known.address;
    }

    private static boolean isMappedIpv4(final DirectBuffer buffer, final int index)
    {
        return buffer.getLong(index) == 0 && buffer.getInt(index + 8, BIG_ENDIAN) == 0x0000_FFFF;
    }

    private static byte[] sixteenBytes(final InetAddress address)
    {
        final byte[] raw = address.getAddress();
        if (raw.length == ADDRESS_LENGTH)
        {
            return raw;
        }
        final byte[] mapped = new byte[ADDRESS_LENGTH];
        mapped[10] = (byte)0xFF;
        mapped[11] = (byte)0xFF;
        System.arraycopy(raw, 0, mapped, 12, raw.length);
        return mapped;
    }

    /** A sender seen by the reader: its address's 16 bytes as written (two longs) and its port, to check a key against. */
    private static final class Sender
    {
        private final long high;
        private final long low;
        private final int port;
        private final InetSocketAddress address;

        Sender(final long high, final long low, final int port, final InetSocketAddress address)
        {
            this.high = high;
            this.low = low;
            this.port = port;
            this.address = address;
        }

        boolean is(final long high, final long low, final int port)
        {
            return this.high == high && this.low == low && this.port == port;
        }
    }
}
