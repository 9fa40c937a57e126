package org.rds4j.core.spi;

import org.rds4j.RdsException;
import org.rds4j.TransportType;

import java.net.InetAddress;

/**
 * A way to carry RDS frames between two nodes, as the kernel's {@code struct rds_transport}. The generic
 * layer owns connections, sequencing, acks and congestion; a transport only moves frames and reports
 * connection events.
 * <p>
 * Threading: {@link #addLocalAddress} is called on application threads (at bind) and must be thread safe;
 * every other method is called on the stack's agent thread only.
 */
public interface Transport extends AutoCloseable
{
    /** @return short name used in logs and connection listings, e.g. {@code tcp}. */
    String name();

    /** @return the type a socket asks for with {@link org.rds4j.RdsOptions#RDS_TRANSPORT}; null for one sockets cannot choose (loopback). */
    TransportType type();

    /**
     * @param local a local address.
     * @return true if this transport can serve it (the kernel's {@code laddr_check}); used to pick a
     *         transport for {@link TransportType#AUTO}. Must not have side effects.
     */
    boolean canServe(InetAddress local);

    /**
     * @param local an address {@link #canServe} refused.
     * @return why this transport cannot serve it (for the {@code EADDRNOTAVAIL} message of a socket that
     *         asked for this transport), or null for the generic message. Must not have side effects.
     */
    default String unavailableReason(final InetAddress local)
    {
        return null;
    }

    /**
     * Prepares to serve a local address (for TCP: listen on it). Idempotent. Called at bind.
     *
     * @param local the address a socket binds.
     * @throws RdsException {@code EADDRNOTAVAIL} if the address cannot be served, {@code EADDRINUSE} if a
     *                      resource it needs (a listening port) is taken.
     */
    void addLocalAddress(InetAddress local) throws RdsException;

    /**
     * @return true if a new connection starts with the handshake probe that tells each side the other's
     *         generation (a peer on another node can restart); false for a transport whose peer is this stack.
     */
    default boolean startsWithHandshake()
    {
        return true;
    }

    /** @return true if every header this transport sends carries a checksum. */
    boolean checksumsHeaders();

    /**
     * Starts establishing a connection; must not block. Later the transport calls
     * {@link ConnectionPath#onConnected(TransportPath)} or {@link ConnectionPath#onConnectFailed(String)}.
     *
     * @param connection {@link ConnectionPath#isConnecting() connecting}.
     */
    void connect(ConnectionPath connection);

    /**
     * Does pending I/O: accepts, connect completions, reads (handing frames to
     * {@link ConnectionPath#onFrame}), writes that were waiting for room.
     *
     * @param nowNs the agent's clock: the stack's {@code StackOptions.nanoClock()}, {@link System#nanoTime()} by
     *              default.
     * @return the amount of work done, 0 if none.
     */
    int doWork(long nowNs);

    /**
     * Agent: the latest time at which the agent must run a duty cycle for this transport when no I/O, no
     * application call and no {@link TransportContext#wakeAgent()} wakes it first: when a timeout of its own
     * expires or something must be polled. The agent's idle wait is never shorter than 1 ms for it.
     *
     * @param nowNs the agent's clock.
     * @return a {@link System#nanoTime()} deadline; {@code nowNs} (the default) while the transport must be
     *         polled, {@link #NO_DEADLINE} when it has nothing pending at all.
     */
    default long idleDeadlineNs(final long nowNs)
    {
        return nowNs;
    }

    /** {@link #idleDeadlineNs} of a transport that waits for nothing but I/O and the application. */
    long NO_DEADLINE = Long.MAX_VALUE;

    /**
     * @return a way for the agent to wait for this transport's I/O when idle, or null if the transport has no
     *         blocking wait (the agent then parks for bounded periods and polls).
     */
    default IdleWaiter idleWaiter()
    {
        return null;
    }

    /**
     * Breaks every live path as a network fault would (TCP: a reset; IB: the queue pair is disconnected); the
     * connections see their paths go down, reconnect and retransmit. For fault tests and tools. Any thread;
     * takes effect on the agent's next duty cycle.
     */
    void abortAll();

    /** Closes listeners and every path. */
    @Override
    void close();
}
