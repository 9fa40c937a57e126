package org.rds4j.transport.ib;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

class IbPrivateDataTest
{
    @Test
    void encodesTheKernelsRdsIbConnectPrivateByteForByte() throws Exception
    {
        final IbPrivateData data = new IbPrivateData();
        data.encode(InetAddress.getByName("10.77.0.1"), InetAddress.getByName("10.77.0.2"), IbPrivateData.VERSION_4_1,
            0x0102030405060708L, 1024);
        final byte[] expected = HexFormat.of().parseHex(
            "0a4d0001" + "0a4d0002" +      // dp_saddr, dp_daddr
            "04" + "01" + "0003" +          // major 4, minor 1, minor mask 0x3
            "00" + "00" + "0000" +          // tos, reserved, reserved
            "0102030405060708" +            // ack_seq
            "00000400" +                    // credit 1024
            "00000000");                    // padding to the struct's 32 bytes
        assertArrayEquals(expected, data.bytes);
    }

    @Test
    void decodesPaddedDataByTheStructNotByTheReceivedLength() throws Exception
    {
        final IbPrivateData data = new IbPrivateData();
        data.encode(InetAddress.getByName("10.77.0.2"), InetAddress.getByName("10.77.0.1"), IbPrivateData.VERSION_3_1, 7, 16);
        final byte[] padded = new byte[56]; // rdma_cm pads a request's private data to 56 bytes
        System.arraycopy(data.bytes, 0, padded, 0, data.bytes.length);
        final IbPrivateData.Decoded decoded = IbPrivateData.decode(padded, padded.length, new IbPrivateData.Decoded());
        assertNull(decoded.error);
        assertEquals(InetAddress.getByName("10.77.0.2"), decoded.source);
        assertEquals(InetAddress.getByName("10.77.0.1"), decoded.destination);
        assertEquals(0x0301, decoded.version);
        assertEquals(7, decoded.ackSequence);
        assertEquals(16, decoded.credit);
    }

    @Test
    void offers41AndAccepts31AsCompatible()
    {
        assertEquals(IbPrivateData.VERSION_4_1, IbPrivateData.negotiate(0x0401));
        assertEquals(IbPrivateData.VERSION_4_1, IbPrivateData.negotiate(0x0400));
        assertEquals(IbPrivateData.VERSION_3_1, IbPrivateData.negotiate(0x0301));
        assertEquals(0, IbPrivateData.negotiate(0x0300));
        assertEquals(0, IbPrivateData.negotiate(0x0501));
    }

    @Test
    void refusesShortDataAndUnknownVersions() throws Exception
    {
        assertNotNull(IbPrivateData.decode(new byte[20], 20, new IbPrivateData.Decoded()).error);
        final IbPrivateData data = new IbPrivateData();
        data.encode(InetAddress.getByName("10.0.0.1"), InetAddress.getByName("10.0.0.2"), 0x0203, 0, 1);
        assertNotNull(IbPrivateData.decode(data.bytes, 32, new IbPrivateData.Decoded()).error);
    }

    @Test
    void aRejectCarriesTheIntOneAsTheKernelReadsIt()
    {
        // the kernel reads the first 4 bytes of a reject's data as a host-order int and recovers only from 1
        assertEquals(1, java.nio.ByteBuffer.wrap(IbPrivateData.REJECT).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt());
        assertEquals(4, IbPrivateData.REJECT.length);
    }
}
