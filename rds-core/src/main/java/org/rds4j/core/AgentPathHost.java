package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/** The stack agent as its connection paths see it: each call goes to the agent's own. Agent thread only. */
final class AgentPathHost implements PathHost
{
    private final StackAgent agent;

    /** @param agent the stack's agent. */
    AgentPathHost(final StackAgent agent)
    {
        this.agent = agent;
    }

    @Override
    public long nowNs()
    {
        return agent.nowNs();
    }

    @Override
    public long cycle()
    {
        return agent.cycle();
    }

    @Override
    public StackCounters counters()
    {
        return agent.counters;
    }

    @Override
    public RdsStackConfig config()
    {
        return agent.config;
    }

    @Override
    public int generation()
    {
        return agent.generation;
    }

    @Override
    public MessagePool pool()
    {
        return agent.pool;
    }

    @Override
    public void releaseMessage(final Message message)
    {
        agent.releaseMessage(message);
    }

    @Override
    public void releaseSent(final Message message)
    {
        agent.releaseSent(message);
    }

    @Override
    public void releaseBytes(final Message message)
    {
        agent.releaseBytes(message);
    }

    @Override
    public boolean isLoopback(final Transport transport)
    {
        return agent.isLoopback(transport);
    }

    @Override
    public void onPeerUp(final Connection connection)
    {
        agent.onPeerUp(connection);
    }

    @Override
    public void onPeerDown(final Connection connection)
    {
        agent.onPeerDown(connection);
    }

    @Override
    public void deliver(
        final RdsSocketImpl socket, final InetSocketAddress sender, final DirectBuffer buffer, final int offset,
        final int length)
    {
        agent.deliver(socket, sender, buffer, offset, length);
    }

    @Override
    public void onPeerCongestionMap(
        final InetAddress peer, final CongestionMap peerMap, final DirectBuffer buffer, final int offset)
    {
        agent.onPeerCongestionMap(peer, peerMap, buffer, offset);
    }
}
