package org.rds4j.core.spi;

/**
 * The stack's verdict on an incoming connection ({@link TransportContext#admitIncoming}). A refusal has been
 * counted and logged already; the transport closes or rejects the connection before making any state for it.
 */
public enum Admission
{
    /** The connection may go on to the transport's own rules. */
    ADMITTED,

    /** The peer is outside {@code allowedPeers} ({@code conn_refused_not_allowed}). */
    NOT_ALLOWED,

    /**
     * The node pair connected more than {@code peerConnectRate} times in a second, and is refused for a while
     * ({@code conn_refused_rate}).
     */
    RATE_LIMITED,

    /** A new node pair while the stack has {@code maxPeers} of them ({@code conn_refused_limit}). */
    PEER_LIMIT
}
