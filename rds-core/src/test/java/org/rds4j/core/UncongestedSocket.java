package org.rds4j.core;

import java.net.InetSocketAddress;

/**
 * The socket of a {@link ReceiveQueue} alone (its tests, the JMH module's benchmark of it): a queue asks only whether
 * the socket's port is marked congested, on each take, and it never is; anything else is a mistake of the caller.
 */
final class UncongestedSocket implements Congestion.Member
{
    private final SocketAgentState state = new SocketAgentState();
    private final int receiveBufferBytes;

    /** @param receiveBufferBytes the socket's {@code SO_RCVBUF}. */
    UncongestedSocket(final int receiveBufferBytes)
    {
        this.receiveBufferBytes = receiveBufferBytes;
    }

    @Override
    public SocketAgentState agentState()
    {
        return state;
    }

    @Override
    public int receiveBufferBytes()
    {
        return receiveBufferBytes;
    }

    @Override
    public LocalEndpoint endpoint()
    {
        throw new UnsupportedOperationException();
    }

    @Override
    public InetSocketAddress localAddress()
    {
        throw new UnsupportedOperationException();
    }

    @Override
    public long receiveQueuedBytes()
    {
        throw new UnsupportedOperationException();
    }

    @Override
    public Congestion.Sender congestion()
    {
        throw new UnsupportedOperationException();
    }

    @Override
    public void wakeSenders()
    {
        throw new UnsupportedOperationException();
    }

    @Override
    public void notifyListener(final Notification notification)
    {
        throw new UnsupportedOperationException();
    }
}
