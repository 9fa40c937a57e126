package org.rds4j.core;

/**
 * The states of a connection path, as the kernel's {@code RDS_CONN_*}; {@code ConnPath} lists their
 * transitions. The ordinals are the info file's encoding ({@code StackInfoFile}): a new state goes at the end.
 */
public enum ConnectionState
{
    /** No transport connection; messages queue. */
    DOWN,
    /** The transport is establishing a connection. */
    CONNECTING,
    /** Frames flow: the handshake is done (or the path needs none). */
    UP,
    /**
     * The transport connection is up and the handshake probe is out: only the congestion map and the probe go
     * until the peer's probe or pong tells its generation.
     */
    HANDSHAKE
}
