package org.rds4j.transport.ib;

import org.agrona.concurrent.UnsafeBuffer;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The connection private data of RDS over IB, the kernel's {@code struct rds_ib_connect_private} (Linux 6.1,
 * IPv4), all big-endian:
 * <pre>
 *  0 dp_saddr  be32    the sender's address
 *  4 dp_daddr  be32    the receiver's address
 *  8 major     u8      protocol version offered (request) or chosen (accept)
 *  9 minor     u8
 * 10 minor mask be16   minor versions supported (0x3: .0 and .1)
 * 12 tos       u8      0 (rds4j has no TOS)
 * 13 reserved  u8
 * 14 reserved  be16
 * 16 ack_seq   be64    the sender's cumulative ack (highest sequence received), applied like a received ack
 * 24 credit    be32    receive buffers the sender posted: the receiver's initial send credits
 * 28 (padding to 32, the struct's 8-byte alignment)
 * </pre>
 * The request offers 4.1 with minor mask 0x3; the accept names the version chosen. 3.1 (the kernel's
 * compatibility version) and 4.x are accepted; anything else is refused. rdma_cm pads private data (to 56
 * bytes in a request, 196 in an accept), so the received length only tells whether the struct fits, never
 * its length. Data too short for the struct is the kernel's "version 4.0, no data" case; rds4j needs the
 * addresses and credits, so it refuses such a peer.
 */
final class IbPrivateData
{
    static final int LENGTH = 32;
    static final int SADDR = 0;
    static final int DADDR = 4;
    static final int MAJOR = 8;
    static final int MINOR = 9;
    static final int MINOR_MASK = 10;
    static final int TOS = 12;
    static final int ACK_SEQ = 16;
    static final int CREDIT = 24;

    static final int VERSION_4_1 = 0x0401;
    static final int VERSION_3_1 = 0x0301;
    static final int MINOR_MASK_OFFERED = 0x3;

    /**
     * The private data of rds4j's connection rejects: the int 1 ({@code RDS_RDMA_REJ_INCOMPAT}) in the byte order
     * of the kernel's x86 hosts (little-endian), which is what the kernel's own rejects carry. Linux 6.1's
     * {@code rds_rdma_cm_event_handler_cmn} drops its connection attempt (and retries, proposing 3.1) only for a
     * reject without data or with exactly this int; any other data leaves its connection in CONNECTING for good,
     * rejecting every later request from us as a crossed connect (seen in the guest with rds4j's former reject
     * data, 00 00 04 01).
     */
    static final byte[] REJECT = {1, 0, 0, 0};

    final byte[] bytes = new byte[LENGTH];
    private final UnsafeBuffer view = new UnsafeBuffer(bytes);

    /**
     * Writes the private data into {@link #bytes}.
     *
     * @param version {@link #VERSION_4_1} in a request; the version chosen in an accept.
     */
    void encode(final InetAddress source, final InetAddress destination, final int version, final long ackSequence,
        final int credit)
    {
        view.setMemory(0, LENGTH, (byte)0);
        view.putBytes(SADDR, ipv4(source));
        view.putBytes(DADDR, ipv4(destination));
        view.putByte(MAJOR, (byte)(version >> 8));
        view.putByte(MINOR, (byte)version);
        view.putShort(MINOR_MASK, (short)MINOR_MASK_OFFERED, java.nio.ByteOrder.BIG_ENDIAN);
        view.putLong(ACK_SEQ, ackSequence, java.nio.ByteOrder.BIG_ENDIAN);
        view.putInt(CREDIT, credit, java.nio.ByteOrder.BIG_ENDIAN);
    }

    private static byte[] ipv4(final InetAddress address)
    {
        if (!(address instanceof Inet4Address))
        {
            throw new IllegalArgumentException("RDS over IB in rds4j is IPv4 only: " + address);
        }
        return address.getAddress();
    }

    /** A decoded private data; {@code error} is non-null if it is unusable. */
    static final class Decoded
    {
        InetAddress source;
        InetAddress destination;
        int version;
        long ackSequence;
        int credit;
        String error;
    }

    /**
     * @param data   the received bytes.
     * @param length how many were received (rdma_cm pads, so at least the struct for a usable one).
     * @param out    where to put the result.
     * @return {@code out}.
     */
    static Decoded decode(final byte[] data, final int length, final Decoded out)
    {
        out.error = null;
        if (length < LENGTH)
        {
            out.error = "private data of " + length + " bytes, not an rds_ib_connect_private (" + LENGTH + ")";
            return out;
        }
        final UnsafeBuffer in = new UnsafeBuffer(data);
        try
        {
            final byte[] address = new byte[4];
            in.getBytes(SADDR, address);
            out.source = InetAddress.getByAddress(address);
            in.getBytes(DADDR, address);
            out.destination = InetAddress.getByAddress(address);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalStateException(ex); // 4 bytes are always an address
        }
        out.version = ((in.getByte(MAJOR) & 0xFF) << 8) | (in.getByte(MINOR) & 0xFF);
        out.ackSequence = in.getLong(ACK_SEQ, java.nio.ByteOrder.BIG_ENDIAN);
        out.credit = in.getInt(CREDIT, java.nio.ByteOrder.BIG_ENDIAN);
        if (!compatible(out.version))
        {
            out.error = "protocol version " + (out.version >> 8) + "." + (out.version & 0xFF) + " (rds4j speaks 4.1 and 3.1)";
        }
        else if (out.credit < 0)
        {
            out.error = "credit " + Integer.toUnsignedString(out.credit);
        }
        return out;
    }

    /**
     * @param offered the version a request offers.
     * @return the version an accept answers with: 4.1 for a 4.x offer, 3.1 for 3.1; 0 if incompatible.
     */
    static int negotiate(final int offered)
    {
        if ((offered >> 8) == 4)
        {
            return VERSION_4_1;
        }
        return offered == VERSION_3_1 ? VERSION_3_1 : 0;
    }

    static boolean compatible(final int version)
    {
        return negotiate(version) != 0;
    }
}
