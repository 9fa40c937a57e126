package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.rds4j.transport.tcp.HeaderRules.Rule;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Hand-made headers for each rule of the fuzz oracle: at least one it must accept, one it must refuse. */
class HeaderRulesTest
{
    private static final int MIB = 1 << 20;

    /** A header with these fields and zeros elsewhere: no checksum, no extension headers. */
    private static byte[] header(final long sequence, final long len, final int sport, final int dport, final int flags)
    {
        return ByteBuffer.allocate(48)
            .putLong(0, sequence).putInt(16, (int)len).putShort(20, (short)sport).putShort(22, (short)dport)
            .put(24, (byte)flags).array();
    }

    private static byte[] withChecksum(final byte[] header, final int csum)
    {
        return ByteBuffer.wrap(header).putShort(30, (short)csum).array();
    }

    private static byte[] withExtensions(final byte[] header, final String hex)
    {
        return ByteBuffer.wrap(header).put(32, HexFormat.of().parseHex(hex)).array();
    }

    private static void accepted(final byte[] header)
    {
        assertEquals(EnumSet.noneOf(Rule.class), HeaderRules.broken(header, 0));
    }

    private static void refused(final Rule rule, final byte[] header)
    {
        assertEquals(EnumSet.of(rule), HeaderRules.broken(header, 0));
    }

    @Test
    void lengthAtMostOneMebibyteReadUnsigned()
    {
        accepted(header(1, MIB, 3, 4, 0));
        refused(Rule.LENGTH, header(1, MIB + 1, 3, 4, 0));
        refused(Rule.LENGTH, header(1, 0xFFFF_FFFFL, 3, 4, 0));
        assertEquals(0xFFFF_FFFFL, HeaderRules.payloadLength(header(1, 0xFFFF_FFFFL, 3, 4, 0), 0));
    }

    @Test
    void congestionUpdateIsExactlyFlags1Len8192Ports0()
    {
        accepted(header(0, 8192, 0, 0, 0x01));
        refused(Rule.CONGESTION_UPDATE, header(0, 8192, 0, 0, 0x03));
        refused(Rule.CONGESTION_UPDATE, header(0, 4096, 0, 0, 0x01));
        refused(Rule.CONGESTION_UPDATE, header(0, 8192, 0, 5, 0x01));
        accepted(header(1, 8192, 7, 8, 0x06 | 0x80)); // other flags without CONG_BITMAP are ignored
    }

    @Test
    void nonZeroChecksumMustVerify()
    {
        // 0x9542 worked out by hand: the 24 words sum to 0x6ABD, complemented
        final byte[] header = header(1, 0x10, 0x1234, 0x5678, 0x02);
        accepted(header);
        accepted(withChecksum(header, 0x9542));
        refused(Rule.CHECKSUM, withChecksum(header, 0x9543));
        // the words sum to 0xFFFF: the checksum is 0, sent as 0 (unchecked) or as 0xFFFF, the other
        // one's-complement zero, which the kernel verifies
        final byte[] sumsToAllOnes = header(1, 0, 0x1234, 0xEDCA, 0);
        accepted(withChecksum(sumsToAllOnes, 0xFFFF));
        refused(Rule.CHECKSUM, withChecksum(sumsToAllOnes, 0xFFFE));
    }

    @Test
    void extensionHeadersKnownAndInsideTheSpace()
    {
        final byte[] probe = header(0, 0, 1, 0, 0);
        accepted(withExtensions(probe, "050001" + "06cafebabe"));
        accepted(withExtensions(probe, "050001" + "050008" + "0600000001" + "0100000004")); // fills all 16 bytes
        accepted(withExtensions(probe, "040102030405060708"));
        accepted(withExtensions(probe, "00ff")); // nothing after type 0 is read
        refused(Rule.EXTENSION, withExtensions(probe, "07"));
        refused(Rule.EXTENSION, withExtensions(probe, "0500010fee"));
        // a GEN_NUM at byte 13 would end at byte 18
        refused(Rule.EXTENSION, withExtensions(probe, "0100000001" + "0100000002" + "050001" + "06"));
    }

    @Test
    void noPayloadFromPort0AndPort1OnlyTalksToPort0()
    {
        accepted(header(5, 100, 4000, 0, 0)); // a ping with payload
        accepted(header(6, 0, 0, 4000, 0)); // its pong
        accepted(header(0, 0, 0, 0, 0)); // ack-only
        accepted(header(0, 0, 1, 0, 0)); // handshake probe
        accepted(header(7, 0, 0, 1, 0)); // probe pong
        refused(Rule.PORTS, header(6, 10, 0, 4000, 0));
        refused(Rule.PORTS, header(7, 10, 0, 1, 0));
        refused(Rule.PORTS, header(7, 0, 4000, 1, 0));
        refused(Rule.PORTS, header(8, 0, 1, 4000, 0));
        refused(Rule.PORTS, header(8, 0, 1, 1, 0));
    }

    @Test
    void reportsEveryRuleBroken()
    {
        final byte[] header = withExtensions(withChecksum(header(1, MIB + 1, 1, 1, 0x05), 1), "ff");
        assertEquals(EnumSet.allOf(Rule.class), HeaderRules.broken(header, 0));
    }
}
