package org.rds4j.core.spi;

/**
 * One live transport connection under a {@link org.rds4j.core.Connection}. Agent thread only.
 */
public interface TransportPath
{
    /**
     * Sends what the connection has to send: pulls frames with
     * {@link org.rds4j.core.Connection#fillTransmit} and reports them with
     * {@link org.rds4j.core.Connection#onTransmitted}, as far as the transport has room.
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
     * from now on, report each sequenced frame with {@link org.rds4j.core.Connection#onPeerAck} once the
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

    /** Closes the path without reporting it to the connection. Idempotent. */
    void close();
}
