package org.rds4j.core;

/** The states of a connection, as the kernel's {@code RDS_CONN_*}. */
public enum ConnectionState
{
    /** No transport connection; messages queue. */
    DOWN,
    /** The transport is establishing a connection. */
    CONNECTING,
    /** Frames flow. */
    UP,
    /** Tearing down: unacked messages go back to the send queue. */
    DISCONNECTING,
    /** The transport failed; passes to DISCONNECTING at once. */
    ERROR
}
