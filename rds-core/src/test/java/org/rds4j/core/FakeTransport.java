package org.rds4j.core;

import org.rds4j.TransportType;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.Transport;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/** A transport for connection-path tests: records connect requests; the test completes them. */
final class FakeTransport implements Transport
{
    final List<ConnectionPath> connects = new ArrayList<>();
    private final boolean handshake;

    /** @param handshake whether its connections start with a handshake. */
    FakeTransport(final boolean handshake)
    {
        this.handshake = handshake;
    }

    @Override
    public String name()
    {
        return "fake";
    }

    @Override
    public TransportType type()
    {
        return null;
    }

    @Override
    public boolean canServe(final InetAddress local)
    {
        return false;
    }

    @Override
    public void addLocalAddress(final InetAddress local)
    {
    }

    @Override
    public boolean startsWithHandshake()
    {
        return handshake;
    }

    @Override
    public boolean checksumsHeaders()
    {
        return false;
    }

    @Override
    public void connect(final ConnectionPath connection)
    {
        connects.add(connection);
    }

    @Override
    public int doWork(final long nowNs)
    {
        return 0;
    }

    @Override
    public void abortAll()
    {
    }

    @Override
    public void close()
    {
    }
}
