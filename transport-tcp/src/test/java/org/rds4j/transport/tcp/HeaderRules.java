package org.rds4j.transport.tcp;

import org.rds4j.core.wire.RdsHeader;

import java.util.EnumSet;

/**
 * The rules a received header must pass on TCP, as docs/protocol.md ("Frames on TCP") and README.md's Security
 * table state them, read straight from the 48 big-endian bytes of the kernel's {@code struct rds_header}. The
 * oracle of {@link TcpFrameReaderFuzzTest}: written apart from {@link RdsHeader}, whose {@code validate} the
 * decoder uses, so that a bug there makes the two disagree instead of agreeing with itself. Only the verdict
 * codes are shared, as they are what the decoder reports.
 */
final class HeaderRules
{
    static final int HEADER_BYTES = 48;
    static final int MAX_PAYLOAD = 1 << 20;
    static final int CONGESTION_MAP_BYTES = 8192;

    private static final int LEN = 16;
    private static final int SPORT = 20;
    private static final int DPORT = 22;
    private static final int FLAGS = 24;
    private static final int CSUM = 30;
    private static final int EXTENSIONS = 32;
    private static final int EXTENSION_SPACE = 16;
    private static final int CONG_BITMAP = 0x01;
    private static final int PROBE_PORT = 1;
    /** Data bytes after the type byte, by type; 0 to 6 are known (docs/protocol.md, "Special frames"). */
    private static final int[] EXTENSION_DATA = {0, 4, 4, 8, 8, 2, 4};

    /** A rule a header can break, and the verdict the decoder gives for it. */
    enum Rule
    {
        /** {@code len} at most 1 MiB, read unsigned. */
        LENGTH(RdsHeader.BAD_LENGTH),
        /** A frame with CONG_BITMAP has flags exactly 0x01, {@code len} 8192 and both ports 0. */
        CONGESTION_UPDATE(RdsHeader.BAD_CONGESTION_UPDATE),
        /**
         * A non-zero {@code csum} verifies as the kernel's {@code rds_message_verify_checksum} has it: the
         * one's-complement sum of the 24 words, {@code csum} included, is all ones.
         */
        CHECKSUM(RdsHeader.BAD_CHECKSUM),
        /** Extension headers: known types whose data fits in the 16 bytes, up to type 0 or the end. */
        EXTENSION(RdsHeader.BAD_EXTENSION),
        /** No payload from port 0 but a congestion map; port 1 sends only to port 0 and receives only empty pongs. */
        PORTS(RdsHeader.BAD_PORTS);

        final int verdict;

        Rule(final int verdict)
        {
            this.verdict = verdict;
        }
    }

    private HeaderRules()
    {
    }

    /**
     * @param bytes holds a whole header at {@code at}.
     * @param at    its first byte.
     * @return the rules it breaks; empty if the decoder must accept it.
     */
    static EnumSet<Rule> broken(final byte[] bytes, final int at)
    {
        final long len = payloadLength(bytes, at);
        final int sport = (int)read(bytes, at + SPORT, 2);
        final int dport = (int)read(bytes, at + DPORT, 2);
        final int flags = (int)read(bytes, at + FLAGS, 1);
        final boolean congestion = (flags & CONG_BITMAP) != 0;

        final EnumSet<Rule> broken = EnumSet.noneOf(Rule.class);
        if (len > MAX_PAYLOAD)
        {
            broken.add(Rule.LENGTH);
        }
        if (congestion && (flags != CONG_BITMAP || len != CONGESTION_MAP_BYTES || sport != 0 || dport != 0))
        {
            broken.add(Rule.CONGESTION_UPDATE);
        }
        if (read(bytes, at + CSUM, 2) != 0 && onesComplementSum(bytes, at) != 0xFFFF)
        {
            broken.add(Rule.CHECKSUM);
        }
        if (!extensionsWellFormed(bytes, at + EXTENSIONS))
        {
            broken.add(Rule.EXTENSION);
        }
        if ((sport == 0 && len != 0 && !congestion) ||
            (sport == PROBE_PORT && dport != 0) ||
            (dport == PROBE_PORT && (sport != 0 || len != 0)))
        {
            broken.add(Rule.PORTS);
        }
        return broken;
    }

    /**
     * @param bytes holds a whole header at {@code at}.
     * @param at    its first byte.
     * @return its {@code len}, unsigned.
     */
    static long payloadLength(final byte[] bytes, final int at)
    {
        return read(bytes, at + LEN, 4);
    }

    /** The sum of the header's 24 big-endian 16-bit words with end-around carry, folded to 16 bits. */
    private static int onesComplementSum(final byte[] bytes, final int at)
    {
        long sum = 0;
        for (int i = 0; i < HEADER_BYTES; i += 2)
        {
            sum += read(bytes, at + i, 2);
        }
        while (sum > 0xFFFF)
        {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int)sum;
    }

    private static boolean extensionsWellFormed(final byte[] bytes, final int start)
    {
        int position = 0;
        while (position < EXTENSION_SPACE)
        {
            final int type = bytes[start + position] & 0xFF;
            if (type == 0)
            {
                return true;
            }
            if (type >= EXTENSION_DATA.length || position + 1 + EXTENSION_DATA[type] > EXTENSION_SPACE)
            {
                return false;
            }
            position += 1 + EXTENSION_DATA[type];
        }
        return true;
    }

    /** The unsigned big-endian value of {@code count} (1 to 4) bytes. */
    private static long read(final byte[] bytes, final int at, final int count)
    {
        long value = 0;
        for (int i = 0; i < count; i++)
        {
            value = value << 8 | bytes[at + i] & 0xFF;
        }
        return value;
    }
}
