package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsPeerListener;
import org.rds4j.RdsResult;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.StackFixture;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Push delivery ({@link RdsSocket#startDelivery}): order per socket on a pool of threads, one handler run at a
 * time, back-pressure from a held handler, notifications in line, the end at close; and the stack's peer
 * listener ({@link RdsStack#setPeerListener}). On a {@link org.rds4j.core.test.MemoryNetwork}, addresses
 * 127.0.62.x.
 */
class PushDeliveryTest
{
    private static final InetAddress A_IP = ip("127.0.62.1");
    private static final InetAddress B_IP = ip("127.0.62.2");
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int SIZE = 100;

    private final StackFixture stacks = fixture();

    /** @return the stacks: in memory; {@link DriverPushDeliveryTest} attaches each to a driver instead. */
    StackFixture fixture()
    {
        return new MemoryStacks();
    }
    private final ExecutorService pool = Executors.newFixedThreadPool(4, r ->
    {
        final Thread thread = new Thread(r, "push-pool");
        thread.setDaemon(true);
        return thread;
    });

    @AfterEach
    void tearDown() throws Exception
    {
        stacks.close();
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    }

    private static RdsSocket bound(final RdsStack stack, final InetAddress ip, final int port) throws Exception
    {
        return stack.openSocket().bind(new InetSocketAddress(ip, port));
    }

    private static ByteBuffer numbered(final int n)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(SIZE);
        buffer.putInt(0, n);
        return buffer;
    }

    private static int send(final RdsSocket socket, final ByteBuffer payload, final InetSocketAddress destination)
    {
        try
        {
            return socket.send(payload, destination);
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }

    /** Records the numbers of the messages it gets, the threads it ran on and how many of its runs overlapped. */
    private static final class Recorder
    {
        final List<Integer> numbers = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        final AtomicInteger running = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();

        void onMessage(final ByteBuffer payload)
        {
            if (running.incrementAndGet() > 1)
            {
                overlaps.incrementAndGet();
            }
            threads.add(Thread.currentThread().getName());
            numbers.add(payload.getInt(payload.position()));
            running.decrementAndGet();
        }
    }

    @Test
    void messagesOfEachSocketAreHandedOverInOrderOneAtATimeOnTheExecutor() throws Exception
    {
        final int count = 2000;
        final RdsStack a = stacks.open("push-a");
        final RdsStack b = stacks.open("push-b");
        final RdsSocket sa = bound(a, A_IP, 100);
        final RdsSocket[] receivers = {bound(b, B_IP, 200), bound(b, B_IP, 201), bound(b, B_IP, 202)};
        final Recorder[] recorders = new Recorder[receivers.length];
        for (int r = 0; r < receivers.length; r++)
        {
            final Recorder recorder = new Recorder();
            recorders[r] = recorder;
            receivers[r].startDelivery(pool, (sender, payload) -> recorder.onMessage(payload));
        }
        for (int i = 0; i < count; i++)
        {
            for (final RdsSocket receiver : receivers)
            {
                assertEquals(SIZE, sa.send(numbered(i), receiver.localAddress()));
            }
        }
        for (int r = 0; r < receivers.length; r++)
        {
            final Recorder recorder = recorders[r];
            Await.until(WAIT, () -> recorder.numbers.size() == count, () -> recorder.numbers.size() + " delivered");
            for (int i = 0; i < count; i++)
            {
                assertEquals(i, recorder.numbers.get(i), "socket " + r + ", message " + i);
            }
            assertEquals(0, recorder.overlaps.get(), "two handler runs of one socket at once");
            assertTrue(recorder.threads.stream().allMatch("push-pool"::equals), "on the executor");
            assertEquals(0, receivers[r].receiveQueuedBytes());
        }
    }

    @Test
    void aHeldHandlerKeepsItsBytesCountedAndCongestsThePort() throws Exception
    {
        final RdsStack a = stacks.open("push-a");
        final RdsStack b = stacks.open("push-b");
        final RdsSocket sa = bound(a, A_IP, 101);
        final RdsSocket sb = bound(b, B_IP, 203);
        sb.setOption(RdsOptions.SO_RCVBUF, 10 * SIZE);
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch holding = new CountDownLatch(1);
        final List<Integer> numbers = new CopyOnWriteArrayList<>();
        sb.startDelivery(pool, (sender, payload) ->
        {
            holding.countDown();
            try
            {
                release.await();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            numbers.add(payload.getInt(payload.position()));
        });

        // the handler holds the first message: what follows piles up until the port is congested
        sa.configureBlocking(false);
        int sent = 0;
        final long deadline = System.nanoTime() + WAIT.toNanos();
        int result;
        while ((result = sa.send(numbered(sent), sb.localAddress())) != RdsResult.ENOBUFS)
        {
            if (result == SIZE)
            {
                sent++;
            }
            else
            {
                assertEquals(RdsResult.EAGAIN, result);
            }
            assertTrue(System.nanoTime() - deadline < 0, "no ENOBUFS after " + sent + " messages");
        }
        assertTrue(holding.await(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        // through a driver the port congests on the driver's count; this side's follows once its reader has read
        // what the driver delivered
        Await.until(WAIT, () -> sb.receiveQueuedBytes() > 10 * SIZE,
            () -> "the held message and those after it stay counted: " + sb.receiveQueuedBytes());
        assertTrue(numbers.isEmpty());

        release.countDown();
        final int total = sent;
        Await.until(WAIT, () -> numbers.size() == total, () -> numbers.size() + " of " + total + " delivered");
        for (int i = 0; i < total; i++)
        {
            assertEquals(i, numbers.get(i));
        }
        Await.until(WAIT, () -> sb.receiveQueuedBytes() == 0, () -> sb.receiveQueuedBytes() + " bytes left");
        // the port is released once drained: sends go through again
        Await.until(WAIT, () -> send(sa, numbered(total), sb.localAddress()) == SIZE, () -> "uncongested");
        Await.until(WAIT, () -> numbers.size() == total + 1, () -> "the last one delivered");
    }

    @Test
    void notificationsGoToTheListenerOnTheExecutorBeforeLaterMessages() throws Exception
    {
        final RdsStack a = stacks.open("push-a");
        final RdsStack b = stacks.open("push-b");
        final RdsSocket sa = bound(a, A_IP, 102);
        final RdsSocket sb = bound(b, B_IP, 204);
        final List<String> events = new CopyOnWriteArrayList<>();
        sa.startDelivery(pool, (sender, payload) -> events.add("message " + payload.getInt(payload.position())),
            new RdsNotificationListener()
            {
                @Override
                public void onPeerUp(final InetAddress peer)
                {
                    events.add("up " + peer.getHostAddress() + " on " + Thread.currentThread().getName());
                }
            });
        assertEquals(SIZE, sa.send(numbered(0), sb.localAddress()));
        final ByteBuffer dst = ByteBuffer.allocate(SIZE);
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(sa.localAddress(), sb.receive(dst));
        assertEquals(SIZE, sb.send(numbered(5), sa.localAddress()));
        Await.until(WAIT, () -> events.size() == 2, events::toString);
        assertEquals(List.of("up 127.0.62.2 on push-pool", "message 5"), events);
    }

    @Test
    void deliveryEndsWhenTheSocketCloses() throws Exception
    {
        final RdsStack a = stacks.open("push-a");
        final RdsStack b = stacks.open("push-b");
        final RdsSocket sa = bound(a, A_IP, 103);
        final RdsSocket sb = bound(b, B_IP, 205);
        final AtomicInteger handled = new AtomicInteger();
        assertThrows(ClosedChannelException.class, () ->
        {
            final RdsSocket closed = b.openSocket();
            closed.close();
            closed.startDelivery(pool, (sender, payload) -> { });
        });
        sb.startDelivery(pool, (sender, payload) -> handled.incrementAndGet());
        assertThrows(IllegalStateException.class, () -> sb.startDelivery(pool, (sender, payload) -> { }));
        assertThrows(IllegalStateException.class, () -> b.openSelector().register(sb, RdsSelector.OP_READ, null));
        assertEquals(SIZE, sa.send(numbered(0), sb.localAddress()));
        Await.until(WAIT, () -> handled.get() == 1, () -> "delivered");
        sb.close();
        // the socket let its delivery go: nothing more runs (the stack forgot the socket, so nothing arrives for
        // it), and a socket bound to the same port starts afresh
        final RdsSocket again = bound(b, B_IP, 205);
        final List<Integer> numbers = new CopyOnWriteArrayList<>();
        again.startDelivery(pool, (sender, payload) -> numbers.add(payload.getInt(payload.position())));
        assertEquals(SIZE, sa.send(numbered(1), again.localAddress()));
        Await.until(WAIT, () -> numbers.size() == 1, () -> "delivered to the new socket");
        assertEquals(List.of(1), numbers);
        assertEquals(1, handled.get());
    }

    @Test
    void theStackPeerListenerGetsUpAndDownOnItsExecutorWithoutAnySocketPolling() throws Exception
    {
        final RdsStack a = stacks.open("push-a");
        final RdsStack b = stacks.open("push-b");
        final List<String> events = new CopyOnWriteArrayList<>();
        a.setPeerListener(pool, new RdsPeerListener()
        {
            @Override
            public void onPeerUp(final InetAddress local, final InetAddress peer)
            {
                events.add("up " + local.getHostAddress() + " " + peer.getHostAddress() + " " +
                    Thread.currentThread().getName());
            }

            @Override
            public void onPeerDown(final InetAddress local, final InetAddress peer)
            {
                events.add("down " + local.getHostAddress() + " " + peer.getHostAddress() + " " +
                    Thread.currentThread().getName());
            }
        });
        // a send-only socket, never polled
        final RdsSocket sa = bound(a, A_IP, 104);
        final RdsSocket sb = bound(b, B_IP, 206);
        assertEquals(SIZE, sa.send(numbered(0), sb.localAddress()));
        Await.until(WAIT, () -> events.size() == 1, events::toString);
        assertEquals("up 127.0.62.1 127.0.62.2 push-pool", events.get(0));
        b.close();
        Await.until(WAIT, () -> events.size() == 2, events::toString);
        assertEquals("down 127.0.62.1 127.0.62.2 push-pool", events.get(1));

        a.setPeerListener(pool, null);
        final RdsStack c = stacks.open("push-c");
        final RdsSocket sc = bound(c, ip("127.0.62.3"), 207);
        sc.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(SIZE, sa.send(numbered(1), sc.localAddress()));
        assertEquals(sa.localAddress(), sc.receive(ByteBuffer.allocate(SIZE)));
        Await.until(WAIT, () -> a.connections().stream().anyMatch(i -> i.remote().equals(sc.localAddress().getAddress())
            && i.state().equals("UP")), () -> "connected to c");
        assertFalse(Await.within(Duration.ofMillis(200), () -> events.size() > 2), "no listener, no event: " + events);
    }
}
