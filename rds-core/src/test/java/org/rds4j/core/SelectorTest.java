package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsClaim;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSelectionKey;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.Threading;
import org.rds4j.core.test.AgentGate;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.FixtureTest;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * {@link RdsSelector}: exact readiness (readable when and only when a message or a notification is queued,
 * writable when acks free room, an error on close), wake-ups and deadlines, many sockets, and the INVOKER mode,
 * where a waiting select is what drives the stack. On a {@link org.rds4j.core.test.MemoryNetwork}, addresses
 * 127.0.61.x; {@code TcpSelectorTest} runs the same over TCP, where the thread leading the duty cycle idles in the
 * TCP selector.
 */
public class SelectorTest extends FixtureTest
{
    private static final InetAddress A_IP = ip("127.0.61.1");
    private static final InetAddress B_IP = ip("127.0.61.2");
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final long WAIT_MS = WAIT.toMillis();

    private static RdsSocket bound(final RdsStack stack, final InetAddress ip, final int port) throws Exception
    {
        return stack.openSocket().bind(new InetSocketAddress(ip, port));
    }

    private static ByteBuffer numbered(final int size, final int n)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(size);
        if (size >= Integer.BYTES)
        {
            buffer.putInt(0, n);
        }
        return buffer;
    }

    /** A selected key, taken out of the selected-key set. */
    private static RdsSelectionKey takeOnly(final RdsSelector selector)
    {
        final Set<RdsSelectionKey> selected = selector.selectedKeys();
        assertEquals(1, selected.size(), selected.toString());
        final RdsSelectionKey key = selected.iterator().next();
        selected.clear();
        return key;
    }

    private static Thread start(final String name, final Runnable body)
    {
        final Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    // ---------------------------------------------------------------- readiness

    @Test
    void readableWhenAndOnlyWhenAMessageIsQueued() throws Exception
    {
        final RdsStack a = stacks.open("sel-a");
        final RdsStack b = stacks.open("sel-b");
        final RdsSocket sa = bound(a, A_IP, 100);
        final RdsSocket sb = bound(b, B_IP, 200);
        final RdsSelector selector = b.openSelector();
        final Object attachment = new Object();
        final RdsSelectionKey key = selector.register(sb, RdsSelector.OP_READ, attachment);
        assertEquals(0, selector.selectNow(), "nothing queued");
        assertTrue(selector.selectedKeys().isEmpty());

        // two messages, the second empty: an empty message is readable too
        assertEquals(4, sa.send(numbered(4, 7), sb.localAddress()));
        assertEquals(0, sa.send(ByteBuffer.allocate(0), sb.localAddress()));
        assertEquals(1, selector.select(WAIT_MS));
        assertSame(key, takeOnly(selector));
        assertEquals(RdsSelector.OP_READ, key.readyOps());
        assertTrue(key.isReadable());
        assertFalse(key.isWritable());
        assertSame(attachment, key.attachment());
        assertSame(sb, key.socket());

        // level-triggered: still queued, still readable
        assertEquals(1, selector.selectNow());
        assertSame(key, takeOnly(selector));
        final ByteBuffer dst = ByteBuffer.allocate(16);
        assertEquals(sa.localAddress(), sb.receive(dst));
        assertEquals(7, dst.getInt(0));
        Await.until(WAIT, () -> sb.receiveQueuedBytes() == 0 && selector.selectNow() == 1, () -> "empty one queued");
        assertSame(key, takeOnly(selector));
        dst.clear();
        assertEquals(sa.localAddress(), sb.receive(dst));
        assertEquals(0, dst.position());
        assertEquals(0, selector.selectNow(), "both taken");
        assertEquals(0, selector.select(50), "both taken");
    }

    @Test
    void aQueuedNotificationMakesTheSocketReadable() throws Exception
    {
        final RdsStack a = stacks.open("sel-a");
        final RdsStack b = stacks.open("sel-b");
        final RdsSocket sa = bound(a, A_IP, 101);
        final RdsSocket sb = bound(b, B_IP, 201);
        final List<InetAddress> up = new ArrayList<>();
        sa.setNotificationListener(new RdsNotificationListener()
        {
            @Override
            public void onPeerUp(final InetAddress peer)
            {
                up.add(peer);
            }
        });
        final RdsSelector selector = a.openSelector();
        final RdsSelectionKey key = selector.register(sa, RdsSelector.OP_READ, null);
        assertEquals(0, selector.selectNow());
        assertEquals(1, sa.send(ByteBuffer.allocate(1), sb.localAddress()));
        // sa receives no message: only the peer-up notification can make it readable
        assertEquals(1, selector.select(WAIT_MS));
        assertSame(key, takeOnly(selector));
        assertEquals(RdsSelector.OP_READ, key.readyOps());
        assertTrue(up.isEmpty(), "not delivered before the poll");
        assertEquals(0, sa.poll((sender, payload) -> { }, 10), "no message");
        assertEquals(List.of(B_IP), up);
        assertEquals(0, selector.selectNow(), "the notification was taken");
    }

    @Test
    void writableWhenAcksFreeRoomAndNotBefore() throws Exception
    {
        final RdsStack a = stacks.open("sel-a");
        final AgentGate gate = new AgentGate();
        final RdsStack b = stacks.openGated("sel-b", gate);
        final RdsSocket sa = bound(a, A_IP, 102);
        final RdsSocket sb = bound(b, B_IP, 202);
        sa.setOption(RdsOptions.SO_SNDBUF, 1000);
        final RdsSelector selector = a.openSelector();
        final RdsSelectionKey key = selector.register(sa, RdsSelector.OP_WRITE, null);
        assertEquals(1, selector.selectNow());
        assertSame(key, takeOnly(selector));
        assertEquals(RdsSelector.OP_WRITE, key.readyOps());

        // B's agent held: nothing is acked, so the send buffer stays full once filled
        gate.hold = true;
        Await.until(WAIT, () -> gate.held, () -> "B's agent held");
        sa.configureBlocking(false);
        int sent = 0;
        int result;
        while ((result = sa.send(numbered(100, sent), sb.localAddress())) == 100)
        {
            sent++;
        }
        assertEquals(RdsResult.EAGAIN, result);
        assertEquals(10, sent);
        assertEquals(1000, sa.sendQueuedBytes());
        assertEquals(0, selector.selectNow(), "full");
        final long start = System.nanoTime();
        assertEquals(0, selector.select(200), "full until the deadline");
        final long waitedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(waitedMs >= 190 && waitedMs < 5_000, "select(200) returned after " + waitedMs + " ms");

        gate.hold = false;
        assertEquals(1, selector.select(WAIT_MS), "acks free room");
        assertSame(key, takeOnly(selector));
        assertEquals(RdsSelector.OP_WRITE, key.readyOps());
        assertTrue(sa.sendQueuedBytes() < 1000);
        assertEquals(100, sa.send(numbered(100, sent), sb.localAddress()), "room, as select said");
    }

    /** Room freed by an application thread (a claim's abort) ends a select waiting for it: no duty cycle is involved. */
    @Test
    void anAbortedClaimMakesTheSocketWritableForASelectInProgress() throws Exception
    {
        final RdsStack b = stacks.open("sel-b");
        final RdsSocket sb = bound(b, B_IP, 210);
        sb.setOption(RdsOptions.SO_SNDBUF, 100);
        final RdsClaim claim = new RdsClaim();
        assertEquals(100, sb.tryClaim(100, new InetSocketAddress(A_IP, 110), claim));
        final RdsSelector selector = b.openSelector();
        final RdsSelectionKey key = selector.register(sb, RdsSelector.OP_WRITE, null);
        assertEquals(0, selector.selectNow(), "the claim holds the whole buffer");
        final AtomicInteger found = new AtomicInteger(-1);
        final Thread selecting = start("sel-abort", () -> found.set(selector.select()));
        Await.until(WAIT, () -> Await.blockedIn(selecting, "selectWaiting"), () -> "select blocked");
        Await.until(WAIT, () -> Await.idling(selecting), () -> "select idling"); // past its spinning and yielding
        assertTrue(selecting.isAlive());
        claim.abort();
        selecting.join(WAIT_MS);
        assertFalse(selecting.isAlive(), "select returned");
        assertEquals(1, found.get());
        assertSame(key, takeOnly(selector));
        assertEquals(RdsSelector.OP_WRITE, key.readyOps());
    }

    @Test
    void anErrorIsReportedOnceWhenTheSocketOrItsStackCloses() throws Exception
    {
        final RdsStack b = stacks.open("sel-b");
        final RdsSocket one = bound(b, B_IP, 203);
        final RdsSocket two = b.openSocket(); // unbound sockets can be registered too
        final RdsSelector selector = b.openSelector();
        final RdsSelectionKey keyOne = selector.register(one, RdsSelector.OP_READ, "one");
        final RdsSelectionKey keyTwo = selector.register(two, 0, "two");
        assertEquals(0, selector.selectNow());

        one.close();
        assertEquals(1, selector.select(WAIT_MS));
        assertSame(keyOne, takeOnly(selector));
        assertEquals(RdsSelector.OP_ERROR, keyOne.readyOps());
        assertTrue(keyOne.isError());
        assertFalse(keyOne.isValid(), "cancelled once reported");
        assertThrows(CancelledKeyException.class, () -> keyOne.interestOps(RdsSelector.OP_READ));
        assertEquals(Set.of(keyTwo), selector.keys());
        assertEquals(0, selector.selectNow(), "reported once");

        // a blocked select returns when the stack closes: it closes its sockets
        final AtomicInteger found = new AtomicInteger(-1);
        final Thread selecting = start("sel-close", () -> found.set(selector.select()));
        Await.until(WAIT, () -> Await.blockedIn(selecting, "selectWaiting"), () -> "select blocked");
        b.close();
        selecting.join(WAIT_MS);
        assertEquals(1, found.get());
        assertSame(keyTwo, takeOnly(selector));
        assertEquals(RdsSelector.OP_ERROR, keyTwo.readyOps());
        assertTrue(selector.keys().isEmpty());
        assertTimeoutPreemptively(WAIT, () -> assertEquals(0, selector.select()), "the stack is closed: no waiting");
        assertThrows(ClosedChannelException.class, () -> selector.register(one, RdsSelector.OP_READ, null));
    }

    // ---------------------------------------------------------------- wake-ups and deadlines

    @Test
    void aSelectWithoutTimeoutReturnsWhenAMessageArrives() throws Exception
    {
        final RdsStack a = stacks.open("sel-a");
        final RdsStack b = stacks.open("sel-b");
        final RdsSocket sa = bound(a, A_IP, 104);
        final RdsSocket sb = bound(b, B_IP, 204);
        final RdsSelector selector = b.openSelector();
        final RdsSelectionKey key = selector.register(sb, RdsSelector.OP_READ, null);
        final AtomicInteger found = new AtomicInteger(-1);
        final Thread selecting = start("sel-msg", () -> found.set(selector.select()));
        Await.until(WAIT, () -> Await.blockedIn(selecting, "selectWaiting"), () -> "select blocked");
        Await.until(WAIT, () -> Await.idling(selecting), () -> "select idling"); // past its spinning and yielding
        assertEquals(-1, found.get(), "nothing to select yet");
        assertEquals(1, sa.send(ByteBuffer.allocate(1), sb.localAddress()));
        selecting.join(WAIT_MS);
        assertFalse(selecting.isAlive(), "select returned");
        assertEquals(1, found.get());
        assertSame(key, takeOnly(selector));
    }

    @Test
    void wakeupEndsASelectInProgressOrTheNextOne() throws Exception
    {
        final RdsStack b = stacks.open("sel-b");
        final RdsSelector selector = b.openSelector();
        selector.register(bound(b, B_IP, 205), RdsSelector.OP_READ, null);
        final AtomicInteger found = new AtomicInteger(-1);
        // the longest timeout there is: no limit, not a deadline wrapped round into the past
        final Thread selecting = start("sel-wakeup", () -> found.set(selector.select(Long.MAX_VALUE)));
        Await.until(WAIT, () -> Await.blockedIn(selecting, "selectWaiting"), () -> "select blocked");
        Await.until(WAIT, () -> Await.idling(selecting), () -> "select idling"); // past its spinning and yielding
        assertTrue(selecting.isAlive());
        selector.wakeup();
        selecting.join(WAIT_MS);
        assertFalse(selecting.isAlive(), "woken");
        assertEquals(0, found.get());

        // a wake-up with no select in progress ends the next one at once, and only that one
        selector.wakeup();
        assertTimeoutPreemptively(WAIT, () -> assertEquals(0, selector.select()));
        final long start = System.nanoTime();
        assertEquals(0, selector.select(100));
        assertTrue(System.nanoTime() - start >= 90_000_000L, "the wake-up was used up");
    }

    @Test
    void selectNowNeverBlocksAndAnInterruptEndsASelect() throws Exception
    {
        final RdsStack b = stacks.open(stacks.config("sel-b").toBuilder().threading(Threading.INVOKER).build());
        final RdsSelector selector = b.openSelector();
        assertTimeoutPreemptively(WAIT, () -> assertEquals(0, selector.selectNow()), "empty");
        selector.register(bound(b, B_IP, 206), RdsSelector.OP_READ, null);
        assertTimeoutPreemptively(WAIT, () ->
        {
            for (int i = 0; i < 1000; i++)
            {
                assertEquals(0, selector.selectNow());
            }
        });

        final AtomicInteger found = new AtomicInteger(-1);
        final AtomicBoolean interrupted = new AtomicBoolean();
        final Thread selecting = start("sel-intr", () ->
        {
            found.set(selector.select());
            interrupted.set(Thread.currentThread().isInterrupted());
        });
        Await.until(WAIT, () -> Await.blockedIn(selecting, "selectWaiting"), () -> "select blocked");
        selecting.interrupt();
        selecting.join(WAIT_MS);
        assertEquals(0, found.get());
        assertTrue(interrupted.get(), "the interrupt status is left set");
    }

    // ---------------------------------------------------------------- many sockets, INVOKER mode

    @Test
    void aThousandSocketsOnOneSelectorAreEachReportedExactlyOnce() throws Exception
    {
        final int count = 1000;
        final RdsStack a = stacks.open("sel-a");
        final RdsStack b = stacks.open("sel-b");
        final RdsSocket sa = bound(a, A_IP, 107);
        final RdsSelector selector = b.openSelector();
        final List<RdsSocket> sockets = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            final RdsSocket socket = bound(b, B_IP, 10_000 + i);
            sockets.add(socket);
            selector.register(socket, RdsSelector.OP_READ, i);
        }
        for (int i = 0; i < count; i++)
        {
            assertEquals(Integer.BYTES, sa.send(numbered(Integer.BYTES, i), sockets.get(i).localAddress()));
        }
        final int[] reported = new int[count];
        final Map<Integer, Integer> payloads = new HashMap<>();
        int handled = 0;
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (handled < count && System.nanoTime() - deadline < 0)
        {
            selector.select(WAIT_MS);
            for (final RdsSelectionKey key : selector.selectedKeys())
            {
                final int index = (Integer)key.attachment();
                reported[index]++;
                final int polled = key.socket().poll((sender, payload) -> payloads.put(index, payload.getInt(payload.position())), 10);
                assertEquals(1, polled, "socket " + index);
                handled++;
            }
            selector.selectedKeys().clear();
        }
        // once failed in CI with 652 handled, and left nothing else to go on: the counters say whether the rest
        // were sent, delivered, or delivered and not reported
        if (handled != count)
        {
            fail(handled + " of " + count + " reported; the sender's counters " + a.counters() + ", the receiver's " +
                b.counters() + ", unreported sockets holding a message: " + unreportedReady(sockets, reported));
        }
        for (int i = 0; i < count; i++)
        {
            assertEquals(1, reported[i], "socket " + i + " reported");
            assertEquals(i, payloads.get(i), "socket " + i + "'s message");
        }
        assertEquals(0, selector.selectNow(), "nothing left");
    }

    private static List<Integer> unreportedReady(final List<RdsSocket> sockets, final int[] reported) throws IOException
    {
        final List<Integer> ready = new ArrayList<>();
        for (int i = 0; i < sockets.size(); i++)
        {
            if (reported[i] == 0 && sockets.get(i).poll((sender, payload) -> { }, 1) > 0)
            {
                ready.add(i);
            }
        }
        return ready;
    }

    @Test
    void inInvokerModeAWaitingSelectDrivesTheStack() throws Exception
    {
        final RdsStack a = stacks.open(stacks.config("sel-a").toBuilder().threading(Threading.INVOKER).build());
        final RdsStack b = stacks.open(stacks.config("sel-b").toBuilder().threading(Threading.INVOKER).build());
        final RdsSocket sa = bound(a, A_IP, 108);
        final RdsSocket sb = bound(b, B_IP, 208);
        final RdsSelector selector = b.openSelector();
        final RdsSelectionKey key = selector.register(sb, RdsSelector.OP_READ, null);
        // A is driven by its own loop; B only by the select below
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread driver = start("sel-drive-a", () ->
        {
            try
            {
                while (running.get())
                {
                    if (a.invoke() == 0)
                    {
                        Thread.onSpinWait();
                    }
                }
            }
            catch (final Throwable t)
            {
                failure.set(t);
            }
        });
        try
        {
            sa.configureBlocking(false);
            for (int i = 0; i < 3; i++)
            {
                assertEquals(Integer.BYTES, sa.send(numbered(Integer.BYTES, i), sb.localAddress()));
            }
            sb.configureBlocking(false);
            final ByteBuffer dst = ByteBuffer.allocate(8);
            int received = 0;
            while (received < 3)
            {
                assertTrue(selector.select(WAIT_MS) > 0, "B's select drove B until the messages came");
                assertSame(key, takeOnly(selector));
                dst.clear();
                while (sb.receive(dst) != null)
                {
                    assertEquals(received++, dst.getInt(0));
                    dst.clear();
                }
            }
            // B's acks go out only while something drives B: a select that waits does
            Await.until(WAIT, () -> selector.select(10) >= 0 && sa.sendQueuedBytes() == 0, () -> "acked");
        }
        finally
        {
            running.set(false);
            driver.join(WAIT_MS);
        }
        assertNull(failure.get());
    }

    // ---------------------------------------------------------------- registration rules

    @Test
    void registrationRules() throws Exception
    {
        final RdsStack a = stacks.open("sel-a");
        final RdsStack b = stacks.open("sel-b");
        final RdsSocket sa = bound(a, A_IP, 109);
        final RdsSocket sb = bound(b, B_IP, 209);
        final RdsSelector selector = b.openSelector();
        final IllegalArgumentException otherStack =
            assertThrows(IllegalArgumentException.class, () -> selector.register(sa, RdsSelector.OP_READ, null));
        assertTrue(otherStack.getMessage().contains("not a socket of stack sel-b"), otherStack.getMessage());
        assertThrows(IllegalArgumentException.class, () -> selector.register(sb, 1 << 4, null));

        final RdsSelectionKey key = selector.register(sb, RdsSelector.OP_READ, "first");
        assertSame(key, selector.register(sb, RdsSelector.OP_WRITE, "second"), "the same key, updated");
        assertEquals(RdsSelector.OP_WRITE, key.interestOps());
        assertEquals("second", key.attachment());
        final RdsSelector other = b.openSelector();
        assertThrows(IllegalStateException.class, () -> other.register(sb, RdsSelector.OP_READ, null));
        assertThrows(IllegalStateException.class, () -> sb.startDelivery(Runnable::run, (sender, payload) -> { }));

        key.cancel();
        assertFalse(key.isValid());
        assertTrue(selector.keys().isEmpty());
        final RdsSelectionKey moved = other.register(sb, RdsSelector.OP_READ, null);
        assertEquals(Set.of(moved), other.keys());

        other.close();
        assertFalse(moved.isValid());
        assertThrows(ClosedSelectorException.class, other::selectNow);
        assertThrows(ClosedSelectorException.class, () -> other.register(sb, RdsSelector.OP_READ, null));
        selector.register(sb, RdsSelector.OP_READ, null); // the closed selector let the socket go
    }
}
