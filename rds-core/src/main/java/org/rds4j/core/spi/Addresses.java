package org.rds4j.core.spi;

import java.net.InetAddress;
import java.util.Arrays;

/**
 * Orders addresses as the kernel's {@code rds_addr_cmp}: by length, then by unsigned bytes. Transports use it
 * for the connection rules (the node with the lower address connects).
 */
public final class Addresses
{
    private Addresses()
    {
    }

    /**
     * @param a an address.
     * @param b another address.
     * @return negative, zero or positive as {@code a} orders below, equal to or above {@code b}.
     */
    public static int compare(final InetAddress a, final InetAddress b)
    {
        final byte[] x = a.getAddress();
        final byte[] y = b.getAddress();
        if (x.length != y.length)
        {
            return Integer.compare(x.length, y.length);
        }
        return Arrays.compareUnsigned(x, y);
    }
}
