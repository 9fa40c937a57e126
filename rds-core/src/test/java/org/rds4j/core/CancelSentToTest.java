package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.AgentGate;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.StackFixture;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.rds4j.core.test.TestAddresses.ip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@link RdsSocket#cancelSentTo}: counts, freed send-buffer bytes, woken senders, other sockets untouched,
 * the send_cancelled counter, and cancelled messages never delivered once the peer appears. On a
 * {@link org.rds4j.core.test.MemoryNetwork}, addresses 127.0.5.x; 127.0.9.5 is a dead peer (no stack has it).
 */
class CancelSentToTest
{
    private static final InetAddress A_IP = ip("127.0.5.1");
    private static final InetAddress LATE_IP = ip("127.0.5.2");
    private static final InetAddress DEAD_IP = ip("127.0.9.5");
    private static final InetSocketAddress DEAD_7000 = new InetSocketAddress(DEAD_IP, 7000);
    private static final InetSocketAddress DEAD_7001 = new InetSocketAddress(DEAD_IP, 7001);
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final StackFixture stacks = fixture();

    /** @return the stacks: in memory; {@link DriverCancelSentToTest} attaches each to a driver instead. */
    StackFixture fixture()
    {
        return new MemoryStacks();
    }

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private static ByteBuffer payload(final int size, final int value)
    {
        final byte[] bytes = new byte[size];
        Arrays.fill(bytes, (byte)value);
        return ByteBuffer.wrap(bytes);
    }

    private static long counter(final RdsStack stack, final String name)
    {
        return stack.counters().get(name);
    }

    private static int unackedTo(final RdsStack stack, final InetAddress local, final InetAddress remote)
    {
        int unacked = 0;
        for (final RdsStack.ConnectionInfo info : stack.connections())
        {
            if (info.local().equals(local) && info.remote().equals(remote))
            {
                unacked += info.unacked();
            }
        }
        return unacked;
    }

    private static void send(final RdsSocket socket, final int count, final InetSocketAddress destination, final int value)
        throws Exception
    {
        for (int i = 0; i < count; i++)
        {
            assertEquals(100, socket.send(payload(100, value), destination), "message " + i + " to " + destination);
        }
    }

    @Test
    void cancelDropsExactlyThatDestinationsMessages() throws Exception
    {
        final RdsStack a = stacks.open("cancel-a");
        final RdsSocket s = a.openSocket().bind(new InetSocketAddress(A_IP, 10));
        s.configureBlocking(false);
        send(s, 5, DEAD_7000, 1);
        send(s, 3, DEAD_7001, 2);
        assertEquals(800, s.sendQueuedBytes());
        Await.until(WAIT, () -> unackedTo(a, A_IP, DEAD_IP) == 8, () -> "8 queued on the connection");

        assertEquals(5, s.cancelSentTo(DEAD_7000));
        assertEquals(300, s.sendQueuedBytes());
        assertEquals(3, unackedTo(a, A_IP, DEAD_IP));
        assertEquals(0, s.cancelSentTo(DEAD_7000));
        assertEquals(300, s.sendQueuedBytes());
        assertEquals(3, s.cancelSentTo(DEAD_7001));
        assertEquals(0, s.sendQueuedBytes());
        assertEquals(0, unackedTo(a, A_IP, DEAD_IP));
        assertEquals(8L, counter(a, "send_cancelled"));
    }

    @Test
    void cancelOnUnboundSocketIsENOTCONN() throws Exception
    {
        final RdsStack a = stacks.open("cancel-a");
        assertEquals(RdsResult.ENOTCONN, a.openSocket().cancelSentTo(DEAD_7000));
        assertEquals(0L, counter(a, "send_cancelled"));
    }

    @Test
    void cancelWakesSenderBlockedOnFullSendBuffer() throws Exception
    {
        final RdsStack a = stacks.open("cancel-a");
        final RdsSocket s = a.openSocket().bind(new InetSocketAddress(A_IP, 11));
        s.setOption(RdsOptions.SO_SNDBUF, 1000);
        s.configureBlocking(false);
        send(s, 10, DEAD_7000, 3);
        assertEquals(RdsResult.EAGAIN, s.send(payload(100, 3), DEAD_7000));
        s.configureBlocking(true);
        s.setOption(RdsOptions.SO_SNDTIMEO, Duration.ZERO);

        final AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread sender = new Thread(() ->
        {
            try
            {
                result.set(s.send(payload(100, 4), DEAD_7000));
            }
            catch (final Throwable t)
            {
                failure.set(t);
            }
        }, "blocked-sender");
        sender.start();
        Await.until(WAIT, () -> Await.blockedIn(sender, "sendBlocking"), () -> "sender parked: " + sender.getState());

        assertEquals(10, s.cancelSentTo(DEAD_7000));
        sender.join(WAIT.toMillis());
        if (sender.isAlive())
        {
            s.close();
            sender.join(WAIT.toMillis());
            throw new AssertionError("cancelSentTo did not wake the blocked sender");
        }
        assertNull(failure.get());
        assertEquals(100, result.get());
        assertEquals(100, s.sendQueuedBytes());
        assertEquals(10L, counter(a, "send_cancelled"));
    }

    @Test
    void cancelLeavesOtherSocketsMessagesToTheSameDestination() throws Exception
    {
        final RdsStack a = stacks.open("cancel-a");
        final RdsSocket s1 = a.openSocket().bind(new InetSocketAddress(A_IP, 12));
        final RdsSocket s2 = a.openSocket().bind(new InetSocketAddress(A_IP, 13));
        s1.configureBlocking(false);
        s2.configureBlocking(false);
        send(s1, 4, DEAD_7000, 5);
        send(s2, 3, DEAD_7000, 6);
        Await.until(WAIT, () -> unackedTo(a, A_IP, DEAD_IP) == 7, () -> "7 queued on the connection");

        assertEquals(4, s1.cancelSentTo(DEAD_7000));
        assertEquals(0, s1.sendQueuedBytes());
        assertEquals(300, s2.sendQueuedBytes());
        assertEquals(3, unackedTo(a, A_IP, DEAD_IP));
        assertEquals(4L, counter(a, "send_cancelled"));

        assertEquals(3, s2.cancelSentTo(DEAD_7000));
        assertEquals(0, s2.sendQueuedBytes());
        assertEquals(0, unackedTo(a, A_IP, DEAD_IP));
        assertEquals(7L, counter(a, "send_cancelled"));
    }

    @Test
    void cancelledMessagesAreNotDeliveredWhenThePeerAppears() throws Exception
    {
        final AgentGate gate = new AgentGate();
        final RdsStack a = stacks.openGated("cancel-a", gate);
        final RdsSocket s = a.openSocket().bind(new InetSocketAddress(A_IP, 14));
        final InetSocketAddress late7000 = new InetSocketAddress(LATE_IP, 7000);
        final InetSocketAddress late7001 = new InetSocketAddress(LATE_IP, 7001);
        s.configureBlocking(false);
        assertEquals(3, s.send(ByteBuffer.wrap(new byte[] {1, 1, 1}), late7000));
        assertEquals(3, s.send(ByteBuffer.wrap(new byte[] {2, 2, 2}), late7001));
        assertEquals(3, s.send(ByteBuffer.wrap(new byte[] {3, 3, 3}), late7000));
        assertEquals(2, s.cancelSentTo(late7000));
        assertEquals(3, s.sendQueuedBytes());
        assertEquals(3, s.send(ByteBuffer.wrap(new byte[] {4, 4, 4}), late7000));

        // the late node listens from its first bind: held, a cannot connect and deliver to 7001 before it is bound
        // (a message to a port nobody has bound is dropped, as in the kernel)
        gate.hold = true;
        Await.until(WAIT, () -> gate.held, () -> "a's agent held");
        final RdsStack late = stacks.open("cancel-late");
        final RdsSocket r7000 = late.openSocket().bind(late7000);
        final RdsSocket r7001 = late.openSocket().bind(late7001);
        gate.hold = false;
        r7000.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        r7001.setOption(RdsOptions.SO_RCVTIMEO, WAIT);

        final ByteBuffer dst = ByteBuffer.allocate(16);
        assertEquals(s.localAddress(), r7001.receive(dst));
        assertArrayEquals(new byte[] {2, 2, 2}, Arrays.copyOf(dst.array(), dst.position()));
        dst.clear();
        assertEquals(s.localAddress(), r7000.receive(dst));
        assertArrayEquals(new byte[] {4, 4, 4}, Arrays.copyOf(dst.array(), dst.position()),
            "the first message to arrive at 7000 is the one sent after the cancel");
        r7000.configureBlocking(false);
        r7001.configureBlocking(false);
        assertNull(r7000.receive(dst));
        assertNull(r7001.receive(dst));
        Await.until(WAIT, () -> s.sendQueuedBytes() == 0, () -> "acked, queued " + s.sendQueuedBytes());
        assertEquals(2L, counter(a, "send_cancelled"));
    }

    /**
     * Messages whose send returned before cancelSentTo was called must all be cancelled, however many the
     * agent has not yet moved from the socket into the connection. The agent is held (deterministically)
     * while 300 messages are queued, so that they are all still in the socket's hand-off queue.
     */
    @Test
    void cancelRemovesEveryMessageQueuedBeforeTheCall() throws Exception
    {
        final AgentGate gate = new AgentGate();
        final RdsStack a = stacks.openGated("cancel-gated", gate);
        final RdsSocket s = a.openSocket().bind(new InetSocketAddress(A_IP, 15));
        s.configureBlocking(false);
        a.connections(); // the agent has run the bind

        gate.hold = true;
        Await.until(WAIT, () -> gate.held, () -> "agent held");
        send(s, 300, DEAD_7000, 7);
        assertEquals(30_000, s.sendQueuedBytes());

        final AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
        final Thread canceller = new Thread(() ->
        {
            try
            {
                result.set(s.cancelSentTo(DEAD_7000));
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException(ex);
            }
        }, "canceller");
        canceller.start();
        // cancelSentTo has queued its command and waits for the agent's answer
        Await.until(WAIT, () -> Await.blockedIn(canceller, "cancelSentTo"), () -> "canceller waiting");
        gate.hold = false;
        canceller.join(WAIT.toMillis());

        final int queuedOnConnection = unackedTo(a, A_IP, DEAD_IP);
        assertEquals(300, result.get(), "cancelled; still queued on the connection afterwards: " + queuedOnConnection +
            ", send buffer bytes " + s.sendQueuedBytes());
        assertEquals(0, s.sendQueuedBytes());
        assertEquals(0, queuedOnConnection);
        assertEquals(300L, counter(a, "send_cancelled"));
    }
}
