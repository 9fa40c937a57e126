package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A pooled message: a direct buffer holding a header then the payload, and the bookkeeping of its trip.
 * Outbound, it is owned by its socket's send ring or queue, then by a connection's {@link SendQueue} until acked or
 * cancelled; inbound, by the receiving socket until the application has taken it.
 * <p>
 * An outbound message whose bytes are a record of its socket's {@link SendRing} belongs to the ring, not the
 * pool: the ring keeps one per 64-byte slot where a record has started, its frame a view of the ring from that
 * slot, and hands it to the record that starts there next.
 */
final class Message
{
    final int sizeClass;
    /** Header at 0, payload at {@link RdsHeader#LENGTH}; position/limit frame what a transport writes. */
    final ByteBuffer frame;
    final UnsafeBuffer buffer;
    private final ByteBuffer payloadView;
    /** Outbound, claimed ({@link org.rds4j.RdsClaim}): the application writes the payload through it. */
    private final ByteBuffer claimView;

    int payloadLength;
    int sport;
    int dport;
    int flags;
    long sequence;
    /** Outbound: the sending socket, null for stack-generated messages (pongs). */
    RdsSocketImpl socket;
    /** Outbound: where it goes. */
    InetSocketAddress destination;
    /** Outbound: the ack-required decision was taken for this transmission. */
    boolean stamped;
    /** Outbound: cancelled while a transport was part way through writing it. */
    boolean cancelled;
    /** Inbound: where it came from. */
    InetSocketAddress sender;
    /** A ring's message: the ring holding its bytes (else null), and the record's position. */
    final SendRing ring;
    long ringPosition;
    /**
     * Outbound, handed to the stack outside its socket's send ring (spilled, or a claim): the ring's tail at the
     * hand-over; the stack takes it once it has read the ring to there ({@link SendRing#readPosition}).
     */
    long mark;

    /**
     * @param sizeClass the pool's size class.
     * @param frame     direct memory for the header and up to the class's payload capacity, position 0.
     */
    Message(final int sizeClass, final ByteBuffer frame)
    {
        this(sizeClass, frame, null);
    }

    /**
     * @param ring  the send ring whose slot this message's frame starts at.
     * @param frame a view of the ring from the slot to its end.
     */
    Message(final SendRing ring, final ByteBuffer frame)
    {
        this(-1, frame, ring);
    }

    private Message(final int sizeClass, final ByteBuffer frame, final SendRing ring)
    {
        this.sizeClass = sizeClass;
        this.frame = frame;
        this.ring = ring;
        this.buffer = new UnsafeBuffer(frame);
        // a ring's message is never inbound, and its frame, a view of its own, can be its claim's view
        this.payloadView = ring == null ? frame.asReadOnlyBuffer() : null;
        this.claimView = ring == null ? frame.duplicate() : frame;
    }

    /** @return the payload as a read-only buffer; valid until the message is released. */
    ByteBuffer payload()
    {
        payloadView.limit(RdsHeader.LENGTH + payloadLength).position(RdsHeader.LENGTH);
        return payloadView;
    }

    /** @return a writable view positioned at the payload, its limit at the payload's end; valid until released. */
    ByteBuffer claimedPayload()
    {
        claimView.limit(RdsHeader.LENGTH + payloadLength).position(RdsHeader.LENGTH);
        return claimView;
    }

    /** Frames header and payload for a transport to write from the start. */
    void rewind()
    {
        frame.limit(RdsHeader.LENGTH + payloadLength).position(0);
    }

    void reset()
    {
        payloadLength = 0;
        sport = 0;
        dport = 0;
        flags = 0;
        sequence = 0;
        socket = null;
        destination = null;
        stamped = false;
        cancelled = false;
        sender = null;
    }
}
