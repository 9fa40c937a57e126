package org.rds4j.transport.tcp;

import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;
import org.rds4j.core.StackOptions;
import org.rds4j.core.test.Await;
import org.rds4j.transport.tcp.FakePeer.Frame;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer that behaves as the kernel's rds_tcp, seen on the wire with a {@link FakePeer}: its handshake answer
 * carries no generation and it never sends an RDS ack. The stack then counts what TCP acked as delivered, and
 * reconnects to it without the unsequenced probe (which would move the kernel's expected sequence back).
 * <p>
 * Addresses: test {@code n} uses 127.0.(190+n).x; the stack at .10 connects to the fake kernel at .20.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KernelPeerTest
{
    private static final int TCP_PORT = 27720;
    private static final Duration T = Duration.ofSeconds(10);

    private RdsStack stack;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        if (stack != null)
        {
            stack.close();
        }
    }

    /**
     * Ten times the send buffer goes to a peer that never acks: every message is released once TCP acked it,
     * so a blocking sender never waits for long, and the peer reads all of them in order.
     */
    @Test
    void whatTcpAckedIsDeliveredForAPeerThatSendsNoAcks() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(1, 20), TCP_PORT));
        final RdsSocket socket = socket(address(1, 10), 5000, 64 * 1024);
        final InetSocketAddress destination = new InetSocketAddress(address(1, 20), 7000);
        final int count = 640;
        final Thread sender = new Thread(() -> sendNumbered(socket, destination, count, 1024), "sender");
        sender.start();

        final FakePeer kernel = track(listener.accept(T));
        kernel.answerProbes(false);
        assertTrue(kernel.readFrame(T).isCongestionUpdate());
        assertTrue(kernel.readFrame(T).isHandshakeProbe());
        kernel.sendKernelPong(1);
        for (int i = 1; i <= count; i++)
        {
            final Frame frame = kernel.readFrame(T);
            assertEquals(i, frame.seq(), frame.toString());
            assertEquals(i - 1, ByteBuffer.wrap(frame.payload()).getInt(0), "message " + i);
        }
        sender.join(T.toMillis());
        assertFalse(sender.isAlive(), "the sender finished");
        Await.until(T, () -> socket.sendQueuedBytes() == 0, () -> "TCP acked everything: " + stack.counters());
        assertEquals(count, counter("send_drop_acked"), "each message released exactly once");
        assertEquals(0, counter("recv_ack_only"), "the peer sent no acks");
    }

    /**
     * The peer's host stops acking (its receive buffer is full), the connection resets, and the stack connects
     * again: the congestion map, then at once the retransmission of exactly the messages TCP had not acked, from
     * the first of them, flagged; no unsequenced probe (the kernel would take its sequence 0 as its next).
     */
    @Test
    void reconnectRetransmitsWhatTcpDidNotAckWithoutAProbe() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(2, 20), TCP_PORT, 16 * 1024));
        final RdsSocket socket = socket(address(2, 10), 5000, 4 << 20);
        final InetSocketAddress destination = new InetSocketAddress(address(2, 20), 7000);
        final int count = 400;
        sendNumbered(socket, destination, count, 4096);
        try (FakePeer first = listener.accept(T))
        {
            first.answerProbes(false);
            first.readFrame(T);
            assertTrue(first.readFrame(T).isHandshakeProbe());
            first.sendKernelPong(1);
            // the fake host acks what fits its buffers, then advertises a zero window
            Await.until(T, () -> counter("send_drop_acked") > 0 && stableFor(socket, 300),
                () -> "TCP acked part of the stream: " + stack.counters());
            assertTrue(socket.sendQueuedBytes() > 0, "and not all of it");
            first.abort();
        }
        final long acked = counter("send_drop_acked");
        assertEquals((count - acked) * 4096, socket.sendQueuedBytes(), "the unacked messages stay queued");

        final FakePeer second = track(listener.accept(T));
        second.answerProbes(false);
        assertTrue(second.readFrame(T).isCongestionUpdate());
        final Frame resumed = second.readFrame(T);
        assertEquals(acked + 1, resumed.seq(), "no probe; the first message TCP had not acked: " + resumed);
        assertEquals(FakePeer.FLAG_RETRANSMITTED, resumed.flags() & FakePeer.FLAG_RETRANSMITTED, resumed.toString());
        assertEquals(acked, ByteBuffer.wrap(resumed.payload()).getInt(0));
        for (long seq = acked + 2; seq <= count; seq++)
        {
            assertEquals(seq, second.readFrame(T).seq());
        }
        Await.until(T, () -> socket.sendQueuedBytes() == 0, () -> "TCP acked the rest: " + stack.counters());
        assertEquals(count, counter("send_drop_acked"));
        assertEquals(1, counter("send_probe"), "one probe, on the first connection only");
    }

    /**
     * A kernel peer that had messages in flight to an earlier process at this address resends them, flagged,
     * as soon as this stack connects, before it has seen the new generation: on this stack's first connection
     * with the peer they are stale and dropped. On a later connection a flagged frame above the expected
     * sequence is a message this process missed, and is delivered.
     */
    @Test
    void retransmissionsMeantForAnEarlierProcessAreNotDelivered() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(4, 20), TCP_PORT));
        final RdsSocket socket = socket(address(4, 10), 5000, 1 << 20);
        sendNumbered(socket, new InetSocketAddress(address(4, 20), 7000), 1, 8);
        try (FakePeer first = listener.accept(T))
        {
            first.answerProbes(false);
            first.readFrame(T);
            assertTrue(first.readFrame(T).isHandshakeProbe());
            first.sendCongestionMap(new byte[8192]);
            first.sendData(40, 0, 7000, 5000, FakePeer.FLAG_RETRANSMITTED, "stale 40".getBytes());
            first.sendData(41, 0, 7000, 5000, FakePeer.FLAG_RETRANSMITTED, "stale 41".getBytes());
            first.sendKernelPong(42);
            first.sendData(43, 0, 7000, 5000, 0, "new 43".getBytes());
            assertEquals("new 43", receiveText(socket));
            assertEquals(2, counter("recv_drop_stale"));
            first.abort();
        }
        final FakePeer second = track(listener.accept(T));
        second.readFrame(T);
        second.sendCongestionMap(new byte[8192]);
        second.sendData(44, 0, 7000, 5000, FakePeer.FLAG_RETRANSMITTED, "missed 44".getBytes());
        assertEquals("missed 44", receiveText(socket));
        assertEquals(2, counter("recv_drop_stale"));
        assertEquals(0, counter("recv_drop_old_seq"));
    }

    private static String receiveText(final RdsSocket socket) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(100);
        socket.setOption(RdsOptions.SO_RCVTIMEO, T);
        socket.receive(buffer);
        buffer.flip();
        return new String(buffer.array(), 0, buffer.limit());
    }

    /**
     * The kernel takes any frame but a congestion update as the next in sequence, so an ack-only frame (sequence
     * 0) would set its next expected sequence back to 1: a kernel TCP peer gets none, even when it asks.
     */
    @Test
    void aKernelPeerOverTcpGetsNoAckOnlyFrames() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(5, 20), TCP_PORT));
        final RdsSocket socket = socket(address(5, 10), 5000, 1 << 20);
        final InetSocketAddress destination = new InetSocketAddress(address(5, 20), 7000);
        sendNumbered(socket, destination, 1, 8);
        final FakePeer kernel = track(listener.accept(T));
        kernel.answerProbes(false);
        kernel.readFrame(T);
        assertTrue(kernel.readFrame(T).isHandshakeProbe());
        kernel.sendKernelPong(1);
        assertEquals(1, kernel.readFrame(T).seq());
        kernel.sendData(2, 0, 7000, 5000, 0, "one".getBytes());
        kernel.sendData(3, 0, 7000, 5000, FakePeer.FLAG_ACK_REQUIRED, "two".getBytes());
        assertEquals("one", receiveText(socket));
        assertEquals("two", receiveText(socket));
        Thread.sleep(100); // 100 times the ack delay: an ack-only frame would have gone by now
        sendNumbered(socket, destination, 1, 8);
        final Frame next = kernel.readFrame(T);
        assertEquals(2, next.seq(), "the next frame is the data, no ack-only frame before it: " + next);
        assertEquals(0, counter("send_ack_only"));
    }

    /**
     * A kernel peer counts what TCP acked as delivered, so a path the stack drops on its own (here: reset by the
     * abort hook, as after a failed write) must first take in what already arrived. The stack runs in INVOKER
     * mode, so the frames sit acked but unread until the one duty cycle that aborts the path.
     */
    @Test
    void framesTcpAckedBeforeADropAreDelivered() throws Exception
    {
        final RdsSocket socket = ackedButUnread(6, RdsStackConfig.builder().name("kernel-drain"), new StackOptions(), 50);
        ((CoreStack)stack).transport("tcp").abortAll();
        stack.invoke(); // the abort runs first in the cycle: the path is reset after it has been drained
        assertEquals(1, counter("conn_reset"));
        assertReceivesNumbered(socket, 50);
    }

    /**
     * The stack is held (INVOKER mode, no duty cycle) past the handshake deadline, on a clock the test moves, while a
     * kernel peer, which answers the probe only after its queue, sends data that TCP acks. The next cycle runs the
     * connections before the reads: it must take in what arrived before it judges the peer silent, or the data is
     * lost.
     */
    @Test
    void framesTcpAckedWhileTheStackWasHeldPastTheHandshakeDeadlineAreDelivered() throws Exception
    {
        final Duration connectTimeout = Duration.ofSeconds(5);
        final CachedNanoClock clock = new CachedNanoClock();
        final RdsSocket socket = ackedButUnread(7, RdsStackConfig.builder().name("kernel-held").connectTimeout(connectTimeout),
            new StackOptions().nanoClock(clock), 50);
        clock.advance(connectTimeout.toNanos());
        stack.invoke();
        assertEquals(0, counter("conn_handshake_timeout"), () -> stack.counters().toString());
        assertEquals(0, counter("conn_reset"));
        assertReceivesNumbered(socket, 50);
        // and silence is still found: nothing more arrives for the deadline
        clock.advance(connectTimeout.toNanos());
        stack.invoke();
        assertEquals(1, counter("conn_handshake_timeout"), () -> stack.counters().toString());
    }

    /** A peer that tells a generation (rds4j) is still acked only by RDS acks: TCP's acks release nothing. */
    @Test
    void aPeerWithAGenerationIsAckedOnlyByRdsAcks() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(3, 20), TCP_PORT));
        final RdsSocket socket = socket(address(3, 10), 5000, 1 << 20);
        final InetSocketAddress destination = new InetSocketAddress(address(3, 20), 7000);
        sendNumbered(socket, destination, 10, 100);
        final FakePeer peer = track(listener.accept(T));
        peer.readFrame(T);
        for (int i = 1; i <= 10; i++)
        {
            assertEquals(i, peer.readFrame(T).seq());
        }
        // TCP acked all ten long before this: only an RDS ack may release them
        Await.until(T, () -> counter("send_transmitted") == 10, () -> stack.counters().toString());
        assertEquals(1000, socket.sendQueuedBytes());
        assertEquals(0, counter("send_drop_acked"));
        peer.sendAck(10);
        Await.until(T, () -> socket.sendQueuedBytes() == 0, () -> stack.counters().toString());
        assertEquals(10, counter("send_drop_acked"));
    }

    /**
     * Opens an INVOKER stack with a socket bound at port 5000 of test {@code test}'s address, connects a kernel peer
     * to it and has the peer send {@code count} messages numbered from 1 to that port, acked by TCP and left unread:
     * the stack runs no duty cycle after the connection came up.
     */
    private RdsSocket ackedButUnread(final int test, final RdsStackConfig.Builder config, final StackOptions options,
        final int count) throws Exception
    {
        final InetAddress stackAddress = address(test, 10);
        stack = CoreStack.open(config.transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build())
            .threading(org.rds4j.Threading.INVOKER).infoFile(false).build(), options);
        final RdsSocket socket = stack.openSocket();
        socket.bind(new InetSocketAddress(stackAddress, 5000));
        socket.configureBlocking(false);
        final FakePeer kernel = track(FakePeer.connect(address(test, 5), new InetSocketAddress(stackAddress, TCP_PORT), T));
        kernel.sendCongestionMap(new byte[8192]);
        Await.until(T, () -> stack.invoke() >= 0 && counter("conn_up") == 1, () -> stack.counters().toString());
        for (int i = 1; i <= count; i++)
        {
            kernel.sendData(i, 0, 7000, 5000, 0, ("message " + i).getBytes());
        }
        kernel.awaitAcked(T);
        return socket;
    }

    private static void assertReceivesNumbered(final RdsSocket socket, final int count) throws IOException
    {
        for (int i = 1; i <= count; i++)
        {
            final ByteBuffer buffer = ByteBuffer.allocate(100);
            assertTrue(socket.receive(buffer) != null, "message " + i + " was lost with the path");
            buffer.flip();
            assertEquals("message " + i, new String(buffer.array(), 0, buffer.limit()));
        }
    }

    private long lastQueued = -1;
    private long lastChangeNs;

    /** True once the send queue has not changed for {@code millis}: TCP's window closed. */
    private boolean stableFor(final RdsSocket socket, final long millis)
    {
        final long queued = socket.sendQueuedBytes();
        if (queued != lastQueued)
        {
            lastQueued = queued;
            lastChangeNs = System.nanoTime();
            return false;
        }
        return System.nanoTime() - lastChangeNs >= TimeUnit.MILLISECONDS.toNanos(millis);
    }

    private static void sendNumbered(final RdsSocket socket, final InetSocketAddress destination, final int count,
        final int size)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        try
        {
            for (int i = 0; i < count; i++)
            {
                buffer.clear();
                buffer.putInt(0, i);
                assertEquals(size, socket.send(buffer, destination), "message " + i);
            }
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static InetAddress address(final int test, final int host) throws UnknownHostException
    {
        return InetAddress.getByAddress(new byte[] {127, 0, (byte)(190 + test), (byte)host});
    }

    private RdsSocket socket(final InetAddress address, final int port, final int sendBuffer) throws IOException
    {
        if (stack == null)
        {
            stack = RdsStack.open(RdsStackConfig.builder()
                .name("kernel-peer")
                .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build())
                .heartbeat(Duration.ofSeconds(30), Duration.ofSeconds(60))
                .infoFile(false)
                .build());
        }
        final RdsSocket socket = stack.openSocket();
        socket.bind(new InetSocketAddress(address, port));
        socket.setOption(RdsOptions.SO_SNDBUF, sendBuffer);
        socket.setOption(RdsOptions.SO_SNDTIMEO, T);
        return socket;
    }

    private <C extends AutoCloseable> C track(final C resource)
    {
        resources.add(resource);
        return resource;
    }

    private long counter(final String name)
    {
        return stack.counters().get(name);
    }
}
