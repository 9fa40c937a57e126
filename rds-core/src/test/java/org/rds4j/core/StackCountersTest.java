package org.rds4j.core;

import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StackCountersTest
{
    @Test
    void transportCountersFollowTheStacksAndCount()
    {
        final StackCounters counters = new StackCounters();
        final int stackCounters = counters.snapshot().size();
        final AtomicCounter full = counters.newTransportCounter("tcp_sndbuf_full");
        final AtomicCounter raced = counters.newTransportCounter("ib_connect_raced");
        full.incrementOrdered();
        full.incrementOrdered();
        raced.getAndAddOrdered(5);

        final Map<String, Long> snapshot = counters.snapshot();
        final List<String> names = new ArrayList<>(snapshot.keySet());
        assertEquals(stackCounters + 2, names.size());
        assertEquals(List.of("tcp_sndbuf_full", "ib_connect_raced"), names.subList(stackCounters, names.size()));
        assertEquals(2L, snapshot.get("tcp_sndbuf_full"));
        assertEquals(5L, snapshot.get("ib_connect_raced"));
    }

    @Test
    void aNameTakenIsRefused()
    {
        final StackCounters counters = new StackCounters();
        counters.newTransportCounter("ib_post_send");
        final IllegalArgumentException taken =
            assertThrows(IllegalArgumentException.class, () -> counters.newTransportCounter("ib_post_send"));
        assertTrue(taken.getMessage().contains("ib_post_send"), taken.getMessage());
        assertThrows(IllegalArgumentException.class, () -> counters.newTransportCounter("send_queued"),
            "a stack counter's name too");
    }

    @Test
    void fullMemoryIsRefusedAfterRoomForEightyMore()
    {
        final StackCounters counters = new StackCounters();
        final int stackCounters = counters.snapshot().size();
        int added = 0;
        try
        {
            while (true)
            {
                counters.newTransportCounter("x_" + added);
                added++;
            }
        }
        catch (final IllegalStateException full)
        {
            assertEquals(128, stackCounters + added, "room for 128 counters in all");
        }
        assertTrue(added >= 80, "transports have room for " + added + " counters");
    }
}
