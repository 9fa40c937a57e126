package org.rds4j.micrometer;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.core.CoreStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The binder on a {@link SimpleMeterRegistry} after real traffic between two sockets of one stack (the
 * loopback transport of a {@link org.rds4j.core.test.MemoryNetwork}, addresses 127.0.9.x): names, tags, values.
 */
class RdsStackMetricsTest
{
    private static final InetAddress IP = ip("127.0.9.1");
    private static final int MESSAGES = 5;

    private final MemoryStacks stacks = new MemoryStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void countersAndGaugesAfterTraffic() throws Exception
    {
        final CoreStack stack = stacks.open("mm");
        final RdsSocket from = stack.openSocket().bind(new InetSocketAddress(IP, 100));
        final RdsSocket to = stack.openSocket().bind(new InetSocketAddress(IP, 200));
        for (int i = 0; i < MESSAGES; i++)
        {
            from.send(ByteBuffer.allocate(64), to.localAddress());
        }
        Await.until(() -> stack.counters().get("recv_delivered") == MESSAGES && from.sendQueuedBytes() == 0,
            "every message delivered and acked");

        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RdsStackMetrics(stack, Tags.of("node", "n1")).bindTo(registry);

        final Set<String> expected = new TreeSet<>();
        stack.counters().keySet().forEach(counter -> expected.add(RdsStackMetrics.meterName(counter) + " COUNTER"));
        expected.addAll(List.of("rds4j.connections GAUGE", "rds4j.connections.up GAUGE", "rds4j.sockets GAUGE"));
        assertEquals(expected, registry.getMeters().stream()
            .map(meter -> meter.getId().getName() + " " + meter.getId().getType())
            .collect(Collectors.toCollection(TreeSet::new)));
        for (final Meter meter : registry.getMeters())
        {
            assertEquals(List.of(Tag.of("node", "n1"), Tag.of("stack", "mm")), meter.getId().getTags(), meter.getId().toString());
        }

        assertEquals(MESSAGES, registry.get("rds4j.send.queued").tag("stack", "mm").functionCounter().count());
        assertEquals(MESSAGES, registry.get("rds4j.recv.delivered").functionCounter().count());
        assertEquals(MESSAGES, registry.get("rds4j.send.drop.acked").functionCounter().count());
        // every counter reads its own value: the first one read equal to the stack's, all of them
        Await.until(() ->
        {
            final Map<String, Long> counters = stack.counters();
            return counters.entrySet().stream().allMatch(c ->
                registry.get(RdsStackMetrics.meterName(c.getKey())).functionCounter().count() == c.getValue());
        }, "each counter's meter equals the counter");
        assertEquals(1.0, registry.get("rds4j.connections").gauge().value(), "the loopback connection");
        assertEquals(1.0, registry.get("rds4j.connections.up").gauge().value());
        assertEquals(2.0, registry.get("rds4j.sockets").gauge().value());

        to.close();
        Await.until(() -> registry.get("rds4j.sockets").gauge().value() == 1.0, "a closed socket leaves the gauge");
        stack.close();
        assertEquals(0.0, registry.get("rds4j.connections").gauge().value(), "a closed stack has none");
        assertEquals(MESSAGES, registry.get("rds4j.recv.delivered").functionCounter().count(), "counters keep their value");
    }

    @Test
    void meterNamesAndForeignStacks()
    {
        assertEquals("rds4j.conn.refused.not.allowed", RdsStackMetrics.meterName("conn_refused_not_allowed"));
        assertThrows(IllegalArgumentException.class, () -> new RdsStackMetrics(null));
    }
}
