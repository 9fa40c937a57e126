package org.rds4j.core.spi;

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
     * write, a stale path, a restart): hand every frame that has already arrived to the connection first, as
     * reads do. A kernel peer over TCP counts what TCP acked as delivered, so bytes left unread would be lost.
     * The path may fail while draining; it must not call this recursively.
     */
    default void drainReceived()
    {
    }

    /** Closes the path without reporting it to the connection. Idempotent. */
    void close();
}
