package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * What {@code rds info} computes from stacks as read, without files or stacks: the {@code --prometheus} document
 * (golden: fixed input, exact text) and the rates of {@code --watch} (on fake times).
 */
class InfoFormatsTest
{
    @Test
    void prometheusDocumentIsExactly()
    {
        final InfoCommand.StackView a = view("node-a", 100, 1_764_128_776_123L, counters("send_queued", 13L, "recv_delivered", 3L));
        a.connections = List.of(Map.of("state", "UP"), Map.of("state", "DOWN"), Map.of("state", "UP"));
        a.connectionsTotal = 3;
        a.sockets = List.of(Map.of(), Map.of());
        a.socketsTotal = 2;
        // a second stack of the same name in the same process, with a transport counter the first has not
        final InfoCommand.StackView twin = view("node-a", 100, 1_764_128_777_005L,
            counters("send_queued", 0L, "recv_delivered", 0L, "tcp_sndbuf_full", 4L));
        // a name to escape, and a snapshot that could not be read: no connection or socket gauges
        final InfoCommand.StackView odd = view("we\"ird\\na\nme", 200, 1_000L, counters("send_queued", 1L, "recv_delivered", 7L));
        odd.snapshotError = "no consistent snapshot";

        assertEquals("""
            # HELP rds4j_send_queued_total rds4j stack counter send_queued.
            # TYPE rds4j_send_queued_total counter
            rds4j_send_queued_total{stack="node-a",pid="100"} 13
            rds4j_send_queued_total{stack="node-a",pid="100",stack_instance="2"} 0
            rds4j_send_queued_total{stack="we\\"ird\\\\na\\nme",pid="200"} 1
            # HELP rds4j_recv_delivered_total rds4j stack counter recv_delivered.
            # TYPE rds4j_recv_delivered_total counter
            rds4j_recv_delivered_total{stack="node-a",pid="100"} 3
            rds4j_recv_delivered_total{stack="node-a",pid="100",stack_instance="2"} 0
            rds4j_recv_delivered_total{stack="we\\"ird\\\\na\\nme",pid="200"} 7
            # HELP rds4j_tcp_sndbuf_full_total rds4j stack counter tcp_sndbuf_full.
            # TYPE rds4j_tcp_sndbuf_full_total counter
            rds4j_tcp_sndbuf_full_total{stack="node-a",pid="100",stack_instance="2"} 4
            # HELP rds4j_connections Connections of the stack, in any state.
            # TYPE rds4j_connections gauge
            rds4j_connections{stack="node-a",pid="100"} 3
            rds4j_connections{stack="node-a",pid="100",stack_instance="2"} 0
            # HELP rds4j_connections_up Connections of the stack that are up.
            # TYPE rds4j_connections_up gauge
            rds4j_connections_up{stack="node-a",pid="100"} 2
            rds4j_connections_up{stack="node-a",pid="100",stack_instance="2"} 0
            # HELP rds4j_sockets Bound sockets of the stack.
            # TYPE rds4j_sockets gauge
            rds4j_sockets{stack="node-a",pid="100"} 2
            rds4j_sockets{stack="node-a",pid="100",stack_instance="2"} 0
            # HELP rds4j_start_time_seconds When the stack opened, in seconds since the Unix epoch.
            # TYPE rds4j_start_time_seconds gauge
            rds4j_start_time_seconds{stack="node-a",pid="100"} 1764128776.123
            rds4j_start_time_seconds{stack="node-a",pid="100",stack_instance="2"} 1764128777.005
            rds4j_start_time_seconds{stack="we\\"ird\\\\na\\nme",pid="200"} 1.000
            """, InfoCommand.Prometheus.document(List.of(a, twin, odd)));
        assertEquals("", InfoCommand.Prometheus.document(List.of()).replaceAll("(?m)^# .*\n", ""), "no stack, no samples");
    }

    @Test
    void ratesArePerSecondBetweenTwoReadsOfAStack()
    {
        final InfoCommand.Rates rates = new InfoCommand.Rates();
        final Path a = Path.of("1-a-1.rds4j");
        final Path b = Path.of("2-b-1.rds4j");
        assertEquals(Map.of(), rates.update(a, counters("send_queued", 100L, "recv_delivered", 10L), 5_000_000_000L),
            "nothing to compare with at the first read");
        assertEquals(Map.of("send_queued", 200.0, "recv_delivered", 2.0),
            rates.update(a, counters("send_queued", 200L, "recv_delivered", 11L), 5_500_000_000L), "half a second later");
        assertEquals(Map.of(), rates.update(b, counters("send_queued", 7L), 5_500_000_000L), "each stack on its own");
        assertEquals(Map.of("send_queued", 0.0, "recv_delivered", 0.5),
            rates.update(a, counters("send_queued", 200L, "recv_delivered", 12L, "tcp_sndbuf_full", 9L), 7_500_000_000L),
            "two seconds later; a counter not read before has no rate");
        assertEquals(Map.of(), rates.update(a, counters("send_queued", 300L), 7_500_000_000L), "no time passed");

        final InfoCommand.StackView stillShown = view("b", 2, 0, Map.of());
        stillShown.file = b;
        rates.retain(List.of(stillShown));
        assertEquals(Map.of(), rates.update(a, counters("send_queued", 400L), 8_500_000_000L), "a, gone, was forgotten");
        assertEquals(Map.of("send_queued", 1.0), rates.update(b, counters("send_queued", 10L), 8_500_000_000L), "b was kept");

        assertEquals("12.5/s", InfoCommand.Rates.format(12.5));
        assertEquals("0.0/s", InfoCommand.Rates.format(0.04));
        assertEquals("1234567.0/s", InfoCommand.Rates.format(1_234_567));
    }

    private static InfoCommand.StackView view(final String name, final long pid, final long startMillis,
        final Map<String, Long> counters)
    {
        final InfoCommand.StackView view = new InfoCommand.StackView();
        view.file = Path.of(pid + "-" + name + ".rds4j");
        view.name = name;
        view.pid = pid;
        view.startTimeMillis = startMillis;
        view.counters = counters;
        return view;
    }

    private static Map<String, Long> counters(final Object... pairs)
    {
        final Map<String, Long> counters = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2)
        {
            counters.put((String)pairs[i], (Long)pairs[i + 1]);
        }
        return counters;
    }
}
