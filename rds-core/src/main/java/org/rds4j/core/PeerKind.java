package org.rds4j.core;

/** What a path knows of the RDS implementation at the other end, which decides the kernel-interop rules. */
enum PeerKind
{
    /** A peer that sends RDS acks and takes handshake frames: rds4j, or one not known yet. */
    RDS_ACKS,
    /**
     * Kernel RDS over TCP (its handshake carries no generation): it sends no RDS acks and counts what TCP acked
     * as delivered, and the path reports transport acks as RDS acks. It is sent no ack-only frame (it would take
     * its sequence 0 as the next in sequence and deliver our retransmissions again) and no handshake probe on a
     * later connection (which would move its next expected sequence back to 1).
     */
    KERNEL_TRANSPORT_ACKED,
    /**
     * Kernel RDS that the transport recognised at connect time and that takes no handshake frames on it (IB:
     * Linux 6.1 warns on every probe and faults on a changed generation): no probe, no handshake extensions;
     * a heartbeat is an empty message to port 1 that asks for an ack.
     */
    KERNEL_WITHOUT_PROBES
}
