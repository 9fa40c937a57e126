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
     * Finds or creates the connection path for a node pair on a transport, for an incoming connection that
     * {@link #admitIncoming} admitted. From then on the pair counts toward {@code maxPeers} and passes that cap.
     *
     * @param local     a local address the transport serves.
     * @param remote    the peer's address.
     * @param transport the transport asking.
     * @return the connection, or null if no socket of this stack is bound to {@code local}.
     */
    ConnectionPath connection(InetAddress local, InetAddress remote, Transport transport);

    /**
     * The stack's admission rules for an incoming connection (an accepted TCP connection, an rdma_cm connect
     * request), to be asked before any state is made for it: the peer is in {@code allowedPeers}; the node
     * pair connects no more than {@code peerConnectRate} times a second (over it, the pair is refused for
     * 10 s); a new pair finds fewer than {@code maxPeers} pairs. A refusal is counted and logged here.
     *
     * @param local  the local address the connection came to.
     * @param remote the peer's address.
     * @param nowNs  the agent's clock, as given to {@link Transport#doWork}.
     * @return {@link Admission#ADMITTED}, or why the connection must be closed or rejected.
     */
    Admission admitIncoming(InetAddress local, InetAddress remote, long nowNs);

    /**
     * The stack's admission rule for a connect the transport is asked to make: the peer is in
     * {@code allowedPeers}. A refusal is counted and logged here; an allowed pair counts toward {@code maxPeers}.
     *
     * @param local  the local address the connect goes from.
     * @param remote the peer's address.
     * @return true if the connect may be made; if false the transport reports it failed.
     */
    boolean admitOutgoing(InetAddress local, InetAddress remote);

    /**
     * Any thread: ends the agent's idle wait so that it runs a duty cycle soon, for a transport whose I/O is
     * signalled on a thread of its own (IB: its completion-channel thread). Costs nothing when the agent is
     * not parked.
     */
    default void wakeAgent()
    {
    }
}
