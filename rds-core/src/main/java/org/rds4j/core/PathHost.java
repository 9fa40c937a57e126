package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * What a connection path needs of its stack ({@link StackAgent} implements it; its methods are public only as an interface's must be, the class is not), so that a path can be driven
 * by a test with fake time and a fake transport. Agent thread only.
 */
interface PathHost
{
    /** @return the clock read at the start of this duty cycle. */
    long nowNs();

    /** @return the number of the current duty cycle. */
    long cycle();

    /** @return the stack's counters. */
    StackCounters counters();

    /** @return the stack's configuration: timeouts, heartbeat, ack delay, reconnect delays. */
    RdsStackConfig config();

    /** @return this stack's generation number, random and non-zero. */
    int generation();

    /** @return the pool control messages (pongs, heartbeats) come from. */
    MessagePool pool();

    /**
     * Returns a message to the pool without touching its socket's send buffer (a cancelled or control message).
     *
     * @param message the message.
     */
    void releaseMessage(Message message);

    /**
     * Recycles an acked or flushed message, then frees its bytes from its socket's send buffer.
     *
     * @param message the message.
     */
    void releaseSent(Message message);

    /**
     * Recycles a message an ack covers; its bytes are freed from its socket's send buffer by the
     * {@link #releaseAckedDone()} that ends the ack, together with those of the socket's other messages it covers.
     *
     * @param message the message.
     */
    void releaseAcked(Message message);

    /** The ack is applied: frees the bytes of the messages {@link #releaseAcked} recycled, one update per socket. */
    void releaseAckedDone();

    /**
     * Frees a message's bytes from its socket's send buffer (the message stays where it is).
     *
     * @param message the message.
     */
    void releaseBytes(Message message);

    /**
     * Frees bytes of frames a sending thread appended to a transport (acked, cancelled or dropped) from their
     * socket's send buffer, waking its senders.
     */
    void releaseAppendedBytes(RdsSocketImpl socket, long bytes);

    /**
     * @param transport a transport.
     * @return true if it is the stack's loopback transport.
     */
    boolean isLoopback(Transport transport);

    /**
     * A path of the connection came up: tells the sockets of its local address.
     *
     * @param connection the connection.
     */
    void onPeerUp(Connection connection);

    /**
     * A path of the connection went down: tells the sockets of its local address.
     *
     * @param connection the connection.
     */
    void onPeerDown(Connection connection);

    /**
     * Hands a received payload to a bound socket.
     *
     * @param socket the socket bound to the frame's destination port.
     * @param sender the peer's address and sending port.
     * @param buffer holds the payload.
     * @param offset of the payload; its frame's RDS header lies before it.
     * @param length of the payload.
     * @param batched the frame is one of a batch the transport ends with {@link #batchEnd} and keeps in place until
     *                then: the stack may copy and queue it then, with the socket's other frames of the batch; else
     *                it is queued before this returns.
     */
    void deliver(
        RdsSocketImpl socket, InetSocketAddress sender, DirectBuffer buffer, int offset, int length, boolean batched);

    /** A transport's batch of frames has ended: every frame of it is queued when this returns. */
    void batchEnd();

    /**
     * A message came for a port of {@code endpoint} with no socket in its table: the socket an application thread
     * bound to it if its bind is still on its way to the stack (put into the table now), else null.
     *
     * @param endpoint the local address.
     * @param port     the port.
     * @return the socket, or null.
     */
    RdsSocketImpl boundFor(LocalEndpoint endpoint, int port);

    /**
     * The peer sent its congestion map.
     *
     * @param peer    the peer's address.
     * @param peerMap the map kept for the peer.
     * @param buffer  holds the map.
     * @param offset  of the map.
     */
    void onPeerCongestionMap(InetAddress peer, CongestionMap peerMap, DirectBuffer buffer, int offset);
}
