package org.rds4j.core;

import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.Threading;
import org.rds4j.core.test.MemoryNetwork;
import org.rds4j.core.test.MemoryStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * What only the in-memory network can show: the generic layer's guarantees when the transport's paths lose,
 * repeat and reorder frames and the network is cut, and its timers on a clock the test moves. Both stacks run
 * in INVOKER mode on one fake clock, driven by the test thread alone, so a run is the same every time (up to
 * the reconnect backoff's random delays). Addresses 127.0.40.x.
 */
class UnreliableNetworkTest
{
    private static final InetAddress A_IP = ip("127.0.40.1");
    private static final InetAddress B_IP = ip("127.0.40.2");
    private static final long STEP_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final int MAX_STEPS = 2_000_000;

    private final CachedNanoClock clock = new CachedNanoClock();
    private final MemoryStacks stacks = new MemoryStacks();
    private final MemoryNetwork network = stacks.network();

    UnreliableNetworkTest()
    {
        clock.update(TimeUnit.SECONDS.toNanos(1));
    }

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private CoreStack invoker(final String name, final Duration heartbeatInterval, final Duration heartbeatTimeout)
    {
        return stacks.open(stacks.config(name).toBuilder().threading(Threading.INVOKER)
            .heartbeat(heartbeatInterval, heartbeatTimeout).build(), network.options().nanoClock(clock));
    }

    private static ByteBuffer numbered(final int n)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(16 + n % 200);
        buffer.putInt(0, n);
        return buffer;
    }

    /** Runs duty cycles on both stacks until neither has work, without moving the clock. */
    private static void settle(final RdsStack a, final RdsStack b)
    {
        for (int i = 0; i < 1000; i++)
        {
            if (a.invoke() + b.invoke() == 0)
            {
                return;
            }
        }
        throw new AssertionError("the stacks do not settle");
    }

    @Test
    void everyMessageArrivesExactlyOnceAndInOrderDespiteLossDuplicatesReorderingAndACut() throws Exception
    {
        network.faults(MemoryNetwork.randomFaults(16, 1, 3, 5));
        final CoreStack a = invoker("faulty-a", Duration.ofSeconds(1), Duration.ofSeconds(10));
        final CoreStack b = invoker("faulty-b", Duration.ofSeconds(1), Duration.ofSeconds(10));
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100)).configureBlocking(false);
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 200)).configureBlocking(false);
        final int count = 3000;
        final int[] expected = {0};
        final List<String> errors = new ArrayList<>();
        final RdsMessageHandler handler = (from, payload) ->
        {
            final int n = payload.getInt(payload.position());
            if (n != expected[0] || payload.remaining() != 16 + n % 200 || !from.equals(sa.localAddress()))
            {
                errors.add("expected " + expected[0] + ", got " + n + " (" + payload.remaining() + " B from " + from +
                    ")");
            }
            expected[0]++;
        };
        int sent = 0;
        int cutAt = -1;
        int step = 0;
        for (; expected[0] < count && errors.isEmpty(); step++)
        {
            assertTrue(step < MAX_STEPS, "received " + expected[0] + " of " + count);
            if (cutAt < 0 && expected[0] >= count / 3)
            {
                network.cut(A_IP, B_IP);
                cutAt = step;
            }
            if (step == cutAt + 2000)
            {
                network.heal(A_IP, B_IP);
            }
            while (sent < count)
            {
                final int result = sa.send(numbered(sent), sb.localAddress());
                if (result < 0)
                {
                    assertTrue(result == RdsResult.EAGAIN || result == RdsResult.ENOBUFS, RdsResult.name(result));
                    break;
                }
                sent++;
            }
            a.invoke();
            b.invoke();
            sb.poll(handler, 256);
            clock.advance(STEP_NS);
        }
        assertEquals(List.of(), errors);
        for (; sa.sendQueuedBytes() > 0; step++)
        {
            assertTrue(step < MAX_STEPS, "still unacked: " + sa.sendQueuedBytes() + " B");
            a.invoke();
            b.invoke();
            clock.advance(STEP_NS);
        }
        sb.poll(handler, 256);
        System.out.println("unreliable network: " + count + " messages in " + step + " steps of 1 ms; frames " +
            network.framesSent() + ", duplicates discarded " + network.duplicatesDiscarded() + ", paths lost " +
            network.pathsBrokenByLoss() + "; a: " + a.counters().get("conn_reset") + " resets, " +
            a.counters().get("send_retransmitted") + " retransmitted; b: " + b.counters().get("recv_drop_old_seq") +
            " old sequences dropped");
        assertEquals(count, expected[0], "nothing more arrives");
        assertEquals(count, b.counters().get("recv_delivered"));
        assertTrue(network.duplicatesDiscarded() > 0, "the network repeated frames");
        assertTrue(network.pathsBrokenByLoss() > 0, "the network lost frames");
        assertTrue(a.counters().get("conn_reset") >= network.pathsBrokenByLoss(), "paths went down: " + a.counters());
        assertTrue(a.counters().get("conn_attempt_failed") > 0, "connects were refused while cut: " + a.counters());
    }

    @Test
    void aSilentPeerIsDroppedAtExactlyTheHeartbeatTimeout() throws Exception
    {
        final Duration interval = Duration.ofSeconds(1);
        final Duration timeout = Duration.ofSeconds(5);
        final CoreStack a = invoker("silent-a", interval, timeout);
        final CoreStack b = invoker("silent-b", interval, timeout);
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 101)).configureBlocking(false);
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 201)).configureBlocking(false);
        final List<InetAddress> down = new ArrayList<>();
        sa.setNotificationListener(new RdsNotificationListener()
        {
            @Override
            public void onPeerDown(final InetAddress peer)
            {
                down.add(peer);
            }
        });
        // everything, the handshake included, happens at one instant: the last frame A receives arrives at t0
        final long t0 = clock.nanoTime();
        assertEquals(4, sa.send(ByteBuffer.allocate(4), sb.localAddress()));
        settle(a, b);
        assertEquals(sa.localAddress(), sb.receive(ByteBuffer.allocate(4)));
        settle(a, b);
        assertEquals("UP", a.connections().get(0).state());

        // B goes silent: A's probes still reach it, nothing it sends reaches A
        network.faults((from, to, length) -> from.equals(B_IP) ? MemoryNetwork.Fate.DROP : MemoryNetwork.Fate.DELIVER);
        for (long at = t0 + STEP_NS; at < t0 + timeout.toNanos(); at += interval.toNanos() / 4)
        {
            clock.update(at);
            a.invoke();
            b.invoke();
        }
        clock.update(t0 + timeout.toNanos() - 1);
        a.invoke();
        b.invoke();
        assertEquals(0L, a.counters().get("conn_heartbeat_timeout"), "1 ns before the timeout");
        assertTrue(b.counters().get("recv_delivered") >= 1 && a.counters().get("conn_reset") == 0, "still up");

        clock.update(t0 + timeout.toNanos());
        a.invoke();
        assertEquals(1L, a.counters().get("conn_heartbeat_timeout"), "at the timeout");
        assertEquals(1L, a.counters().get("conn_reset"));
        sa.poll((from, payload) -> { }, 1);
        assertEquals(List.of(B_IP), down);
    }

    @Test
    void framesHeldPastTheirPathsEndAreNeverDelivered() throws Exception
    {
        final CoreStack a = invoker("held-a", Duration.ofSeconds(1), Duration.ofSeconds(10));
        final CoreStack b = invoker("held-b", Duration.ofSeconds(1), Duration.ofSeconds(10));
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 102)).configureBlocking(false);
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 202)).configureBlocking(false);
        assertEquals(16, sa.send(numbered(0), sb.localAddress()));
        settle(a, b);
        assertEquals(sa.localAddress(), sb.receive(ByteBuffer.allocate(64)));

        // the next message's frames wait in the network while the path is cut and comes back
        network.faults((from, to, length) -> MemoryNetwork.Fate.HOLD);
        sa.send(numbered(1), sb.localAddress());
        settle(a, b);
        network.faults((from, to, length) -> MemoryNetwork.Fate.DELIVER);
        network.cut(A_IP, B_IP);
        settle(a, b);
        network.heal(A_IP, B_IP);
        for (int step = 0; sa.sendQueuedBytes() > 0; step++)
        {
            assertTrue(step < MAX_STEPS, "message 1 never acked");
            a.invoke();
            b.invoke();
            clock.advance(STEP_NS);
        }
        final ByteBuffer dst = ByteBuffer.allocate(64);
        assertEquals(sa.localAddress(), sb.receive(dst));
        assertEquals(1, dst.getInt(0));

        network.releaseHeld();
        settle(a, b);
        assertEquals(null, sb.receive(dst.clear()), "the held copy belonged to the old path");
        assertEquals(2L, b.counters().get("recv_delivered"));
    }
}
