package org.rds4j.transport.ib;

import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportContext;
import org.rds4j.core.spi.TransportFactory;

/**
 * Registers RDS over IB with every stack (ServiceLoader). Without libibverbs/librdmacm, or on an ABI mismatch,
 * the transport it creates serves no address and says why at bind.
 */
public final class IbTransportFactory implements TransportFactory
{
    /** Created by {@link java.util.ServiceLoader}. */
    public IbTransportFactory()
    {
    }

    @Override
    public Transport create(final TransportContext context)
    {
        return new IbTransport(context);
    }
}
