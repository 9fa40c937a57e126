package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.StackFixture;

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
 * {@link RdsNotificationListener}: peer up and down, uncongested notifications with RDS_CONG_MONITOR on and
 * off, and a blocking send waiting for a congested port. On a {@link org.rds4j.core.test.MemoryNetwork},
 * addresses 127.0.6.x.
 */
class NotificationTest
{
    static final InetAddress A_IP = ip("127.0.6.1");
    static final InetAddress B_IP = ip("127.0.6.2");
    /** Higher than B: A must ask B to connect (a poke). */
    private static final InetAddress A_HIGH_IP = ip("127.0.6.3");
    static final Duration WAIT = Duration.ofSeconds(10);
    static final int SIZE = 100;

    private final StackFixture stacks = fixture();

    /** @return the stacks: in memory; {@link DriverNotificationTest} attaches each to a driver instead. */
    StackFixture fixture()
    {
        return new MemoryStacks();
    }

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    /** Records events and the threads they came on. */
    static final class Recorder implements RdsNotificationListener
    {
        final List<InetAddress> up = new CopyOnWriteArrayList<>();
        final List<InetAddress> down = new CopyOnWriteArrayList<>();
        final List<InetSocketAddress> uncongested = new CopyOnWriteArrayList<>();
        final List<Thread> threads = new CopyOnWriteArrayList<>();

        @Override
        public void onUncongested(final InetSocketAddress destination)
        {
            threads.add(Thread.currentThread());
            uncongested.add(destination);
        }

        @Override
        public void onPeerUp(final InetAddress peer)
        {
            threads.add(Thread.currentThread());
            up.add(peer);
        }

        @Override
        public void onPeerDown(final InetAddress peer)
        {
            threads.add(Thread.currentThread());
            down.add(peer);
        }
    }

    static int pollAll(final RdsSocket socket)
    {
        try
        {
            return socket.poll((sender, payload) -> { }, 1000);
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }

    static ByteBuffer numbered(final int n)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(SIZE);
        buffer.putInt(0, n);
        return buffer;
    }

    /**
     * Sends numbered 100-byte messages non-blocking until the destination refuses with ENOBUFS.
     *
     * @return how many were accepted.
     */
    static int sendUntilENOBUFS(final RdsSocket sa, final InetSocketAddress destination) throws Exception
    {
        sa.configureBlocking(false);
        final long deadline = System.nanoTime() + WAIT.toNanos();
        int sent = 0;
        while (true)
        {
            final int result = sa.send(numbered(sent), destination);
            if (result == SIZE)
            {
                sent++;
            }
            else if (result == RdsResult.ENOBUFS)
            {
                return sent;
            }
            else if (result != RdsResult.EAGAIN)
            {
                throw new AssertionError("unexpected send result " + RdsResult.name(result) + " after " + sent);
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new AssertionError("no ENOBUFS after " + sent + " messages");
            }
        }
    }

    /** Receives exactly {@code count} numbered messages, in order, from {@code from}. */
    static void drain(final RdsSocket sb, final int first, final int count, final InetSocketAddress from)
        throws Exception
    {
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final ByteBuffer dst = ByteBuffer.allocate(SIZE + 10);
        for (int i = 0; i < count; i++)
        {
            dst.clear();
            assertEquals(from, sb.receive(dst), "message " + (first + i));
            assertEquals(SIZE, dst.position());
            assertEquals(first + i, dst.getInt(0), "order");
        }
    }

    /** Waits until all {@code sent} messages of {@link #SIZE} bytes are in B's receive queue. */
    static void awaitDelivered(final RdsSocket sb, final int sent)
    {
        Await.until(WAIT, () -> sb.receiveQueuedBytes() == (long)SIZE * sent,
            () -> "all " + sent + " delivered, queued " + sb.receiveQueuedBytes());
    }

    /** Ping B and wait for the pong: everything B sent A before the pong has been processed by A. */
    static void pingBarrier(final RdsSocket sa) throws Exception
    {
        final boolean blocking = sa.isBlocking();
        sa.configureBlocking(true);
        sa.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final InetSocketAddress responder = new InetSocketAddress(B_IP, 0);
        assertEquals(0, sa.send(ByteBuffer.allocate(0), responder));
        assertEquals(responder, sa.receive(ByteBuffer.allocate(16)), "pong");
        sa.configureBlocking(blocking);
    }

    @Test
    void peerUpAndPeerDownAreDeliveredOnThePollingThread() throws Exception
    {
        peerUpAndDown(A_IP, 100);
    }

    @Test
    void peerUpAndPeerDownWhenThePeerConnectsBack() throws Exception
    {
        peerUpAndDown(A_HIGH_IP, 104);
    }

    private void peerUpAndDown(final InetAddress aIp, final int port) throws Exception
    {
        final RdsStack a = stacks.open("notify-a");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(aIp, port));
        final Recorder recorder = new Recorder();
        sa.setNotificationListener(recorder);

        final RdsStack b = stacks.open("notify-b");
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, port + 100));
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(1, sa.send(ByteBuffer.wrap(new byte[] {42}), sb.localAddress()));
        assertEquals(sa.localAddress(), sb.receive(ByteBuffer.allocate(8)));

        Await.until(WAIT, () -> pollAll(sa) >= 0 && !recorder.up.isEmpty(), () -> "peer up");
        assertEquals(List.of(B_IP), recorder.up);
        assertEquals(List.of(), recorder.down);

        b.close();
        Await.until(WAIT, () -> pollAll(sa) >= 0 && !recorder.down.isEmpty(), () -> "peer down");
        assertEquals(List.of(B_IP), recorder.down);
        assertEquals(List.of(B_IP), recorder.up);
        for (final Thread thread : recorder.threads)
        {
            assertEquals(Thread.currentThread(), thread, "listener runs on the polling thread");
        }
    }

    @Test
    void uncongestedIsNotifiedExactlyOnceWithCongestionMonitor() throws Exception
    {
        final RdsStack a = stacks.open("notify-a");
        final RdsStack b = stacks.open("notify-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 101));
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 201));
        sb.setOption(RdsOptions.SO_RCVBUF, 1000);
        sa.setOption(RdsOptions.RDS_CONG_MONITOR, true);
        final Recorder recorder = new Recorder();
        sa.setNotificationListener(recorder);

        final int sent = sendUntilENOBUFS(sa, sb.localAddress());
        assertTrue(sent > 10, "the receiver congests only above 1000 bytes, after " + sent);
        assertEquals(RdsResult.ENOBUFS, sa.send(numbered(-1), sb.localAddress()));
        awaitDelivered(sb, sent);
        pollAll(sa);
        assertEquals(List.of(), recorder.uncongested, "still congested");

        drain(sb, 0, sent, sa.localAddress());
        Await.until(WAIT, () -> pollAll(sa) >= 0 && !recorder.uncongested.isEmpty(), () -> "uncongested");
        assertEquals(List.of(sb.localAddress()), recorder.uncongested);

        pingBarrier(sa);
        pollAll(sa);
        assertEquals(List.of(sb.localAddress()), recorder.uncongested, "exactly once");
        sa.configureBlocking(false);
        assertEquals(SIZE, sa.send(numbered(sent), sb.localAddress()), "sends succeed again");
    }

    @Test
    void noUncongestedNotificationWithoutCongestionMonitor() throws Exception
    {
        final RdsStack a = stacks.open("notify-a");
        final RdsStack b = stacks.open("notify-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 102));
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 202));
        sb.setOption(RdsOptions.SO_RCVBUF, 1000);
        assertEquals(Boolean.FALSE, sa.getOption(RdsOptions.RDS_CONG_MONITOR));
        final Recorder recorder = new Recorder();
        sa.setNotificationListener(recorder);

        final int sent = sendUntilENOBUFS(sa, sb.localAddress());
        awaitDelivered(sb, sent);
        drain(sb, 0, sent, sa.localAddress());

        // A has seen the port free once a send is accepted again
        final AtomicInteger result = new AtomicInteger();
        Await.until(WAIT, () ->
        {
            try
            {
                result.set(sa.send(numbered(sent), sb.localAddress()));
            }
            catch (final Exception ex)
            {
                throw new AssertionError(ex);
            }
            pollAll(sa);
            return result.get() == SIZE;
        }, () -> "send accepted again, last " + RdsResult.name(result.get()));
        pingBarrier(sa);
        pollAll(sa);
        assertEquals(List.of(), recorder.uncongested);
        assertEquals(List.of(B_IP), recorder.up);
    }

    @Test
    void blockingSendToCongestedPortWaitsUntilReceiverDrains() throws Exception
    {
        final RdsStack a = stacks.open("notify-a");
        final RdsStack b = stacks.open("notify-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 103));
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 203));
        sb.setOption(RdsOptions.SO_RCVBUF, 1000);

        final int sent = sendUntilENOBUFS(sa, sb.localAddress());
        awaitDelivered(sb, sent);
        sa.configureBlocking(true);
        sa.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofMillis(200));
        final long start = System.nanoTime();
        assertEquals(RdsResult.ETIMEDOUT, sa.send(numbered(-1), sb.localAddress()), "congested: the timeout expires");
        assertTrue(System.nanoTime() - start >= 200_000_000L, "waited the timeout");
        sa.setOption(RdsOptions.SO_SNDTIMEO, WAIT);
        final long congBlockedBefore = a.counters().get("send_cong_blocked");

        final AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread sender = new Thread(() ->
        {
            try
            {
                result.set(sa.send(numbered(sent), sb.localAddress()));
            }
            catch (final Throwable t)
            {
                failure.set(t);
            }
        }, "congested-sender");
        sender.start();
        Await.until(WAIT, () -> Await.blockedIn(sender, "sendBlocking") &&
            a.counters().get("send_cong_blocked") > congBlockedBefore, () -> "sender blocked on congestion");
        assertEquals(Integer.MIN_VALUE, result.get(), "still blocked");

        final AtomicReference<Throwable> drainFailure = new AtomicReference<>();
        final Thread drainer = new Thread(() ->
        {
            try
            {
                drain(sb, 0, sent, sa.localAddress());
            }
            catch (final Throwable t)
            {
                drainFailure.set(t);
            }
        }, "drainer");
        drainer.start();
        drainer.join(WAIT.toMillis());
        sender.join(WAIT.toMillis() + 1000);
        assertNull(drainFailure.get());
        assertNull(failure.get());
        assertEquals(SIZE, result.get(), "the blocked send completes once the receiver drained");
        drain(sb, sent, 1, sa.localAddress());
    }

    /**
     * Only a send that is refused with ENOBUFS arms the congestion monitor (kernel: only a non-blocking
     * send sets rs_cong_mask): a blocking send that waits and then succeeds must not cause a later
     * onUncongested.
     */
    @Test
    void blockingSendThatWaitedDoesNotArmCongestionMonitor() throws Exception
    {
        final RdsStack a = stacks.open("notify-a");
        final RdsStack b = stacks.open("notify-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 105));
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 205));
        sb.setOption(RdsOptions.SO_RCVBUF, 1000);
        final Recorder recorder = new Recorder();
        sa.setNotificationListener(recorder);

        final int sent = sendUntilENOBUFS(sa, sb.localAddress()); // monitor off: nothing remembered
        awaitDelivered(sb, sent);
        sa.setOption(RdsOptions.RDS_CONG_MONITOR, true);
        sa.configureBlocking(true);
        sa.setOption(RdsOptions.SO_SNDTIMEO, WAIT);
        final long congBlockedBefore = a.counters().get("send_cong_blocked");
        final AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
        final Thread sender = new Thread(() ->
        {
            try
            {
                result.set(sa.send(numbered(sent), sb.localAddress()));
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException(ex);
            }
        }, "congested-sender");
        sender.start();
        Await.until(WAIT, () -> Await.blockedIn(sender, "sendBlocking") &&
            a.counters().get("send_cong_blocked") > congBlockedBefore, () -> "sender blocked on congestion");
        drain(sb, 0, sent, sa.localAddress());
        sender.join(WAIT.toMillis());
        assertEquals(SIZE, result.get());
        drain(sb, sent, 1, sa.localAddress());

        pingBarrier(sa);
        pollAll(sa);
        assertEquals(List.of(), recorder.uncongested, "no send was refused with ENOBUFS while monitoring");
    }
}
