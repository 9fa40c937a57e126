package org.rds4j.core.spi;

import org.rds4j.RdsStackConfig;

import java.net.InetAddress;

/**
 * What a transport may use of its stack. Agent thread only, except {@link #config()} and {@link #counters()}.
 */
public interface TransportContext
{
    /** @return the stack's configuration. */
    RdsStackConfig config();

    /** @return the stack's counters. */
    TransportCounters counters();

    /**
     * Finds or creates the connection path for a node pair on a transport, e.g. for an accepted TCP connection.
     *
     * @param local     a local address the transport serves.
     * @param remote    the peer's address.
     * @param transport the transport asking.
     * @return the connection, or null if no socket of this stack is bound to {@code local}.
     */
    ConnectionPath connection(InetAddress local, InetAddress remote, Transport transport);

    /**
     * Any thread: ends the agent's idle wait so that it runs a duty cycle soon, for a transport whose I/O is
     * signalled on a thread of its own (IB: its completion-channel thread). Costs nothing when the agent is
     * not parked.
     */
    default void wakeAgent()
    {
    }
}
