package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.rds4j.RdsMessageHandler;

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
 * out. An agrona one-to-one ring buffer (one writer: the thread running the duty cycle; one reader at a time:
 * the socket's receive lock) on {@link SharedMemory}.
 * <p>
 * A record is the sender (its address as 16 bytes, IPv4 in its IPv6-mapped form, then its port as an int)
 * followed by the payload. The reader turns senders back into cached {@link InetSocketAddress} objects, so
 * reading allocates nothing once each sender has been seen.
 */
final class ReceiveRing
{
    private static final int MESSAGE = 1;
    private static final int ADDRESS_LENGTH = 16;
    private static final int PORT_OFFSET = ADDRESS_LENGTH;
    /** Where the payload starts in a record. */
    static final int SENDER_LENGTH = ADDRESS_LENGTH + Integer.BYTES;

    private final ByteBuffer memory;
    private final OneToOneRingBuffer ring;
    /** A read-only view of the mapped memory: a polled payload's position and limit are set on it. */
    private final ByteBuffer view;

    // The writer (the thread running the duty cycle).
    /** Per address object (a connection's, so few and stable): its 16 bytes as the two longs a record holds. */
    private final IdentityHashMap<InetAddress, long[]> senderWords = new IdentityHashMap<>();
    private InetAddress recentAddress;
    private long[] recentWords;

    // The reader (under the socket's receive lock).
    private final Long2ObjectHashMap<Sender> senders = new Long2ObjectHashMap<>();
    /** The sender of the record read last. */
    private Sender recentSender;
    private final MessageHandler copier = this::copyOut;
    private final MessageHandler poller = this::handOver;
    private ByteBuffer copyTo;
    private int lastLength;
    private InetSocketAddress lastSender;
    private RdsMessageHandler pollHandler;
    private IntConsumer pollTaken;

    /**
     * @param directory where the ring's file is made (and at once unlinked).
     * @param capacity  the ring's size, a power of two.
     */
    ReceiveRing(final Path directory, final int capacity)
    {
        memory = SharedMemory.map(directory, "rx", capacity + RingBufferDescriptor.TRAILER_LENGTH);
        ring = new OneToOneRingBuffer(new UnsafeBuffer(memory));
        view = memory.duplicate().asReadOnlyBuffer();
    }

    /** @return the largest payload a record can carry; larger messages wait outside the ring. */
    int maxPayload()
    {
        return ring.maxMsgLength() - SENDER_LENGTH;
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
        final int index = ring.tryClaim(MESSAGE, SENDER_LENGTH + length);
        if (index < 0)
        {
            return false;
        }
        final MutableDirectBuffer buffer = ring.buffer();
        final long[] address = wordsOf(sender);
        buffer.putLong(index, address[0]);
        buffer.putLong(index + 8, address[1]);
        buffer.putInt(index + PORT_OFFSET, sender.getPort());
        buffer.putBytes(index + SENDER_LENGTH, src, offset, length);
        ring.commit(index);
        return true;
    }

    /** @return true if no record is waiting; any thread (a racy read). */
    boolean isEmpty()
    {
        return ring.size() == 0;
    }

    /**
     * Reader: copies the oldest record's payload into {@code dst}, truncated to its room.
     *
     * @return the sender, or null if the ring holds no record (or only one still being written).
     */
    InetSocketAddress takeInto(final ByteBuffer dst)
    {
        copyTo = dst;
        lastSender = null;
        try
        {
            // a read ends at the ring's end: one that found only the padding there reads again from the start
            if (ring.read(copier, 1) == 0 && !isEmpty())
            {
                ring.read(copier, 1);
            }
            return lastSender;
        }
        finally
        {
            copyTo = null;
        }
    }

    /** @return the payload length of the record {@link #takeInto} last took. */
    int lastLength()
    {
        return lastLength;
    }

    /**
     * Reader: hands up to {@code limit} records to the handler, each payload in place.
     *
     * @param taken told each payload's length once the handler has returned (or thrown).
     * @return how many were handed over.
     */
    int poll(final RdsMessageHandler handler, final int limit, final IntConsumer taken)
    {
        pollHandler = handler;
        pollTaken = taken;
        try
        {
            // a read ends at the ring's end: what is left goes on from the start
            final int read = ring.read(poller, limit);
            return read < limit && !isEmpty() ? read + ring.read(poller, limit - read) : read;
        }
        finally
        {
            pollHandler = null;
            pollTaken = null;
        }
    }

    /** Releases the memory. The caller makes sure no thread reads or writes the ring any more. */
    void free()
    {
        SharedMemory.free(memory);
    }

    private void copyOut(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        lastLength = length - SENDER_LENGTH;
        buffer.getBytes(index + SENDER_LENGTH, copyTo, Math.min(lastLength, copyTo.remaining()));
        lastSender = sender(buffer, index);
    }

    private void handOver(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final int payloadLength = length - SENDER_LENGTH;
        final int start = index + SENDER_LENGTH;
        view.limit(start + payloadLength).position(start);
        try
        {
            pollHandler.onMessage(sender(buffer, index), view);
        }
        finally
        {
            view.clear();
            pollTaken.accept(payloadLength);
        }
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

    /** Reader: the cached address of the sender in the record at {@code index}. */
    private InetSocketAddress sender(final DirectBuffer buffer, final int index)
    {
        final long high = buffer.getLong(index);
        final long low = buffer.getLong(index + 8);
        final int port = buffer.getInt(index + PORT_OFFSET);
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
