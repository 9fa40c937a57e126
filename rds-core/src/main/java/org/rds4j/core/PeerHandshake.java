package org.rds4j.core;

import org.rds4j.core.spi.TransportPath;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handshake's memory of the peer, kept across the path's transport connections: its generation number
 * (a changed one is a restarted process) and its {@link PeerKind}. Agent thread only.
 * <p>
 * Every new transport connection starts with a handshake: after the congestion map each side sends a probe
 * (port 1 to port 0, unsequenced) carrying its generation number, and sends nothing else until the peer's
 * probe, or a pong to port 1, tells the peer's generation. A handshake without a generation comes from kernel
 * RDS.
 */
final class PeerHandshake
{
    private static final Logger LOG = LoggerFactory.getLogger(PeerHandshake.class);

    private final Object owner;
    private PeerKind kind = PeerKind.RDS_ACKS;
    /** The peer's generation number; 0 until a handshake tells it. */
    private int peerGeneration;

    /** @param owner the path, for the log. */
    PeerHandshake(final Object owner)
    {
        this.owner = owner;
    }

    /** @return what is known of the peer. */
    PeerKind kind()
    {
        return kind;
    }

    /**
     * A transport connection came up: settles the peer kind for it.
     *
     * @param path                the new transport connection.
     * @param transportHandshakes the transport starts its connections with a handshake.
     * @return true if this connection needs a handshake before data: a transport that has one, a peer that takes
     *         probes, and not a kernel peer already known to count transport acks.
     */
    boolean onPathUp(final TransportPath path, final boolean transportHandshakes)
    {
        if (path.peerIsKernel())
        {
            kind = PeerKind.KERNEL_WITHOUT_PROBES;
            LOG.info("{}: the transport says the peer is kernel RDS: no handshake; heartbeats ask for an ack", owner);
        }
        else if (kind == PeerKind.KERNEL_WITHOUT_PROBES ||
            (kind == PeerKind.KERNEL_TRANSPORT_ACKED && !path.reportTransportAcks(true)))
        {
            kind = PeerKind.RDS_ACKS;
        }
        return transportHandshakes && kind == PeerKind.RDS_ACKS;
    }

    /**
     * A probe or its pong told the peer's generation (0 if it carries none, as the kernel's 6.1 probes).
     *
     * @param generation the generation it carries.
     * @return the generation the peer had before if this one says it restarted, else 0.
     */
    int onGeneration(final int generation)
    {
        final int previous = peerGeneration;
        if (generation != 0)
        {
            peerGeneration = generation;
        }
        return previous != 0 && generation != 0 && generation != previous ? previous : 0;
    }

    /**
     * While a transport connection is up, a handshake tells the ack rule: one without a generation comes from
     * kernel RDS, which over TCP sends no RDS acks, so its delivery rule (what TCP acked is delivered) is applied
     * if the path can tell; one with a generation comes from a peer that acks. A peer the transport recognised
     * as kernel keeps the transport's rule.
     *
     * @param generation the generation the handshake carries.
     * @param path       the live transport connection.
     */
    void learnAckRule(final int generation, final TransportPath path)
    {
        if (kind == PeerKind.KERNEL_WITHOUT_PROBES)
        {
            return;
        }
        final boolean noAcks = generation == 0;
        if (noAcks != (kind == PeerKind.KERNEL_TRANSPORT_ACKED) && (path.reportTransportAcks(noAcks) || !noAcks))
        {
            kind = noAcks ? PeerKind.KERNEL_TRANSPORT_ACKED : PeerKind.RDS_ACKS;
            LOG.info("{}: {}", owner, noAcks ?
                "the peer is kernel RDS (no generation in its handshake): messages count as delivered once the transport acked them" :
                "the peer sends RDS acks");
        }
    }
}
