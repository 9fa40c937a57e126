package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class AddressCacheTest
{
    private final UnsafeBuffer block = new UnsafeBuffer(new byte[DriverProtocol.ADDRESS + 8]);
    private final AddressCache cache = new AddressCache();

    @Test
    void aBlockDecodesToTheAddressWrittenAndAgainToTheSameInstance() throws UnknownHostException
    {
        for (final InetSocketAddress address : List.of(
            new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 4000),
            new InetSocketAddress(InetAddress.getByName("fe80::1:2:3:4"), 65535),
            new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0)))
        {
            DriverProtocol.putAddress(block, 8, address);
            final InetSocketAddress decoded = cache.get(block, 8);
            assertEquals(address, decoded);
            assertSame(decoded, cache.get(block, 8), "kept: a stream's frames allocate nothing");
        }
    }

    /**
     * Three families of more addresses than the table has slots, each differing only in one of the block's three
     * words (the port; an IPv6 address's first eight bytes; its last eight): within a family blocks collide, and
     * each must still decode to its own address.
     */
    @Test
    void blocksThatDifferInAnyOneWordStayApart() throws UnknownHostException
    {
        final List<InetSocketAddress> addresses = new ArrayList<>();
        for (int i = 0; i < 600; i++)
        {
            addresses.add(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), 1000 + i));
            final byte[] high = new byte[16];
            high[0] = (byte)0xfd;
            high[6] = (byte)(i >> 8);
            high[7] = (byte)i;
            addresses.add(new InetSocketAddress(InetAddress.getByAddress(high), 7000));
            final byte[] low = new byte[16];
            low[0] = (byte)0xfd;
            low[14] = (byte)(i >> 8);
            low[15] = (byte)i;
            addresses.add(new InetSocketAddress(InetAddress.getByAddress(low), 7000));
        }
        for (int round = 0; round < 2; round++)
        {
            for (final InetSocketAddress address : addresses)
            {
                DriverProtocol.putAddress(block, 8, address);
                assertEquals(address, cache.get(block, 8), "round " + round);
            }
        }
    }
}
