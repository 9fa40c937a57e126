package org.rds4j.core;

import org.agrona.collections.Int2ObjectHashMap;
import org.rds4j.RdsResult;
import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A local address of the stack: its congestion map, the ports bound on it, and its connections.
 * <p>
 * Port claims are made by application threads under this object's lock; the socket lookup table and the
 * connection list belong to the agent. A socket whose bind the agent has not applied yet waits in
 * {@link #bindingStarts its own table}, under the lock, so that a message for its port that the agent reads first
 * is not dropped: a bind that has returned has a socket for its port, as the kernel's does.
 */
final class LocalEndpoint
{
    private static final int FIRST_EPHEMERAL = 2;
    private static final int PORTS = 65536;

    final InetAddress address;
    final CongestionMap congestionMap;
    private final BitSet claimedPorts = new BitSet(PORTS);

    /** Agent only: bound sockets by port. */
    final Int2ObjectHashMap<RdsSocketImpl> sockets = new Int2ObjectHashMap<>();
    /** Agent only: connections from this address. */
    final List<Connection> connections = new ArrayList<>();
    /** Sockets bound by application threads and not yet in {@link #sockets}; under this object's lock. */
    private final Int2ObjectHashMap<RdsSocketImpl> binding = new Int2ObjectHashMap<>();

    LocalEndpoint(final InetAddress address)
    {
        this(address, new CongestionMap());
    }

    LocalEndpoint(final InetAddress address, final CongestionMap congestionMap)
    {
        this.address = address;
        this.congestionMap = congestionMap;
    }

    /**
     * Claims a port for a socket.
     *
     * @param port 0 for any free port (never 0 or 1), else 2..65535.
     * @return the port claimed, or {@link RdsResult#EADDRINUSE}.
     */
    synchronized int claim(final int port)
    {
        if (port != 0)
        {
            if (claimedPorts.get(port))
            {
                return RdsResult.EADDRINUSE;
            }
            claimedPorts.set(port);
            return port;
        }
        final int span = PORTS - FIRST_EPHEMERAL;
        final int start = ThreadLocalRandom.current().nextInt(span);
        for (int i = 0; i < span; i++)
        {
            final int candidate = FIRST_EPHEMERAL + (start + i) % span;
            if (!claimedPorts.get(candidate))
            {
                claimedPorts.set(candidate);
                return candidate;
            }
        }
        return RdsResult.EADDRINUSE;
    }

    synchronized void release(final int port)
    {
        claimedPorts.clear(port);
    }

    /** Application thread, in bind: the socket has its port; the agent puts it into {@link #sockets} next. */
    synchronized void bindingStarts(final int port, final RdsSocketImpl socket)
    {
        binding.put(port, socket);
    }

    /** Agent: the socket is in {@link #sockets}, or unbound. */
    synchronized void bindingEnds(final int port, final RdsSocketImpl socket)
    {
        if (binding.get(port) == socket)
        {
            binding.remove(port);
        }
    }

    /** Agent: a message came for a port with no socket in {@link #sockets}: the socket whose bind is on its way. */
    synchronized RdsSocketImpl binding(final int port)
    {
        return binding.get(port);
    }
}
