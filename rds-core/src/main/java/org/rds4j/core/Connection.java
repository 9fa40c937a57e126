package org.rds4j.core;

import org.rds4j.core.spi.Addresses;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * The RDS connection of one node pair on one transport (the kernel's {@code rds_connection}), shared by every
 * socket of the stack: the addresses, the transport, the peer's congestion map, the receive path and the
 * {@link ConnPath paths} that carry it. Sequencing, acks, retransmission, the handshake and the state are per
 * path; rds4j offers one path per connection today, so every message goes on path 0.
 * <p>
 * Agent thread only, except {@link #state()} and the sequence getters for the info snapshot.
 */
final class Connection
{
    private final PathHost host;
    /** The local address's endpoint: its bound sockets and congestion map. */
    final LocalEndpoint local;
    private final InetAddress remote;
    private final Transport transport;
    private final CongestionMap peerMap;
    private final ConnPath[] paths;

    /**
     * @param host      the stack.
     * @param local     the local address's endpoint.
     * @param remote    the peer's address.
     * @param transport the transport carrying it.
     * @param peerMap   the peer's congestion map, shared by every connection to the peer.
     */
    Connection(
        final PathHost host,
        final LocalEndpoint local,
        final InetAddress remote,
        final Transport transport,
        final CongestionMap peerMap)
    {
        this.host = host;
        this.local = local;
        this.remote = remote;
        this.transport = transport;
        this.peerMap = peerMap;
        final FrameReceiver receiver = new FrameReceiver(host, this);
        this.paths = new ConnPath[] {new ConnPath(host, this, receiver)};
    }

    /** @return the local address of the node pair. */
    InetAddress localAddress()
    {
        return local.address;
    }

    /** @return the peer's address. */
    InetAddress remoteAddress()
    {
        return remote;
    }

    /** @return the transport carrying this connection. */
    Transport transport()
    {
        return transport;
    }

    /** @return the peer's congestion map. */
    CongestionMap peerMap()
    {
        return peerMap;
    }

    /**
     * @param index the path's number, from 0.
     * @return the path.
     */
    ConnPath path(final int index)
    {
        return paths[index];
    }

    /** @return the state of path 0, the one every message takes today; any thread may read it. */
    ConnectionState state()
    {
        return paths[0].state();
    }

    /** @return path 0's next sequence to send. */
    long nextTxSequence()
    {
        return paths[0].sender().nextTxSequence();
    }

    /** @return path 0's next sequence expected. */
    long nextRxSequence()
    {
        return paths[0].acks().nextRxSequence();
    }

    /** @return the messages queued or unacked on every path. */
    int queuedMessages()
    {
        int queued = 0;
        for (final ConnPath path : paths)
        {
            queued += path.sender().queuedMessages();
        }
        return queued;
    }

    /**
     * The connect rule of the kernel: of two nodes the one with the lower address connects, so that they do not
     * race; the higher one waits unless it has data to send. A loopback connection's both ends are this stack.
     *
     * @return true if this side connects again after a path went down.
     */
    boolean initiatesReconnect()
    {
        return host.isLoopback(transport) || Addresses.compare(local.address, remote) < 0;
    }

    /** See {@link ConnPath#append}. */
    int append(final RdsSocketImpl socket, final ByteBuffer payload, final int length, final int sport,
        final int dport, final int flags)
    {
        return paths[0].append(socket, payload, length, sport, dport, flags);
    }

    /** See {@link ConnPath#appends}. */
    int appends()
    {
        return paths[0].appends();
    }

    /** See {@link ConnPath#flushAppended}. */
    void flushAppended()
    {
        paths[0].flushAppended();
    }

    /**
     * Appends a message to the send queue of its path.
     *
     * @param message the message.
     */
    void enqueue(final Message message)
    {
        paths[0].sender().enqueue(message);
    }

    /**
     * Removes a socket's unacked messages from every path, to one port or all (see {@link PathSender#cancel}).
     *
     * @param socket the owner.
     * @param dport  the destination port, or -1 for every port.
     * @return how many messages were dropped.
     */
    int cancel(final RdsSocketImpl socket, final int dport)
    {
        int dropped = 0;
        for (final ConnPath path : paths)
        {
            dropped += path.cancel(socket, dport);
        }
        return dropped;
    }

    /**
     * Agent duty of every path: connects when due, transmits when up.
     *
     * @param nowNs the time.
     * @return work done.
     */
    int doWork(final long nowNs)
    {
        int work = 0;
        for (final ConnPath path : paths)
        {
            work += path.doWork(nowNs);
        }
        return work;
    }

    /**
     * @param nowNs the time.
     * @return the earliest of the paths' idle deadlines ({@link ConnPath#idleDeadlineNs}).
     */
    long idleDeadlineNs(final long nowNs)
    {
        long deadline = Transport.NO_DEADLINE;
        for (final ConnPath path : paths)
        {
            deadline = Math.min(deadline, path.idleDeadlineNs(nowNs));
        }
        return deadline;
    }

    /**
     * Drops every path's transport connection, as a failure: they reconnect.
     *
     * @param reason for the log.
     */
    void drop(final String reason)
    {
        for (final ConnPath path : paths)
        {
            path.drop(reason);
        }
    }

    /** Closes every path and frees every queued message; the stack is closing. */
    void close()
    {
        for (final ConnPath path : paths)
        {
            path.close();
        }
    }

    @Override
    public String toString()
    {
        return paths[0].toString();
    }
}
