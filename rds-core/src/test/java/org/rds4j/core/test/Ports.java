package org.rds4j.core.test;

import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;

import java.io.IOException;
import java.net.InetSocketAddress;

/** Binding a port that a client that went away held: the tests wait until its driver frees it. */
public final class Ports
{
    private Ports()
    {
    }

    /**
     * @param socket an unbound socket.
     * @param local  the address to bind.
     * @return true if bound, false while the port is still in use ({@code EADDRINUSE}).
     * @throws AssertionError on any other failure.
     */
    public static boolean tryBind(final RdsSocket socket, final InetSocketAddress local)
    {
        try
        {
            socket.bind(local);
            return true;
        }
        catch (final RdsException ex)
        {
            if (ex.code() != RdsResult.EADDRINUSE)
            {
                throw new AssertionError("bind " + local + ": " + ex.getMessage(), ex);
            }
            return false;
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
    }
}
