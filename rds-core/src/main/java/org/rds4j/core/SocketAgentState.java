package org.rds4j.core;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The agent's side of a socket, kept apart from the application-facing {@link RdsSocketImpl}: whether its
 * port is marked congested, whom the duty cycle must wake at its end, and the socket's connections.
 * <p>
 * Threads: the agent only, except {@link #congested}, which application threads read.
 */
final class SocketAgentState
{
    /**
     * Written by the agent ({@link Congestion}): the socket's port is marked congested in its endpoint's map.
     * Application threads read it to wake the agent when they drain the receive queue below half.
     */
    volatile boolean congested;

    /** Agent only: wake the socket's blocked senders at the end of the duty cycle. */
    boolean wakeSendersPending;
    /** Agent only: wake its blocked receivers then. Either flag set means the socket is on the agent's list. */
    boolean wakeReceiversPending;

    /**
     * Agent only, within one transport batch (a TCP read, an IB poll, a loopback transmit): the run of frames open
     * in the socket's receive ring (docs/receive-runs.md), its sender and frames (0: none open; the ring knows their
     * bytes); and whether the socket is on the agent's list of sockets whose runs close at the batch's end. A driver's
     * socket has its run written past its queue by its session instead ({@link DriverSession.Entry#openPastRun}).
     */
    InetSocketAddress runSender;
    int runFrames;
    DriverSession.Entry pastRun;
    boolean runListed;

    /** Agent only, within one ack: the socket is on the agent's list of sockets whose acked bytes are to be freed. */
    boolean ackedPending;
    /** Agent only, within one ack: the bytes of its messages the ack recycled, not yet freed from its send buffer. */
    long ackedBytes;

    /** Agent only: connections by remote address, and the last one used (most sockets talk to one peer at a time). */
    private final Map<InetAddress, Connection> connections = new HashMap<>();
    private InetAddress lastRemote;
    private Connection lastConnection;

    /**
     * Agent only: the connection from a socket to a remote node, cached per socket.
     *
     * @param remote the remote address.
     * @param socket the socket this is the state of.
     * @param agent  creates the connection if the socket has not used it yet.
     * @return the connection.
     */
    Connection connectionTo(final InetAddress remote, final RdsSocketImpl socket, final StackAgent agent)
    {
        if (remote == lastRemote)
        {
            return lastConnection;
        }
        Connection connection = connections.get(remote);
        if (connection == null)
        {
            connection = agent.connection(socket.endpoint(), remote, socket.transport());
            connections.put(remote, connection);
        }
        lastRemote = remote;
        lastConnection = connection;
        return connection;
    }
}
