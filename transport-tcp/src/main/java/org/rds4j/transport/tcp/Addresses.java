package org.rds4j.transport.tcp;

import java.net.InetAddress;
import java.util.Arrays;

/** Orders addresses as the kernel's {@code rds_addr_cmp}: by length, then by unsigned bytes. */
final class Addresses
{
    private Addresses()
    {
    }

    static int compare(final InetAddress a, final InetAddress b)
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
