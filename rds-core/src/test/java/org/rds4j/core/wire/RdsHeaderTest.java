package org.rds4j.core.wire;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdsHeaderTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(64));

    private byte[] bytes(final int offset)
    {
        final byte[] out = new byte[RdsHeader.LENGTH];
        buffer.getBytes(offset, out);
        return out;
    }

    @Test
    void encodesEveryFieldBigEndianAtTheKernelOffsets()
    {
        buffer.setMemory(0, 64, (byte)0xAA);
        RdsHeader.write(buffer, 8, 0x0102030405060708L, 0x1112131415161718L, 1024, 4000, 4001,
            RdsHeader.FLAG_ACK_REQUIRED | RdsHeader.FLAG_RETRANSMITTED, 7);
        assertArrayEquals(HexFormat.of().parseHex(
            "0102030405060708" + "1112131415161718" + "00000400" + "0fa0" + "0fa1" + "06" + "07" + "00000000" +
            "0000" + "00000000000000000000000000000000"), bytes(8));
        assertEquals((byte)0xAA, buffer.getByte(7), "nothing written before the header");
        assertEquals((byte)0xAA, buffer.getByte(56), "nothing written after the header");
    }

    @Test
    void decodesWhatWasEncoded()
    {
        RdsHeader.write(buffer, 0, 0xFFFF_FFFF_FFFF_FFFEL, 77, RdsHeader.MAX_PAYLOAD, 65535, 1, 0xFF, 255);
        assertEquals(0xFFFF_FFFF_FFFF_FFFEL, RdsHeader.sequence(buffer, 0));
        assertEquals(77, RdsHeader.ack(buffer, 0));
        assertEquals(RdsHeader.MAX_PAYLOAD, RdsHeader.length(buffer, 0));
        assertEquals(65535, RdsHeader.sport(buffer, 0));
        assertEquals(1, RdsHeader.dport(buffer, 0));
        assertEquals(0xFF, RdsHeader.flags(buffer, 0));
        assertEquals(255, RdsHeader.credit(buffer, 0));
        final long lengthAndPorts = RdsHeader.lengthAndPorts(buffer, 0);
        assertEquals(RdsHeader.MAX_PAYLOAD, RdsHeader.lengthOf(lengthAndPorts));
        assertEquals(65535, RdsHeader.sportOf(lengthAndPorts));
        assertEquals(1, RdsHeader.dportOf(lengthAndPorts));
    }

    @Test
    void lengthIsUnsignedSoHostileValuesAreLarge()
    {
        RdsHeader.write(buffer, 0, 1, 0, -1, 5, 6, 0, 0);
        assertEquals(0xFFFF_FFFFL, RdsHeader.length(buffer, 0));
        assertEquals(0xFFFF_FFFFL, RdsHeader.lengthOf(RdsHeader.lengthAndPorts(buffer, 0)));
        assertEquals(RdsHeader.BAD_LENGTH, RdsHeader.validate(buffer, 0));
    }

    @Test
    void checksumMatchesKnownVectors()
    {
        // vectors computed independently (RFC 1071 over the 24 big-endian 16-bit words, checksum field 0)
        RdsHeader.write(buffer, 0, 1, 0, 0x10, 0x1234, 0x5678, RdsHeader.FLAG_ACK_REQUIRED, 0);
        assertEquals(0x9542, RdsHeader.computeChecksum(buffer, 0));

        RdsHeader.write(buffer, 0, 0xFFFF_FFFF_FFFF_FFFFL, 1, 0, 0, 0, 0, 0);
        assertEquals(0xFFFE, RdsHeader.computeChecksum(buffer, 0), "end-around carries folded twice");

        RdsHeader.write(buffer, 0, 0x0102030405060708L, 0x1112131415161718L, 1024, 4000, 4001, 6, 7);
        assertEquals(0x764F, RdsHeader.computeChecksum(buffer, 0));
        RdsHeader.writeChecksum(buffer, 0);
        assertEquals((byte)0x76, buffer.getByte(RdsHeader.CHECKSUM_OFFSET));
        assertEquals((byte)0x4F, buffer.getByte(RdsHeader.CHECKSUM_OFFSET + 1));
    }

    @Test
    void checksumVerifiesAndDetectsCorruption()
    {
        RdsHeader.write(buffer, 0, 9, 8, 100, 10, 20, 0, 0);
        assertTrue(RdsHeader.isChecksumValid(buffer, 0), "zero checksum means not checksummed");
        RdsHeader.writeChecksum(buffer, 0);
        assertTrue(RdsHeader.isChecksumValid(buffer, 0));
        assertEquals(RdsHeader.checksumField(buffer, 0), RdsHeader.computeChecksum(buffer, 0),
            "computing over a checksummed header ignores the stored field");
        buffer.putByte(3, (byte)(buffer.getByte(3) ^ 0x10));
        assertFalse(RdsHeader.isChecksumValid(buffer, 0));
        assertEquals(RdsHeader.BAD_CHECKSUM, RdsHeader.validate(buffer, 0));
    }

    @Test
    void storedAllOnesVerifiesWhereTheChecksumIsZero()
    {
        // the words sum to 0xFFFF, so the checksum is 0: sent as 0 (unchecked), or as 0xFFFF, which the kernel
        // verifies (the sum with it included is still all ones)
        RdsHeader.write(buffer, 0, 1, 0, 0, 0x1234, 0xEDCA, 0, 0);
        assertEquals(0, RdsHeader.computeChecksum(buffer, 0));
        buffer.putShort(RdsHeader.CHECKSUM_OFFSET, (short)0xFFFF);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0));
        buffer.putShort(RdsHeader.CHECKSUM_OFFSET, (short)0xFFFE);
        assertEquals(RdsHeader.BAD_CHECKSUM, RdsHeader.validate(buffer, 0));
        RdsHeader.write(buffer, 0, 1, 0, 0, 0x1234, 0xEDC9, 0, 0);
        buffer.putShort(RdsHeader.CHECKSUM_OFFSET, (short)0xFFFF);
        assertEquals(RdsHeader.BAD_CHECKSUM, RdsHeader.validate(buffer, 0), "0xFFFF verifies only for a zero checksum");
    }

    @Test
    void validateAcceptsOnlyWellFormedCongestionUpdates()
    {
        RdsHeader.write(buffer, 0, 0, 0, CongestionMap.BYTES, 0, 0, RdsHeader.FLAG_CONG_BITMAP, 0);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0));
        RdsHeader.write(buffer, 0, 0, 0, 100, 0, 0, RdsHeader.FLAG_CONG_BITMAP, 0);
        assertEquals(RdsHeader.BAD_CONGESTION_UPDATE, RdsHeader.validate(buffer, 0));
        RdsHeader.write(buffer, 0, 0, 0, CongestionMap.BYTES, 0, 5, RdsHeader.FLAG_CONG_BITMAP, 0);
        assertEquals(RdsHeader.BAD_CONGESTION_UPDATE, RdsHeader.validate(buffer, 0));
        RdsHeader.write(buffer, 0, 0, 0, CongestionMap.BYTES, 0, 0,
            RdsHeader.FLAG_CONG_BITMAP | RdsHeader.FLAG_RETRANSMITTED, 0);
        assertEquals(RdsHeader.BAD_CONGESTION_UPDATE, RdsHeader.validate(buffer, 0));
        RdsHeader.write(buffer, 0, 1, 0, RdsHeader.MAX_PAYLOAD, 3, 4, 0, 0);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0), "exactly 1 MiB is allowed");
        RdsHeader.write(buffer, 0, 1, 0, RdsHeader.MAX_PAYLOAD + 1, 3, 4, 0, 0);
        assertEquals(RdsHeader.BAD_LENGTH, RdsHeader.validate(buffer, 0));
    }

    @Test
    void recognisesAckOnlyFrames()
    {
        RdsHeader.write(buffer, 0, 0, 42, 0, 0, 0, 0, 0);
        assertTrue(RdsHeader.isAckOnly(buffer, 0));
        RdsHeader.write(buffer, 0, 3, 42, 0, 0, 0, 0, 0);
        assertFalse(RdsHeader.isAckOnly(buffer, 0), "a sequenced frame is not ack-only");
        RdsHeader.write(buffer, 0, 0, 42, 0, 7, 0, 0, 0);
        assertFalse(RdsHeader.isAckOnly(buffer, 0));
    }

    @Test
    void handshakeExtensionsHaveTheKernelLayout()
    {
        RdsHeader.write(buffer, 0, 9, 0, 0, RdsHeader.PROBE_PORT, 0, 0, 0);
        RdsHeader.writeHandshakeExtensions(buffer, 0, 1, 0xCAFEBABE);
        final byte[] ext = new byte[RdsHeader.EXTENSION_LENGTH];
        buffer.getBytes(RdsHeader.EXTENSION_OFFSET, ext);
        assertEquals("050001" + "06cafebabe" + "0000000000000000", HexFormat.of().formatHex(ext));
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0));
        assertEquals(1, RdsHeader.npaths(buffer, 0));
        assertEquals(0xCAFEBABE, RdsHeader.generation(buffer, 0));
    }

    @Test
    void absentExtensionsReadAsZero()
    {
        RdsHeader.write(buffer, 0, 9, 0, 0, RdsHeader.PROBE_PORT, 0, 0, 0);
        assertEquals(0, RdsHeader.npaths(buffer, 0));
        assertEquals(0, RdsHeader.generation(buffer, 0));
        // a kernel 6.1 probe: NPATHS only
        buffer.putByte(RdsHeader.EXTENSION_OFFSET, (byte)RdsHeader.EXT_NPATHS);
        buffer.putShort(RdsHeader.EXTENSION_OFFSET + 1, (short)8, java.nio.ByteOrder.BIG_ENDIAN);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0));
        assertEquals(8, RdsHeader.npaths(buffer, 0));
        assertEquals(0, RdsHeader.generation(buffer, 0));
    }

    @Test
    void validateRejectsUnknownAndOverrunningExtensions()
    {
        RdsHeader.write(buffer, 0, 9, 0, 0, 5, 6, 0, 0);
        buffer.putByte(RdsHeader.EXTENSION_OFFSET, (byte)7);
        assertEquals(RdsHeader.BAD_EXTENSION, RdsHeader.validate(buffer, 0), "type 7 is unknown");
        buffer.putByte(RdsHeader.EXTENSION_OFFSET, (byte)0xFF);
        assertEquals(RdsHeader.BAD_EXTENSION, RdsHeader.validate(buffer, 0));
        RdsHeader.write(buffer, 0, 9, 0, 0, 5, 6, 0, 0);
        // RDMA_DEST (8 data bytes) at position 8 would need 17 bytes
        buffer.putByte(RdsHeader.EXTENSION_OFFSET, (byte)RdsHeader.EXT_RDMA);
        buffer.putByte(RdsHeader.EXTENSION_OFFSET + 5, (byte)RdsHeader.EXT_NPATHS);
        buffer.putByte(RdsHeader.EXTENSION_OFFSET + 8, (byte)RdsHeader.EXT_RDMA_DEST);
        assertEquals(RdsHeader.BAD_EXTENSION, RdsHeader.validate(buffer, 0));
        buffer.putByte(RdsHeader.EXTENSION_OFFSET + 8, (byte)RdsHeader.EXT_RDMA);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0), "RDMA, NPATHS, RDMA fill 13 bytes");
    }

    @Test
    void validateRejectsImpossiblePorts()
    {
        RdsHeader.write(buffer, 0, 9, 0, 10, 0, 6, 0, 0);
        assertEquals(RdsHeader.BAD_PORTS, RdsHeader.validate(buffer, 0), "payload from port 0");
        RdsHeader.write(buffer, 0, 9, 0, 0, 0, 6, 0, 0);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0), "an empty pong to a bound port");
        RdsHeader.write(buffer, 0, 9, 0, 0, 0, RdsHeader.PROBE_PORT, 0, 0);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0), "the probe's pong");
        RdsHeader.write(buffer, 0, 9, 0, 4, 0, RdsHeader.PROBE_PORT, 0, 0);
        assertEquals(RdsHeader.BAD_PORTS, RdsHeader.validate(buffer, 0), "payload to port 1");
        RdsHeader.write(buffer, 0, 9, 0, 0, 7, RdsHeader.PROBE_PORT, 0, 0);
        assertEquals(RdsHeader.BAD_PORTS, RdsHeader.validate(buffer, 0), "to port 1 from a bound port");
        RdsHeader.write(buffer, 0, 9, 0, 0, RdsHeader.PROBE_PORT, 7, 0, 0);
        assertEquals(RdsHeader.BAD_PORTS, RdsHeader.validate(buffer, 0), "from port 1 to a bound port");
        RdsHeader.write(buffer, 0, 9, 0, 3, 7, 0, 0, 0);
        assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, 0), "a ping may carry bytes");
    }
}
