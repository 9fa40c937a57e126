package org.rds4j.samples;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Picks a TCP port for RDS over TCP in tests, away from the default 16385. */
final class TestPorts
{
    private TestPorts()
    {
    }

    /**
     * @param first     the first port to try; the next 200 are tried after it.
     * @param addresses the addresses the stacks will listen on.
     * @return the first port that can be bound on the wildcard and on every address.
     */
    static int freeTcpPort(final int first, final String... addresses)
    {
        for (int port = first; port < first + 200; port++)
        {
            if (canBind(null, port) && allCanBind(port, addresses))
            {
                return port;
            }
        }
        throw new IllegalStateException("no free TCP port in " + first + ".." + (first + 199));
    }

    private static boolean allCanBind(final int port, final String... addresses)
    {
        for (final String address : addresses)
        {
            if (!canBind(address, port))
            {
                return false;
            }
        }
        return true;
    }

    private static boolean canBind(final String address, final int port)
    {
        try (ServerSocket socket = new ServerSocket())
        {
            socket.setReuseAddress(true);
            socket.bind(address == null ? new InetSocketAddress(port) : new InetSocketAddress(InetAddress.getByName(address), port));
            return true;
        }
        catch (final IOException e)
        {
            return false;
        }
    }
}
