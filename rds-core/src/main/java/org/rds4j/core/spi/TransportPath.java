package org.rds4j.core.spi;

import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;

/**
 * One live transport connection under a {@link ConnectionPath}. Agent thread only.
 */
public interface TransportPath
{
    /**
     * Sends what the connection has to send: pulls frames with
     * {@link ConnectionPath#fillTransmit} and reports them with
     * {@link ConnectionPath#onTransmitted}, as far as the transport has room.
     *
     * @return the number of frames fully sent.
     */
    int transmit();

    /**
     * @return true if the transport knows from its connection set-up that the peer is kernel RDS and takes no
     *         handshake frames on this transport (IB: Linux 6.1 warns on every probe and faults on a changed
     *         generation). The connection then sends no probe and no handshake extensions, and its heartbeat
     *         asks for an ack instead. Asked once, when the connection comes up.
     */
    default boolean peerIsKernel()
    {
        return false;
    }

    /**
     * For a peer that sends no RDS acks (the kernel's rds_tcp, which counts what TCP acked as delivered):
     * from now on, report each sequenced frame with {@link ConnectionPath#onPeerAck} once the
     * transport knows the peer's host has it; {@code false} stops the reports.
     *
     * @param on start or stop.
     * @return true if the path reports them; false if the transport cannot tell (the connection then keeps
     *         waiting for RDS acks).
     */
    default boolean reportTransportAcks(final boolean on)
    {
        return false;
    }

    /**
     * The connection is about to drop this path for a fault that is not the peer's misbehaviour (a failed
     * write, a stale path, a restart), or to judge its peer silent: hand every frame that has already arrived to
     * the connection first, as reads do. A kernel peer over TCP counts what TCP acked as delivered, so bytes left
     * unread would be lost. The path may fail while draining; it must not call this recursively.
     */
    default void drainReceived()
    {
    }

    /**
     * Appends a whole frame, its header written here from the given fields, to memory the transport sends from
     * (a sending thread that holds the duty cycle writes its message once, where it is sent from). Appended
     * frames go to the peer, in order, at {@link #flushAppended}, or at a {@link #transmit} that finds no frame
     * appended since the one before; frames from {@link ConnectionPath#fillTransmit} go after them. An appended
     * frame's bytes stay readable at its position ({@link #readAppended}) until the peer has acked it on this path
     * or the path is closed.
     *
     * @param sequence the frame's sequence number.
     * @param ack      the cumulative ack it carries.
     * @param flags    its {@code FLAG_*} bits.
     * @param sport    source port.
     * @param dport    destination port.
     * @param payload  the payload, from its position; left as it is.
     * @param length   payload bytes.
     * @return the frame's position, or -1 if the path cannot take it now (the caller queues the message as
     *         before); a transport that cannot append always returns -1.
     */
    default long append(final long sequence, final long ack, final int flags, final int sport, final int dport,
        final ByteBuffer payload, final int length)
    {
        return -1;
    }

    /**
     * @return whether {@link #append} can take frames on this path at all (for as long as it lives): false for a
     *         transport that has no memory to append to, or a path whose frames are tracked one by one.
     */
    default boolean appends()
    {
        return false;
    }

    /** Sends the appended frames now, as far as the socket takes them (the rest as a partial write does). */
    default void flushAppended()
    {
    }

    /** @return bytes of frames appended and not yet flushed. */
    default int appendedBytes()
    {
        return 0;
    }

    /**
     * Copies an appended frame, header and payload, out of the transport's memory: for its retransmission after
     * this path went down, before it is closed.
     *
     * @param position the frame's position, as {@link #append} returned it.
     * @param length   the frame's bytes, header included.
     * @param dst      where to copy it.
     * @param offset   where in {@code dst}.
     */
    default void readAppended(final long position, final int length, final MutableDirectBuffer dst,
        final int offset)
    {
        throw new UnsupportedOperationException("this transport appends no frames");
    }

    /** Closes the path without reporting it to the connection. Idempotent. */
    void close();
}
