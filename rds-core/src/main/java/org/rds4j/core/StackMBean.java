package org.rds4j.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * A stack's {@link RdsStackMXBean}, registered in the platform MBean server while the stack is open. It holds no
 * state of its own: every attribute is read from the stack when asked.
 */
final class StackMBean implements RdsStackMXBean
{
    private static final Logger LOG = LoggerFactory.getLogger(StackMBean.class);

    private final CoreStack stack;
    /** The name it is registered under; null if registration failed. */
    private volatile ObjectName objectName;

    private StackMBean(final CoreStack stack)
    {
        this.stack = stack;
    }

    /**
     * Registers a stack's MBean under the first free {@link RdsStackMXBean#objectName} of its name. A stack
     * whose MBean cannot be registered (a security manager, a broken MBean server) runs without one: it is
     * logged as a warning.
     *
     * @param stack the stack, open.
     * @return its MBean, whether or not registered.
     */
    static StackMBean register(final CoreStack stack)
    {
        final StackMBean bean = new StackMBean(stack);
        final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        final String name = stack.config().name();
        try
        {
            for (int instance = 1; bean.objectName == null; instance++)
            {
                final ObjectName candidate = new ObjectName(RdsStackMXBean.objectName(name, instance));
                try
                {
                    server.registerMBean(bean, candidate);
                    bean.objectName = candidate;
                }
                catch (final InstanceAlreadyExistsException ex)
                {
                    // another open stack of this name has it: try the next instance
                }
            }
        }
        catch (final JMException | RuntimeException ex)
        {
            LOG.warn("{}: cannot register its JMX MBean; JMX will not show this stack: {}", name, ex.toString());
        }
        return bean;
    }

    /** @return the name the MBean is registered under, or null if it is not. */
    ObjectName objectName()
    {
        return objectName;
    }

    /** Unregisters the MBean, if registered. Idempotent. */
    void unregister()
    {
        final ObjectName registered = objectName;
        if (registered == null)
        {
            return;
        }
        objectName = null;
        try
        {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(registered);
        }
        catch (final JMException | RuntimeException ex)
        {
            LOG.debug("cannot unregister {}: {}", registered, ex.toString());
        }
    }

    @Override
    public String getName()
    {
        return stack.config().name();
    }

    @Override
    public String getThreading()
    {
        return stack.config().threading().name();
    }

    @Override
    public Map<String, Long> getCounters()
    {
        return stack.counters();
    }

    @Override
    public int getConnectionCount()
    {
        return onAgent(agent -> agent.connectionList().size(), 0);
    }

    @Override
    public int getConnectionsUp()
    {
        return onAgent(agent ->
        {
            int up = 0;
            for (final Connection connection : agent.connectionList())
            {
                up += connection.state() == ConnectionState.UP ? 1 : 0;
            }
            return up;
        }, 0);
    }

    @Override
    public int getSocketCount()
    {
        return onAgent(agent -> agent.socketList().size(), 0);
    }

    @Override
    public List<ConnectionView> getConnections()
    {
        return onAgent(agent ->
        {
            final List<ConnectionView> views = new ArrayList<>();
            for (final Connection c : agent.connectionList())
            {
                views.add(new ConnectionView(c.localAddress().getHostAddress(), c.remoteAddress().getHostAddress(),
                    c.transport().name(), c.state().name(), c.nextTxSequence(), c.nextRxSequence(), c.queuedMessages()));
            }
            return views;
        }, List.of());
    }

    @Override
    public List<SocketView> getSockets()
    {
        return onAgent(agent ->
        {
            final List<SocketView> views = new ArrayList<>();
            for (final RdsSocketImpl s : agent.socketList())
            {
                views.add(new SocketView(address(s.localAddress()), s.transport().name(), s.sendQueuedBytes(),
                    s.sendBufferBytes(), s.receiveQueuedBytes(), s.receiveBufferBytes(), s.agentState().congested));
            }
            return views;
        }, List.of());
    }

    /** Runs a read on the agent, where its connections and sockets live; {@code closed} once the stack has closed. */
    private <T> T onAgent(final Function<StackAgent, T> read, final T closed)
    {
        return stack.isClosed() ? closed : stack.calls().call(read);
    }

    /** @return {@code a.b.c.d:port} or {@code [v6]:port}. */
    static String address(final InetSocketAddress address)
    {
        final String host = address.getAddress().getHostAddress();
        return (address.getAddress() instanceof Inet6Address ? "[" + host + "]" : host) + ":" + address.getPort();
    }
}
