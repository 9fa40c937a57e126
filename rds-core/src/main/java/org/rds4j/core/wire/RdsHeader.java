package org.rds4j.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;

/**
 * The Linux {@code struct rds_header}: 48 bytes, big-endian, read and written in place in a buffer.
 * <pre>
 *   0 sequence u64 | 8 ack u64 | 16 len u32 | 20 sport u16 | 22 dport u16 | 24 flags u8 | 25 credit u8
 *  26 padding (4) | 30 checksum u16 | 32 extension headers (16)
 * </pre>
 * Stateless: every method takes the buffer and the offset of the header's first byte.
 */
public final class RdsHeader
{
    /** Bytes in a header. */
    public static final int LENGTH = 48;
    /** Largest payload of a message: 1 MiB. */
    public static final int MAX_PAYLOAD = 1 << 20;

    /** Offset of the u64 sequence number. */
    public static final int SEQUENCE_OFFSET = 0;
    /** Offset of the u64 cumulative ack. */
    public static final int ACK_OFFSET = 8;
    /** Offset of the u32 payload length. */
    public static final int LEN_OFFSET = 16;
    /** Offset of the u16 source port. */
    public static final int SPORT_OFFSET = 20;
    /** Offset of the u16 destination port. */
    public static final int DPORT_OFFSET = 22;
    /** Offset of the u8 flags. */
    public static final int FLAGS_OFFSET = 24;
    /** Offset of the u8 credit count (IB). */
    public static final int CREDIT_OFFSET = 25;
    /** Offset of the 4 bytes of padding. */
    public static final int PADDING_OFFSET = 26;
    /** Offset of the u16 header checksum. */
    public static final int CHECKSUM_OFFSET = 30;
    /** Offset of the extension headers. */
    public static final int EXTENSION_OFFSET = 32;
    /** Bytes of extension headers. */
    public static final int EXTENSION_LENGTH = 16;

    /** The payload is the sender's congestion map. */
    public static final int FLAG_CONG_BITMAP = 0x01;
    /** The sender asks for an ack soon. */
    public static final int FLAG_ACK_REQUIRED = 0x02;
    /** The message was sent before, on an earlier connection. */
    public static final int FLAG_RETRANSMITTED = 0x04;

    /** {@link #validate} result: the header is acceptable. */
    public static final int VALID = 0;
    /** {@link #validate} result: {@code len} exceeds {@link #MAX_PAYLOAD}. */
    public static final int BAD_LENGTH = 1;
    /** {@link #validate} result: a congestion update that is not exactly flags 0x01, ports 0, len 8192. */
    public static final int BAD_CONGESTION_UPDATE = 2;
    /** {@link #validate} result: a non-zero checksum that does not verify. */
    public static final int BAD_CHECKSUM = 3;
    /** {@link #validate} result: an extension header of unknown type, or one that overruns the 16 bytes. */
    public static final int BAD_EXTENSION = 4;
    /**
     * {@link #validate} result: ports no honest peer sends: payload from port 0 (only pongs, which are empty,
     * come from there), anything but the empty pong to port 1, or port 1 to anything but port 0 (port 1
     * sends only handshake probes, to port 0).
     */
    public static final int BAD_PORTS = 5;

    /** Extension type: end of the extension headers. */
    public static final int EXT_NONE = 0;
    /** Extension type: protocol version, be32. */
    public static final int EXT_VERSION = 1;
    /** Extension type: RDMA cookie, be32. */
    public static final int EXT_RDMA = 2;
    /** Extension type: RDMA destination, be32 + be32. */
    public static final int EXT_RDMA_DEST = 3;
    /** Extension type: RDMA bytes, be32 + u8 flags + 3 padding. */
    public static final int EXT_RDMA_BYTES = 4;
    /** Extension type: the number of paths the sender supports (multipath handshake), be16. */
    public static final int EXT_NPATHS = 5;
    /** Extension type: the sender's generation number (changes when the peer restarts), be32. */
    public static final int EXT_GEN_NUM = 6;
    /** Data bytes after the type byte, indexed by type; types beyond the table are unknown. */
    private static final int[] EXTENSION_DATA_BYTES = {0, 4, 4, 8, 8, 2, 4};
    private static final int EXTENSION_ABSENT = -1;
    private static final int EXTENSION_MALFORMED = -2;

    /** The probe port: the handshake probe goes from port 1 to port 0, and its pong from port 0 to port 1. */
    public static final int PROBE_PORT = 1;

    private static final ByteOrder BE = ByteOrder.BIG_ENDIAN;

    private RdsHeader()
    {
    }

    /**
     * Writes a whole header: the given fields, zero padding, zero checksum, no extension headers.
     *
     * @param buffer   where.
     * @param offset   first byte of the header.
     * @param sequence the message's sequence number, 0 for congestion updates and ack-only frames.
     * @param ack      the cumulative ack, 0 for none.
     * @param length   payload bytes.
     * @param sport    source port.
     * @param dport    destination port.
     * @param flags    {@code FLAG_*} bits.
     * @param credit   credits advertised (IB), 0..255.
     */
    public static void write(
        final MutableDirectBuffer buffer,
        final int offset,
        final long sequence,
        final long ack,
        final int length,
        final int sport,
        final int dport,
        final int flags,
        final int credit)
    {
        // six words, not a store per field and a fill of the extension space: each store of a buffer is bounds checked
        buffer.putLong(offset + SEQUENCE_OFFSET, sequence, BE);
        buffer.putLong(offset + ACK_OFFSET, ack, BE);
        buffer.putLong(offset + LEN_OFFSET,
            ((length & 0xFFFF_FFFFL) << 32) | ((sport & 0xFFFFL) << 16) | (dport & 0xFFFFL), BE);
        // flags, credit, then the padding and the checksum, 0
        buffer.putLong(offset + FLAGS_OFFSET, ((flags & 0xFFL) << 56) | ((credit & 0xFFL) << 48), BE);
        buffer.putLong(offset + EXTENSION_OFFSET, 0L);
        buffer.putLong(offset + EXTENSION_OFFSET + 8, 0L);
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the sequence number.
     */
    public static long sequence(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + SEQUENCE_OFFSET, BE);
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the cumulative ack.
     */
    public static long ack(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + ACK_OFFSET, BE);
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the payload length as an unsigned value, so a hostile 0xFFFFFFFF reads as 4 GiB, not -1.
     */
    public static long length(final DirectBuffer buffer, final int offset)
    {
        return lengthOf(lengthAndPorts(buffer, offset));
    }

    /**
     * The length and both ports in one read, for a receive path that needs all three: see {@link #lengthOf},
     * {@link #sportOf} and {@link #dportOf}.
     *
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the 8 bytes from {@link #LEN_OFFSET}, big-endian.
     */
    public static long lengthAndPorts(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + LEN_OFFSET, BE);
    }

    /**
     * @param lengthAndPorts from {@link #lengthAndPorts}.
     * @return the payload length, unsigned as {@link #length} gives it.
     */
    public static long lengthOf(final long lengthAndPorts)
    {
        return lengthAndPorts >>> 32;
    }

    /**
     * @param lengthAndPorts from {@link #lengthAndPorts}.
     * @return the source port, 0..65535.
     */
    public static int sportOf(final long lengthAndPorts)
    {
        return (int)(lengthAndPorts >>> 16) & 0xFFFF;
    }

    /**
     * @param lengthAndPorts from {@link #lengthAndPorts}.
     * @return the destination port, 0..65535.
     */
    public static int dportOf(final long lengthAndPorts)
    {
        return (int)lengthAndPorts & 0xFFFF;
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the source port, 0..65535.
     */
    public static int sport(final DirectBuffer buffer, final int offset)
    {
        return sportOf(lengthAndPorts(buffer, offset));
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the destination port, 0..65535.
     */
    public static int dport(final DirectBuffer buffer, final int offset)
    {
        return dportOf(lengthAndPorts(buffer, offset));
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the flags, 0..255.
     */
    public static int flags(final DirectBuffer buffer, final int offset)
    {
        return buffer.getByte(offset + FLAGS_OFFSET) & 0xFF;
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the credit count, 0..255.
     */
    public static int credit(final DirectBuffer buffer, final int offset)
    {
        return buffer.getByte(offset + CREDIT_OFFSET) & 0xFF;
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the stored checksum, 0 if none.
     */
    public static int checksumField(final DirectBuffer buffer, final int offset)
    {
        return buffer.getShort(offset + CHECKSUM_OFFSET, BE) & 0xFFFF;
    }


    /**
     * Writes the handshake extension headers, NPATHS then GEN_NUM, as the kernel's probe and pong carry them.
     * The rest of the extension space is zeroed.
     *
     * @param buffer     holds the header.
     * @param offset     of its first byte.
     * @param npaths     paths the sender supports.
     * @param generation the sender's generation number.
     */
    public static void writeHandshakeExtensions(
        final MutableDirectBuffer buffer, final int offset, final int npaths, final int generation)
    {
        final int ext = offset + EXTENSION_OFFSET;
        buffer.setMemory(ext, EXTENSION_LENGTH, (byte)0);
        buffer.putByte(ext, (byte)EXT_NPATHS);
        buffer.putShort(ext + 1, (short)npaths, BE);
        buffer.putByte(ext + 3, (byte)EXT_GEN_NUM);
        buffer.putInt(ext + 4, generation, BE);
    }

    /**
     * @param buffer holds a header whose extensions passed {@link #validate}.
     * @param offset of its first byte.
     * @return the NPATHS extension's value, or 0 if the header has none.
     */
    public static int npaths(final DirectBuffer buffer, final int offset)
    {
        final int at = findExtension(buffer, offset, EXT_NPATHS);
        return at < 0 ? 0 : buffer.getShort(at, BE) & 0xFFFF;
    }

    /**
     * @param buffer holds a header whose extensions passed {@link #validate}.
     * @param offset of its first byte.
     * @return the GEN_NUM extension's value, or 0 (no generation known) if the header has none.
     */
    public static int generation(final DirectBuffer buffer, final int offset)
    {
        final int at = findExtension(buffer, offset, EXT_GEN_NUM);
        return at < 0 ? 0 : buffer.getInt(at, BE);
    }

    /**
     * Walks the extension headers, which are back-to-back type bytes each followed by the type's fixed-size data
     * and ended by {@link #EXT_NONE} or the end of the 16 bytes.
     *
     * @return the buffer index of the data of the first extension of {@code type}; {@link #EXTENSION_ABSENT} if
     *         there is none and the rest is well formed (pass type -1 to only check the form);
     *         {@link #EXTENSION_MALFORMED} at an unknown type or an extension that overruns the space.
     */
    private static int findExtension(final DirectBuffer buffer, final int offset, final int type)
    {
        final int ext = offset + EXTENSION_OFFSET;
        int position = 0;
        while (position < EXTENSION_LENGTH)
        {
            final int found = buffer.getByte(ext + position) & 0xFF;
            if (found == EXT_NONE)
            {
                return EXTENSION_ABSENT;
            }
            if (found >= EXTENSION_DATA_BYTES.length || position + 1 + EXTENSION_DATA_BYTES[found] > EXTENSION_LENGTH)
            {
                return EXTENSION_MALFORMED;
            }
            if (found == type)
            {
                return ext + position + 1;
            }
            position += 1 + EXTENSION_DATA_BYTES[found];
        }
        return EXTENSION_ABSENT;
    }

    /**
     * Computes the Internet checksum (RFC 1071) over the 48 header bytes, the checksum field counted as 0.
     *
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return the value to store in the checksum field.
     */
    public static int computeChecksum(final DirectBuffer buffer, final int offset)
    {
        long sum = 0;
        for (int i = 0; i < LENGTH; i += 8)
        {
            final long word = buffer.getLong(offset + i, BE);
            sum += (word >>> 48) + ((word >>> 32) & 0xFFFF) + ((word >>> 16) & 0xFFFF) + (word & 0xFFFF);
        }
        sum -= checksumField(buffer, offset);
        while ((sum >>> 16) != 0)
        {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int)(~sum & 0xFFFF);
    }

    /**
     * Computes the checksum and stores it in the header.
     *
     * @param buffer holds the header.
     * @param offset of its first byte.
     */
    public static void writeChecksum(final MutableDirectBuffer buffer, final int offset)
    {
        buffer.putShort(offset + CHECKSUM_OFFSET, (short)0);
        buffer.putShort(offset + CHECKSUM_OFFSET, (short)computeChecksum(buffer, offset), BE);
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return true if the checksum field is 0 (not checksummed) or verifies as the kernel's
     *         {@code rds_message_verify_checksum} has it: the 24 words, the stored checksum included, sum to all
     *         ones. So where the computed value is 0, a stored 0xFFFF (the other one's-complement zero) verifies.
     */
    public static boolean isChecksumValid(final DirectBuffer buffer, final int offset)
    {
        final int stored = checksumField(buffer, offset);
        if (stored == 0)
        {
            return true; // not checksummed, as every TCP header: nothing to compute
        }
        final int computed = computeChecksum(buffer, offset);
        return stored == computed || (stored == 0xFFFF && computed == 0);
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return true if the header announces a congestion map update (any CONG_BITMAP bit).
     */
    public static boolean isCongestionUpdate(final DirectBuffer buffer, final int offset)
    {
        return (flags(buffer, offset) & FLAG_CONG_BITMAP) != 0;
    }

    /**
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return true for an ack-only frame: sequence 0, ports 0, no payload, not a congestion update.
     */
    public static boolean isAckOnly(final DirectBuffer buffer, final int offset)
    {
        return isAckOnly(sequence(buffer, offset), lengthAndPorts(buffer, offset), flags(buffer, offset));
    }

    /**
     * {@link #isAckOnly(DirectBuffer, int)} for a receive path that has read the fields already.
     *
     * @param sequence       the sequence number.
     * @param lengthAndPorts from {@link #lengthAndPorts}.
     * @param flags          the flags.
     * @return true for an ack-only frame.
     */
    public static boolean isAckOnly(final long sequence, final long lengthAndPorts, final int flags)
    {
        return sequence == 0 && lengthAndPorts == 0 && (flags & FLAG_CONG_BITMAP) == 0;
    }

    /**
     * Checks a received header before its payload is read, so a hostile length is never allocated.
     *
     * @param buffer holds the header.
     * @param offset of its first byte.
     * @return {@link #VALID} or one of {@link #BAD_LENGTH}, {@link #BAD_CONGESTION_UPDATE}, {@link #BAD_CHECKSUM},
     *         {@link #BAD_EXTENSION}, {@link #BAD_PORTS}.
     */
    public static int validate(final DirectBuffer buffer, final int offset)
    {
        // the fields it checks in two reads (three with the extensions): every read of a buffer is bounds checked
        final long lengthAndPorts = lengthAndPorts(buffer, offset);
        final long length = lengthOf(lengthAndPorts);
        if (length > MAX_PAYLOAD)
        {
            return BAD_LENGTH;
        }
        final long flagsWord = buffer.getLong(offset + FLAGS_OFFSET, BE); // flags, credit, padding, checksum
        final boolean congestionUpdate = (flagsWord >>> 56 & FLAG_CONG_BITMAP) != 0;
        final int sport = sportOf(lengthAndPorts);
        final int dport = dportOf(lengthAndPorts);
        if (congestionUpdate && ((int)(flagsWord >>> 56) != FLAG_CONG_BITMAP || length != CongestionMap.BYTES ||
            sport != 0 || dport != 0))
        {
            return BAD_CONGESTION_UPDATE;
        }
        if (((int)flagsWord & 0xFFFF) != 0 && !isChecksumValid(buffer, offset))
        {
            return BAD_CHECKSUM;
        }
        if (findExtension(buffer, offset, -1) == EXTENSION_MALFORMED)
        {
            return BAD_EXTENSION;
        }
        if ((sport == 0 && length != 0 && !congestionUpdate) ||
            (dport == PROBE_PORT && (sport != 0 || length != 0)) ||
            (sport == PROBE_PORT && dport != 0))
        {
            return BAD_PORTS;
        }
        return VALID;
    }

    /**
     * @param result a {@link #validate} result.
     * @return its description, for logs.
     */
    public static String describeValidation(final int result)
    {
        switch (result)
        {
            case VALID: return "valid";
            case BAD_LENGTH: return "length above 1 MiB";
            case BAD_CONGESTION_UPDATE: return "malformed congestion update";
            case BAD_CHECKSUM: return "bad header checksum";
            case BAD_EXTENSION: return "unknown or overrunning extension header";
            case BAD_PORTS: return "impossible ports (payload from port 0, or to or from the probe port)";
            default: return "unknown validation result " + result;
        }
    }
}
