package org.rds4j.core;

import org.agrona.DirectBuffer;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The socket addresses of {@link DriverProtocol} address blocks, made once and kept, so that the frames of a
 * stream to or from the same few peers allocate nothing: a direct-mapped table of the addresses decoded last.
 * A block is keyed by its {@link DriverProtocol#ADDRESS} bytes read as three longs, hashed and compared as such:
 * a byte at a time, the lookup was 13-17 % of a client's reading thread and 6-8 % of a driver's agent in 64 B streams
 * (benchmarks.md, 2026-12-04). Bytes a block's address does not use are part of the key: a writer that does not clear
 * them only costs itself a slot. One thread only (a driver's session, a client's reader).
 */
final class AddressCache
{
    private static final int SLOT_BITS = 8;
    private static final int SLOTS = 1 << SLOT_BITS;
    private static final int WORDS = DriverProtocol.ADDRESS / Long.BYTES;

    private final long[] keys = new long[SLOTS * WORDS];
    private final InetSocketAddress[] values = new InetSocketAddress[SLOTS];

    /**
     * @param buffer an address block, already checked ({@link DriverProtocol#checkClientFrame}).
     * @param offset its first byte.
     * @return its address and port.
     */
    InetSocketAddress get(final DirectBuffer buffer, final int offset)
    {
        final long w0 = buffer.getLong(offset);
        final long w1 = buffer.getLong(offset + Long.BYTES);
        final long w2 = buffer.getLong(offset + 2 * Long.BYTES);
        final int slot = (int)((((w0 * 31 + w1) * 31 + w2) * 0x9E3779B97F4A7C15L) >>> (Long.SIZE - SLOT_BITS));
        final int k = slot * WORDS;
        final InetSocketAddress cached = values[slot];
        if (cached != null && keys[k] == w0 && keys[k + 1] == w1 && keys[k + 2] == w2)
        {
            return cached;
        }
        final byte[] bytes = new byte[buffer.getByte(offset)];
        buffer.getBytes(offset + 8, bytes);
        final InetSocketAddress address;
        try
        {
            address = new InetSocketAddress(InetAddress.getByAddress(bytes), buffer.getInt(offset + 4));
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException("address length " + bytes.length, ex);
        }
        keys[k] = w0;
        keys[k + 1] = w1;
        keys[k + 2] = w2;
        values[slot] = address;
        return address;
    }
}
