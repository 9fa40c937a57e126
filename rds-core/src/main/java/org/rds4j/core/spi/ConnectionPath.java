package org.rds4j.core.spi;

import org.agrona.DirectBuffer;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * What a transport sees of the generic layer for one path of an RDS connection (the kernel's
 * {@code rds_conn_path}): the node pair, the connection events a transport reports, the frames it hands in
 * and the frames it pulls to send. The generic layer owns sequencing, acks, retransmission and the handshake;
 * the transport moves frames. Agent thread only.
 */
public interface ConnectionPath
{
    /** @return the local address of the node pair. */
    InetAddress localAddress();

    /** @return the peer's address. */
    InetAddress remoteAddress();

    /** @return true while the generic layer waits for this transport's connect to finish. */
    boolean isConnecting();

    /** @return true while a transport path is up. */
    boolean isUp();

    // ---------------------------------------------------------------- connection events

    /**
     * The transport established the connection.
     *
     * @param path the live transport connection.
     */
    void onConnected(TransportPath path);

    /**
     * An attempt to connect failed; another follows after the backoff delay (if this side connects).
     *
     * @param reason for the log.
     */
    void onConnectFailed(String reason);

    /**
     * A live path failed or was closed by the peer; it is torn down, unacked messages are queued for
     * retransmission and a reconnect is scheduled.
     *
     * @param failed the path that failed; ignored if it is no longer this connection's path.
     * @param reason for the log.
     */
    void onPathDown(TransportPath failed, String reason);

    /**
     * As {@link #onPathDown}, for a peer that broke the protocol or went silent (a bad frame, a frame left
     * incomplete): the one log line is a warning.
     *
     * @param failed the path that failed; ignored if it is no longer this connection's path.
     * @param reason what the peer did, for the log.
     */
    void onPeerMisbehaved(TransportPath failed, String reason);

    /** The peer asked to be connected to (a TCP poke from a higher address): connect now if down. */
    void connectIfDown();

    /**
     * Drops the current path if any, as a path failure: unacked messages requeued, reconnect scheduled.
     *
     * @param reason for the log.
     */
    void drop(String reason);

    /**
     * The peer opened a new connection for this pair while this side's path is up (TCP: a connection from the
     * lower address; IB: a connect request). The peer connects only when it has no connection, so ours is
     * stale (its reset was lost, or the peer restarted): it is dropped as by {@link #drop}, with the reason
     * "the peer connected again". What becomes of the newcomer is the transport's rule.
     */
    void onPeerConnectedAgain();

    // ---------------------------------------------------------------- frames

    /**
     * A transport received a complete frame that passed {@link org.rds4j.core.wire.RdsHeader#validate}.
     *
     * @param buffer holds the frame.
     * @param offset of its header; the payload follows it.
     */
    void onFrame(DirectBuffer buffer, int offset);

    /**
     * As {@link #onFrame}, for a frame of a batch (TCP: the frames of one read; IB: one poll of the completion
     * queue; the loopback path: one transmit) that the transport ends with {@link #onBatchEnd} and keeps where it is,
     * unchanged, until then: the stack may copy it only then, with the frames that follow it in the buffer, and
     * queues it with the socket's other frames of the batch as one record.
     *
     * @param buffer holds the frame.
     * @param offset of its header; the payload follows it.
     */
    void onBatchFrame(DirectBuffer buffer, int offset);

    /** The batch of frames given to {@link #onBatchFrame} has ended: the stack has queued every one on return. */
    void onBatchEnd();

    /**
     * Gives the transport the frames to send next, in order, each positioned from its first unsent byte: the
     * frame it was part way through first.
     *
     * @param frames where to put them.
     * @param max    most frames to give.
     * @return the number of frames put in {@code frames}, from index 0.
     */
    int fillTransmit(ByteBuffer[] frames, int max);

    /**
     * Tells how far a write of frames from {@link #fillTransmit} went: frames with nothing remaining are done;
     * the first with bytes remaining is resumed by the next fill.
     *
     * @param frames the array given to {@link #fillTransmit}; its entries are cleared.
     * @param count  the count it returned.
     * @return the number of frames completed.
     */
    int onTransmitted(ByteBuffer[] frames, int count);

    /**
     * An ack the peer gave outside a frame (IB carries it in its connect private data; a path counting
     * transport acks reports them here). Applied as a received frame's ack is.
     *
     * @param ack the peer's cumulative ack.
     */
    void onPeerAck(long ack);

    /**
     * Asks for an ack-only frame on the next {@link #fillTransmit} after the handshake, even if no ack is due,
     * unless a data frame goes first: for a transport that must send something of its own in a header (IB: a
     * credit update). One frame however often it is asked before it is sent.
     */
    void requestControlFrame();

    /** @return the cumulative ack this side would send now: the highest sequence received, 0 if none. */
    long ackSequence();

    /**
     * For a transport that must know how far the peer has read what it wrote on the current path (TCP lends its
     * send pages to the socket, and may reuse one only once the peer has read it).
     *
     * @return the highest sequence the peer has acked that was first sent on the current path; 0 if none yet.
     */
    long sequenceReadOnPath();

    /**
     * The transport began sending the frames appended so far ({@link TransportPath#flushAppended}): they count as
     * sent, as frames staged from {@link #fillTransmit} do.
     *
     * @param lastSequence the sequence of the last of them.
     */
    void onAppendedFlushed(long lastSequence);
}
