package org.rds4j.core.spi;

/**
 * Creates a stack's instance of a transport. Found with {@link java.util.ServiceLoader}: a transport module
 * lists its factory in {@code META-INF/services/org.rds4j.core.spi.TransportFactory}.
 */
public interface TransportFactory
{
    /**
     * @param context the stack's side of the SPI.
     * @return a transport for that stack; it does no I/O until the stack calls it.
     */
    Transport create(TransportContext context);
}
