package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.AgentGate;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.Payloads;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.rds4j.core.test.TestAddresses.ip;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two sockets of the same stack talk over the loopback transport (never the network): same address with two ports,
 * and two addresses of the stack. Order, bytes, connection listing, cancel, congestion, volume.
 * On a {@link org.rds4j.core.test.MemoryNetwork}, addresses 127.0.3.x.
 */
class LoopbackTest
{
    private static final InetAddress IP1 = ip("127.0.3.1");
    private static final InetAddress IP2 = ip("127.0.3.2");
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final MemoryStacks stacks = new MemoryStacks();
    private RdsStack stack;

    @BeforeEach
    void setUp()
    {
        stack = stacks.open("loop");
    }

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private static RdsSocket bound(final RdsStack stack, final InetAddress address, final int port) throws Exception
    {
        return stack.openSocket().bind(new InetSocketAddress(address, port));
    }

    /** Sends {@code count} verifiable messages of varying sizes, then receives and checks them in order. */
    private static void exchange(final RdsSocket from, final RdsSocket to, final int id, final int count) throws Exception
    {
        final ByteBuffer src = ByteBuffer.allocate(2048);
        for (int i = 0; i < count; i++)
        {
            final int size = Payloads.HEADER + (i * 37) % 1500;
            assertEquals(size, from.send(Payloads.fill(src, id, i, size), to.localAddress()), "message " + i);
        }
        to.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final ByteBuffer dst = ByteBuffer.allocate(2048);
        for (int i = 0; i < count; i++)
        {
            dst.clear();
            assertEquals(from.localAddress(), to.receive(dst), "sender of message " + i);
            dst.flip();
            assertEquals(Payloads.HEADER + (i * 37) % 1500, dst.remaining(), "size of message " + i);
            assertEquals(id, Payloads.sender(dst));
            assertEquals(i, Payloads.sequence(dst), "order");
            assertTrue(Payloads.verify(dst), "bytes of message " + i);
        }
        assertEquals(0, to.receiveQueuedBytes());
    }

    private static int pollQuietly(final RdsSocket socket)
    {
        try
        {
            return socket.poll((sender, payload) -> { }, 10);
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static void assertOnlyLoopConnections(final RdsStack stack, final InetAddress local, final InetAddress remote)
    {
        final List<RdsStack.ConnectionInfo> infos = stack.connections();
        boolean pair = false;
        for (final RdsStack.ConnectionInfo info : infos)
        {
            assertEquals("loop", info.transport(), "no network connection expected: " + infos);
            if (info.local().equals(local) && info.remote().equals(remote))
            {
                pair = true;
            }
        }
        assertTrue(pair, local + " -> " + remote + " listed: " + infos);
    }

    @Test
    void sameAddressTwoPortsInOrderOverLoop() throws Exception
    {
        final RdsSocket s1 = bound(stack, IP1, 100);
        final RdsSocket s2 = bound(stack, IP1, 200);
        exchange(s1, s2, 1, 200);
        exchange(s2, s1, 2, 50);
        assertOnlyLoopConnections(stack, IP1, IP1);
        Await.until(WAIT, () -> s1.sendQueuedBytes() == 0 && s2.sendQueuedBytes() == 0, () -> "acked");
    }

    @Test
    void twoAddressesOfTheStackInOrderOverLoop() throws Exception
    {
        final RdsSocket s1 = bound(stack, IP1, 100);
        final RdsSocket s2 = bound(stack, IP2, 100);
        exchange(s1, s2, 3, 200);
        exchange(s2, s1, 4, 50);
        assertOnlyLoopConnections(stack, IP1, IP2);
        assertOnlyLoopConnections(stack, IP2, IP1);
        Await.until(WAIT, () -> s1.sendQueuedBytes() == 0 && s2.sendQueuedBytes() == 0, () -> "acked");
        assertEquals(0L, stack.counters().get("conn_attempt_failed"));
    }

    @Test
    void pingOverLoopbackIsAnswered() throws Exception
    {
        final RdsSocket s1 = bound(stack, IP1, 105);
        bound(stack, IP2, 105);
        s1.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        for (final InetAddress target : new InetAddress[] {IP2, IP1})
        {
            final InetSocketAddress responder = new InetSocketAddress(target, 0);
            assertEquals(0, s1.send(ByteBuffer.allocate(0), responder));
            final ByteBuffer dst = ByteBuffer.allocate(16);
            assertEquals(responder, s1.receive(dst), "pong from " + target);
            assertEquals(0, dst.position());
        }
        assertEquals(2L, stack.counters().get("recv_ping"));
        assertEquals(2L, stack.counters().get("send_pong"));
    }

    /** Holds the stack's agent, then queues {@code count} verifiable messages of 100 B, non-blocking. */
    private static void queueWhileHeld(final AgentGate gate, final RdsSocket from, final RdsSocket to, final int id,
        final int count) throws Exception
    {
        gate.hold = true;
        Await.until(WAIT, () -> gate.held, () -> "agent held");
        from.configureBlocking(false);
        final ByteBuffer src = ByteBuffer.allocate(100);
        for (int i = 0; i < count; i++)
        {
            assertEquals(100, from.send(Payloads.fill(src, id, i, 100), to.localAddress()));
        }
    }

    @Test
    void tenThousandMessagesInOrder() throws Exception
    {
        final RdsSocket s1 = bound(stack, IP1, 101);
        final RdsSocket s2 = bound(stack, IP2, 101);
        final int count = 10_000;
        final int size = 1000;  // 10 MB through a 1 MiB receive buffer: the sender must wait for congestion
        s1.setOption(RdsOptions.SO_SNDTIMEO, WAIT);
        s2.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicInteger received = new AtomicInteger();
        final Thread receiver = new Thread(() ->
        {
            try
            {
                final ByteBuffer dst = ByteBuffer.allocate(size + 100);
                for (int i = 0; i < count; i++)
                {
                    dst.clear();
                    assertEquals(s1.localAddress(), s2.receive(dst), "sender of message " + i);
                    dst.flip();
                    assertEquals(size, dst.remaining());
                    assertEquals(i, Payloads.sequence(dst), "order");
                    assertTrue(Payloads.verify(dst), "bytes of message " + i);
                    received.incrementAndGet();
                }
            }
            catch (final Throwable t)
            {
                failure.set(t);
            }
        }, "loop-receiver");
        receiver.start();
        final ByteBuffer src = ByteBuffer.allocate(size);
        for (int i = 0; i < count; i++)
        {
            final int result = s1.send(Payloads.fill(src, 5, i, size), s2.localAddress());
            if (result != size)
            {
                receiver.join(WAIT.toMillis());
                throw new AssertionError("send " + i + ": " + RdsResult.name(result) + ", receiver: " + failure.get());
            }
        }
        receiver.join(WAIT.toMillis() * 2);
        assertNull(failure.get());
        assertEquals(count, received.get());
        assertOnlyLoopConnections(stack, IP1, IP2);
        assertEquals((long)count, stack.counters().get("recv_delivered"));
    }

    /**
     * Messages queued while the agent is held go in one transmit when it runs, and the receiving socket queues that
     * transmit's frames as one run (each frame on its own without the loopback path's batches: 0 runs).
     */
    @Test
    void aTransmitsFramesForASocketAreQueuedAsOneRun() throws Exception
    {
        final AgentGate gate = new AgentGate();
        final CoreStack gated = stacks.openGated("loop-runs", gate);
        final RdsSocket s1 = bound(gated, ip("127.0.3.7"), 105);
        final RdsSocket s2 = bound(gated, ip("127.0.3.8"), 105);
        exchange(s1, s2, 9, 3); // the loop connection is up
        final long delivered = gated.counters().get("recv_delivered");
        final long runs = gated.counters().get("recv_runs");

        queueWhileHeld(gate, s1, s2, 9, 10);
        gate.hold = false;
        final ByteBuffer dst = ByteBuffer.allocate(200);
        for (int i = 0; i < 10; i++)
        {
            dst.clear();
            assertEquals(s1.localAddress(), s2.receive(dst));
            dst.flip();
            assertEquals(i, Payloads.sequence(dst), "order");
            assertTrue(Payloads.verify(dst), "bytes of message " + i);
        }
        assertEquals(10L, gated.counters().get("recv_delivered") - delivered);
        assertEquals(1L, gated.counters().get("recv_runs") - runs, "one run of the ten");
    }

    @Test
    void congestionOnLoopbackGivesENOBUFSAndUncongestedNotification() throws Exception
    {
        final RdsSocket s1 = bound(stack, IP1, 102);
        final RdsSocket s2 = bound(stack, IP2, 102);
        s2.setOption(RdsOptions.SO_RCVBUF, 1000);
        s1.setOption(RdsOptions.RDS_CONG_MONITOR, true);
        final List<InetSocketAddress> uncongested = new CopyOnWriteArrayList<>();
        s1.setNotificationListener(new RdsNotificationListener()
        {
            @Override
            public void onUncongested(final InetSocketAddress destination)
            {
                uncongested.add(destination);
            }
        });
        s1.configureBlocking(false);
        final ByteBuffer src = ByteBuffer.allocate(100);
        int sent = 0;
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (true)
        {
            final int result = s1.send(Payloads.fill(src, 6, sent, 100), s2.localAddress());
            if (result == 100)
            {
                sent++;
                continue;
            }
            if (result == RdsResult.ENOBUFS)
            {
                break;
            }
            assertEquals(RdsResult.EAGAIN, result, "after " + sent);
            assertTrue(System.nanoTime() - deadline < 0, "no ENOBUFS after " + sent);
        }
        assertTrue(sent > 10, "congested only above 1000 bytes, after " + sent);
        final int total = sent;
        Await.until(WAIT, () -> s2.receiveQueuedBytes() == 100L * total, () -> "delivered " + s2.receiveQueuedBytes());
        assertEquals(RdsResult.ENOBUFS, s1.send(Payloads.fill(src, 6, sent, 100), s2.localAddress()));

        s2.configureBlocking(false);
        final ByteBuffer dst = ByteBuffer.allocate(200);
        for (int i = 0; i < total; i++)
        {
            dst.clear();
            assertEquals(s1.localAddress(), s2.receive(dst), "message " + i);
            dst.flip();
            assertEquals(i, Payloads.sequence(dst), "order");
        }
        assertNull(s2.receive(dst));
        Await.until(WAIT, () -> pollQuietly(s1) >= 0 && !uncongested.isEmpty(), () -> "uncongested notification");
        assertEquals(List.of(s2.localAddress()), uncongested);
        assertEquals(100, s1.send(Payloads.fill(src, 6, total, 100), s2.localAddress()));
        s2.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        s2.configureBlocking(true);
        dst.clear();
        assertEquals(s1.localAddress(), s2.receive(dst));
        dst.flip();
        assertEquals(total, Payloads.sequence(dst));
        s1.poll((sender, payload) -> { }, 10);
        assertEquals(List.of(s2.localAddress()), uncongested, "exactly once");
    }

    @Test
    void cancelOnLoopbackDropsMessagesNotYetTransmitted() throws Exception
    {
        // hold the agent so that the messages cannot be transmitted before cancelSentTo runs
        final AgentGate gate = new AgentGate();
        final CoreStack gated = stacks.openGated("loop-gated", gate);
        final InetAddress ip = ip("127.0.3.5");
        final InetAddress ip2 = ip("127.0.3.6");
        final RdsSocket s1 = bound(gated, ip, 103);
        final RdsSocket s2 = bound(gated, ip2, 103);
        s2.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        exchange(s1, s2, 7, 3); // the loop connection is up

        queueWhileHeld(gate, s1, s2, 8, 100);
        assertEquals(10_000, s1.sendQueuedBytes());
        final AtomicInteger cancelled = new AtomicInteger(Integer.MIN_VALUE);
        final Thread canceller = new Thread(() ->
        {
            try
            {
                cancelled.set(s1.cancelSentTo(s2.localAddress()));
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException(ex);
            }
        }, "canceller");
        canceller.start();
        Await.until(WAIT, () -> Await.blockedIn(canceller, "cancelSentTo"), () -> "canceller waiting");
        gate.hold = false;
        canceller.join(WAIT.toMillis());

        assertEquals(100, cancelled.get());
        assertEquals(0, s1.sendQueuedBytes());
        assertEquals(100L, gated.counters().get("send_cancelled"));
        final ByteBuffer src = ByteBuffer.allocate(100);
        assertEquals(100, s1.send(Payloads.fill(src, 8, 100, 100), s2.localAddress()));
        final ByteBuffer dst = ByteBuffer.allocate(200);
        assertEquals(s1.localAddress(), s2.receive(dst));
        dst.flip();
        assertEquals(100, Payloads.sequence(dst), "the first message after the cancel is the next one received");
        s2.configureBlocking(false);
        dst.clear();
        assertNull(s2.receive(dst));
        assertOnlyLoopConnections(gated, ip, ip2);
    }

    @Test
    void cancelOnLoopbackAccountsForEveryMessage() throws Exception
    {
        // without holding the agent: whatever is not cancelled is delivered, in order, and nothing else
        final RdsSocket s1 = bound(stack, IP1, 104);
        final RdsSocket s2 = bound(stack, IP1, 204);
        s1.configureBlocking(false);
        final ByteBuffer src = ByteBuffer.allocate(100);
        final int count = 200;
        for (int i = 0; i < count; i++)
        {
            assertEquals(100, s1.send(Payloads.fill(src, 9, i, 100), s2.localAddress()));
        }
        final int cancelled = s1.cancelSentTo(s2.localAddress());
        assertTrue(cancelled >= 0 && cancelled <= count, "cancelled " + cancelled);
        assertEquals(cancelled, stack.counters().get("send_cancelled"));
        final int delivered = count - cancelled;
        Await.until(WAIT, () -> s1.sendQueuedBytes() == 0, () -> "all acked or cancelled: " + s1.sendQueuedBytes());
        assertEquals(100, s1.send(Payloads.fill(src, 9, count, 100), s2.localAddress()));
        s2.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final ByteBuffer dst = ByteBuffer.allocate(200);
        for (int i = 0; i < delivered; i++)
        {
            dst.clear();
            assertEquals(s1.localAddress(), s2.receive(dst));
            dst.flip();
            assertEquals(i, Payloads.sequence(dst), "delivered messages are the ones sent first");
        }
        dst.clear();
        assertEquals(s1.localAddress(), s2.receive(dst));
        dst.flip();
        assertEquals(count, Payloads.sequence(dst), "no cancelled message arrives");
    }
}
