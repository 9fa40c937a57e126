package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A pooled message: a direct buffer holding a header then the payload, and the bookkeeping of its trip.
 * Outbound, it is owned by its socket's queue, then by a connection's {@link SendQueue} until acked or
 * cancelled; inbound, by the receiving socket until the application has taken it.
 * <p>
 * An outbound message whose bytes are a record of its socket's {@link SendRing} is a message of the class
 * {@link MessagePool#RECORD}: it has no memory of its own, and its frame and buffer are pointed at the record
 * when it is taken from the pool ({@link #pointAt}).
 */
final class Message
{
    private static final byte[] NO_BYTES = new byte[0];

    final int sizeClass;
    /** Header at 0, payload at {@link RdsHeader#LENGTH}; position/limit frame what a transport writes. */
    ByteBuffer frame;
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
    /** Outbound, a {@link MessagePool#RECORD}: the ring holding its bytes, and the record's position. */
    SendRing ring;
    long ringPosition;

    /**
     * @param sizeClass the pool's size class.
     * @param frame     direct memory for the header and up to the class's payload capacity, position 0.
     */
    Message(final int sizeClass, final ByteBuffer frame)
    {
        this.sizeClass = sizeClass;
        this.frame = frame;
        this.buffer = frame != null ? new UnsafeBuffer(frame) : new UnsafeBuffer(NO_BYTES);
        this.payloadView = frame != null ? frame.asReadOnlyBuffer() : null;
        this.claimView = frame != null ? frame.duplicate() : null;
    }

    /**
     * A {@link MessagePool#RECORD} message takes a ring record as its frame.
     *
     * @param ring     the socket's send ring.
     * @param position the record's position, claimed for header and payload.
     */
    void pointAt(final SendRing ring, final long position)
    {
        this.ring = ring;
        this.ringPosition = position;
        frame = ring.view(position);
        buffer.wrap(frame);
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
        final ByteBuffer view = ring != null ? frame : claimView; // a record's view is its own until freed
        view.limit(RdsHeader.LENGTH + payloadLength).position(RdsHeader.LENGTH);
        return view;
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
        if (ring != null)
        {
            ring = null;
            frame = null; // the pool must not keep the ring's memory, which may be unmapped
            buffer.wrap(NO_BYTES);
        }
    }
}
