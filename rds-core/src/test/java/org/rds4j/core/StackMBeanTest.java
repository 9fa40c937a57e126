package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The stack's MBean read as JConsole reads it, through the platform MBean server: its attributes after real
 * traffic between two sockets of one stack (the loopback transport), its name, and that it is gone after close.
 * On a {@link org.rds4j.core.test.MemoryNetwork}, addresses 127.0.9.x.
 */
class StackMBeanTest
{
    private static final InetAddress IP = ip("127.0.9.1");
    private static final int MESSAGES = 7;
    private static final int SIZE = 100;

    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    private final MemoryStacks stacks = new MemoryStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void attributesAreTheStacksCountersConnectionsAndSocketsAfterTraffic() throws Exception
    {
        final CoreStack stack = stacks.open("jmx-traffic");
        final RdsSocket from = stack.openSocket().bind(new InetSocketAddress(IP, 100));
        final RdsSocket to = stack.openSocket().bind(new InetSocketAddress(IP, 200));
        for (int i = 0; i < MESSAGES; i++)
        {
            assertEquals(SIZE, from.send(ByteBuffer.allocate(SIZE), to.localAddress()));
        }
        Await.until(() -> stack.counters().get("recv_delivered") == MESSAGES && from.sendQueuedBytes() == 0,
            "every message delivered (not received) and acked");

        final ObjectName name = new ObjectName("org.rds4j:type=Stack,name=jmx-traffic");
        assertEquals(name, stack.objectName());
        assertTrue(server.isRegistered(name));
        assertEquals("jmx-traffic", server.getAttribute(name, "Name"));
        assertEquals("AGENT", server.getAttribute(name, "Threading"));

        // the counters table holds every counter, in JMX's open types; equal to the stack's once both are read
        // between two agent updates (acks and heartbeats may still move some)
        Await.until(() -> counters(name).equals(stack.counters()), "the MBean's counters equal the stack's");
        final Map<String, Long> counters = counters(name);
        assertEquals(MESSAGES, counters.get("send_queued"));
        assertEquals(MESSAGES, counters.get("recv_delivered"));
        assertEquals(MESSAGES, counters.get("send_drop_acked"));
        assertEquals(stack.counters().keySet(), counters.keySet());

        assertEquals(1, server.getAttribute(name, "ConnectionCount"), "the one loopback connection");
        assertEquals(1, server.getAttribute(name, "ConnectionsUp"));
        assertEquals(2, server.getAttribute(name, "SocketCount"));
        final CompositeData[] connections = (CompositeData[])server.getAttribute(name, "Connections");
        assertEquals(1, connections.length);
        assertEquals("UP", connections[0].get("state"));
        assertEquals("loop", connections[0].get("transport"));
        assertEquals((long)MESSAGES + 1, connections[0].get("nextTxSequence"));

        // a typed proxy, as a JMX client with rds-core on its class path gets: the views rebuild from CompositeData
        final RdsStackMXBean proxy = JMX.newMXBeanProxy(server, name, RdsStackMXBean.class);
        assertEquals(List.of("127.0.9.1 -> 127.0.9.1 loop UP tx " + (MESSAGES + 1) + " rx " + (MESSAGES + 1) + " unacked 0"),
            proxy.getConnections().stream().map(Object::toString).toList());
        assertEquals(List.of("127.0.9.1:100 mem send 0/1048576 recv 0/1048576",
                "127.0.9.1:200 mem send 0/1048576 recv " + MESSAGES * SIZE + "/1048576"),
            proxy.getSockets().stream().map(Object::toString).sorted().toList());

        stack.close();
        assertFalse(server.isRegistered(name), "unregistered on close");
        assertNull(stack.objectName());
        assertEquals(0, stack.mxBean().getConnectionCount(), "a closed stack has no connections");
        assertEquals(List.of(), stack.mxBean().getSockets());
        assertEquals(MESSAGES, stack.mxBean().getCounters().get("recv_delivered"), "its counters stay readable");
    }

    /**
     * Two open stacks of one name: the second gets {@code instance=2}, each MBean shows its own stack, and a name
     * freed by close is taken again by the next stack that needs it.
     */
    @Test
    void aSecondStackOfTheSameNameGetsAnInstanceKey() throws Exception
    {
        final CoreStack first = stacks.open("jmx-twin");
        final CoreStack second = stacks.open("jmx-twin");
        final ObjectName plain = new ObjectName("org.rds4j:type=Stack,name=jmx-twin");
        final ObjectName two = new ObjectName("org.rds4j:type=Stack,name=jmx-twin,instance=2");
        assertEquals(plain, first.objectName());
        assertEquals(two, second.objectName());
        assertEquals(2, server.queryNames(new ObjectName("org.rds4j:type=Stack,name=jmx-twin,*"), null).size());

        second.openSocket().bind(new InetSocketAddress(IP, 300));
        Await.until(() -> second.mxBean().getSocketCount() == 1, "the bind done by the second stack's agent");
        assertEquals(1, server.getAttribute(two, "SocketCount"));
        assertEquals(0, server.getAttribute(plain, "SocketCount"), "each MBean shows its own stack");

        first.close();
        assertFalse(server.isRegistered(plain));
        assertTrue(server.isRegistered(two), "the second keeps its name while it is open");
        final CoreStack third = stacks.open("jmx-twin");
        assertEquals(plain, third.objectName(), "the first free instance");
        second.close();
        assertFalse(server.isRegistered(two));
    }

    @Test
    void aNameWithReservedCharactersIsQuoted() throws Exception
    {
        final String odd = "jmx a,b=c:\"d\"*?";
        final CoreStack stack = stacks.open(odd);
        final ObjectName name = stack.objectName();
        assertEquals("org.rds4j:type=Stack,name=\"jmx a,b=c:\\\"d\\\"\\*\\?\"", name.toString());
        assertEquals(odd, ObjectName.unquote(name.getKeyProperty("name")));
        assertEquals(odd, server.getAttribute(name, "Name"));
    }

    @Test
    void objectNames()
    {
        assertEquals("org.rds4j:type=Stack,name=rds4j", RdsStackMXBean.objectName("rds4j", 1));
        assertEquals("org.rds4j:type=Stack,name=node-1.a_b,instance=3", RdsStackMXBean.objectName("node-1.a_b", 3));
        assertEquals("org.rds4j:type=Stack,name=\"\"", RdsStackMXBean.objectName("", 1));
        assertEquals("org.rds4j:type=Stack,name=\"a\\nb\"", RdsStackMXBean.objectName("a\nb", 1));
    }

    /** @return the MBean's counters attribute, a {@link TabularData} of (key, value) rows, as a map. */
    private Map<String, Long> counters(final ObjectName name)
    {
        try
        {
            final TabularData table = (TabularData)server.getAttribute(name, "Counters");
            final Map<String, Long> counters = new LinkedHashMap<>();
            for (final Object row : table.values())
            {
                final CompositeData entry = (CompositeData)row;
                counters.put((String)entry.get("key"), (Long)entry.get("value"));
            }
            return counters;
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }
}
