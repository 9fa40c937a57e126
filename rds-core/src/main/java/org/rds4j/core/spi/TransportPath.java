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

    /** Closes the path without reporting it to the connection. Idempotent. */
    void close();
}
