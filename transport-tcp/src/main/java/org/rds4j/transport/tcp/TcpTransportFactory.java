package org.rds4j.transport.tcp;

import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportContext;
import org.rds4j.core.spi.TransportFactory;

/** Registers {@link TcpTransport} with every stack. */
public final class TcpTransportFactory implements TransportFactory
{
    /** Created by {@link java.util.ServiceLoader}. */
    public TcpTransportFactory()
    {
    }

    @Override
    public Transport create(final TransportContext context)
    {
        return new TcpTransport(context);
    }
}
