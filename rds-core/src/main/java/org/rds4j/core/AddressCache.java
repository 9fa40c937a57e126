package org.rds4j.core;

import org.agrona.DirectBuffer;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The socket addresses of {@link DriverProtocol} address blocks, made once and kept, so that the frames of a
 * stream to or from the same few peers allocate nothing: a direct-mapped table of the addresses decoded last.
 * One thread only (a driver's session, a client's reader).
 */
final class AddressCache
{
    private static final int SLOTS = 256;

    private final byte[][] keys = new byte[SLOTS][];
    private final InetSocketAddress[] values = new InetSocketAddress[SLOTS];

    /**
     * @param buffer an address block, already checked ({@link DriverProtocol#checkClientFrame}).
     * @param offset its first byte.
     * @return its address and port.
     */
    InetSocketAddress get(final DirectBuffer buffer, final int offset)
    {
        final int length = buffer.getByte(offset);
        final int port = buffer.getInt(offset + 4);
        int hash = port * 31 + length;
        for (int i = 0; i < length; i += 4)
        {
            hash = hash * 31 + buffer.getInt(offset + 8 + i);
        }
        final int slot = (hash ^ (hash >>> 16)) & (SLOTS - 1);
        final byte[] key = keys[slot];
        if (key != null && matches(key, buffer, offset, length, port))
        {
            return values[slot];
        }
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset + 8, bytes);
        final InetSocketAddress address;
        try
        {
            address = new InetSocketAddress(InetAddress.getByAddress(bytes), port);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException("address length " + length, ex);
        }
        final byte[] newKey = new byte[length + 2];
        System.arraycopy(bytes, 0, newKey, 0, length);
        newKey[length] = (byte)(port >>> 8);
        newKey[length + 1] = (byte)port;
        keys[slot] = newKey;
        values[slot] = address;
        return address;
    }

    private static boolean matches(final byte[] key, final DirectBuffer buffer, final int offset, final int length,
        final int port)
    {
        if (key.length != length + 2 || ((key[length] & 0xFF) << 8 | (key[length + 1] & 0xFF)) != port)
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            if (key[i] != buffer.getByte(offset + 8 + i))
            {
                return false;
            }
        }
        return true;
    }
}
