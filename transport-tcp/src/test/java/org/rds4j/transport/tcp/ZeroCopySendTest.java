package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.Threading;
import org.rds4j.core.CoreStack;
import org.rds4j.core.test.AgentGate;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.Payloads;
import org.rds4j.core.test.TestStacks;
import org.rds4j.core.wire.RdsHeader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Zero-copy sends ({@link TcpSendRing}): large writes of small frames go out with {@code sendfile} from shared
 * memory, whose pages the socket holds until the peer reads them; frames of {@link TcpPath#DIRECT_WRITE_BYTES}
 * or more never use it. The tests freeze the receiving stack (INVOKER mode, not
 * invoked) so that everything sent stays unread in the kernel, and check every byte once it is read. Stacks
 * listen on TCP port 28100 and use 127.0.50.x.
 */
class ZeroCopySendTest
{
    private static final int TCP_PORT = 28100;
    private static final InetAddress A_IP = ip("127.0.50.1");
    private static final InetAddress B_IP = ip("127.0.50.2");
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A payload whose frame (1,008 bytes) is staged: under {@link TcpPath#DIRECT_WRITE_BYTES}. */
    private static final int SIZE = 960;
    private static final int RING = TcpConfig.MIN_TCP_SEND_RING_BYTES;
    /** Messages per round: about 2 MiB, eight times the ring, and less than loopback TCP buffers hold unread. */
    private static final int PER_ROUND = 2_000;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());
    private final ByteBuffer out = ByteBuffer.allocateDirect(TcpPath.DIRECT_WRITE_BYTES);
    /** The payload every message has. */
    private int size = SIZE;
    private long nextToSend;
    private long nextExpected;
    private int badMessages;
    private final RdsMessageHandler verifier = (from, payload) ->
    {
        if (Payloads.sequence(payload) != nextExpected++ || payload.remaining() != size || !Payloads.verify(payload))
        {
            badMessages++;
        }
    };

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private RdsStack invoker(final String name, final int sendRingBytes)
    {
        return stacks.open(stacks.config(name).toBuilder()
            .threading(Threading.INVOKER)
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).tcpSendRingBytes(sendRingBytes).build())
            .sendBufferBytes(8 << 20)
            .receiveBufferBytes(8 << 20)
            .build());
    }

    private static long counter(final RdsStack stack, final String name)
    {
        return stack.counters().getOrDefault(name, 0L);
    }

    /** Two INVOKER stacks with a socket each, connected; a's socket sends to b's. */
    private final class Pair
    {
        final RdsStack a;
        final RdsStack b;
        final RdsSocket sa;
        final RdsSocket sb;

        Pair(final int sendRingBytes) throws IOException
        {
            a = invoker("zc-a", sendRingBytes);
            b = invoker("zc-b", sendRingBytes);
            sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100)).configureBlocking(false);
            sb = b.openSocket().bind(new InetSocketAddress(B_IP, 101)).configureBlocking(false);
            // the connection and its handshake need both stacks running
            assertEquals(size, sa.send(Payloads.fill(out, 1, nextToSend++, size), sb.localAddress()));
            receiveAll();
        }

        /** Queues {@code count} messages and runs only the sender's stack until TCP has taken all of them. */
        void sendWithReceiverFrozen(final int count) throws IOException
        {
            final long transmittedBefore = counter(a, "send_transmitted");
            for (int i = 0; i < count; i++)
            {
                final int result = sa.send(Payloads.fill(out, 1, nextToSend, size), sb.localAddress());
                assertEquals(size, result, () -> "send: " + RdsResult.name(result));
                nextToSend++;
            }
            Await.until(WAIT, () -> a.invoke() >= 0 && counter(a, "send_transmitted") - transmittedBefore == count,
                () -> "transmitted " + (counter(a, "send_transmitted") - transmittedBefore) + " of " + count);
        }

        /** Runs both stacks until the receiver has every message sent and the sender every ack. */
        void receiveAll()
        {
            Await.until(WAIT, () ->
            {
                a.invoke();
                b.invoke();
                poll(sb);
                return nextExpected == nextToSend && sa.sendQueuedBytes() == 0;
            }, () -> "received " + nextExpected + " of " + nextToSend + ", unacked bytes " + sa.sendQueuedBytes());
            assertEquals(0, badMessages, "messages out of order or with wrong bytes");
        }

        void round(final int count) throws IOException
        {
            sendWithReceiverFrozen(count);
            receiveAll();
        }
    }

    private int poll(final RdsSocket socket)
    {
        try
        {
            return socket.poll(verifier, 1024);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @Test
    void pagesThePeerHasNotReadAreNeverWrittenAgain() throws Exception
    {
        final Pair p = new Pair(RING);
        for (int round = 0; round < 4; round++)
        {
            final long zeroCopyBefore = counter(p.a, "tcp_zero_copy_bytes");
            p.sendWithReceiverFrozen(PER_ROUND);
            final long zeroCopy = counter(p.a, "tcp_zero_copy_bytes") - zeroCopyBefore;
            // nothing is read, so nothing is acked: the ring is lent once and the rest of the round is copied
            final int r = round;
            assertTrue(zeroCopy > 0 && zeroCopy <= RING, () -> "round " + r + ": " + zeroCopy + " bytes zero-copy");
            p.receiveAll();
        }
        assertEquals(1 + 4 * PER_ROUND, counter(p.b, "recv_delivered"));
    }

    @Test
    void aDroppedConnectionsLentPagesAreStillReadIntactAndTheNextConnectionLendsAgain() throws Exception
    {
        final Pair p = new Pair(RING);
        p.sendWithReceiverFrozen(PER_ROUND);
        // the path closes and unmaps its ring while the kernel still holds unread pages of it
        ((CoreStack)p.a).dropConnections();
        p.receiveAll();
        assertEquals(1 + PER_ROUND, counter(p.b, "recv_delivered"), "each message once: retransmissions dropped");
        // acks of retransmissions prove nothing about the new connection's bytes; an ack of a message first sent
        // on it does, and frees the ring's regions before it
        p.round(1);

        final long zeroCopyBefore = counter(p.a, "tcp_zero_copy_bytes");
        p.sendWithReceiverFrozen(PER_ROUND);
        assertTrue(counter(p.a, "tcp_zero_copy_bytes") > zeroCopyBefore, "the new connection's ring is used");
        p.receiveAll();
        assertEquals(2 + 2 * PER_ROUND, counter(p.b, "recv_delivered"));
    }

    /**
     * After a reconnect the peer may ack frames it had from the old connection while their retransmissions on
     * the new one are still unread: such an ack must not free the new connection's ring.
     */
    @Test
    void acksOfRetransmissionsDoNotFreeTheNewConnectionsPages() throws Exception
    {
        final int n = 300; // 295 KiB of frames: more than the ring
        final RdsStack a = stacks.open(stacks.config("zc-a").toBuilder()
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).tcpSendRingBytes(RING).build())
            .sendBufferBytes(8 << 20).build());
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100));
        final InetSocketAddress to = new InetSocketAddress(B_IP, 7000);
        try (FakePeer.Listener listener = FakePeer.listen(B_IP, TCP_PORT))
        {
            for (int i = 0; i < n; i++)
            {
                assertEquals(SIZE, sa.send(Payloads.fill(out, 1, i, SIZE), to));
            }
            try (FakePeer first = listener.accept(WAIT))
            {
                assertTrue(first.readFrame(WAIT).isCongestionUpdate());
                for (int i = 0; i < n; i++)
                {
                    assertEquals(i + 1, first.readFrame(WAIT).seq());
                }
                first.abort(); // read, never acked
            }
            try (FakePeer second = listener.accept(WAIT))
            {
                second.answerProbes(false);
                assertTrue(second.readFrame(WAIT).isCongestionUpdate());
                assertTrue(second.readFrame(WAIT).isHandshakeProbe());
                final long zeroCopyBefore = counter(a, "tcp_zero_copy_bytes");
                second.sendHandshakePong();
                second.answerProbes(true);
                Await.until(WAIT, () -> counter(a, "send_transmitted") == 2 * n,
                    () -> "retransmitted: " + a.counters());
                assertTrue(counter(a, "tcp_zero_copy_bytes") > zeroCopyBefore, "retransmissions went out zero-copy");
                // unread, but acked: the peer had them all from the first connection
                second.sendAck(n);
                Await.until(WAIT, () -> sa.sendQueuedBytes() == 0, () -> "the ack is taken");
                for (int i = n; i < 2 * n; i++)
                {
                    assertEquals(SIZE, sa.send(Payloads.fill(out, 1, i, SIZE), to));
                }
                Await.until(WAIT, () -> counter(a, "send_transmitted") == 3 * n, () -> "sent: " + a.counters());
                for (int i = 0; i < 2 * n; i++)
                {
                    final FakePeer.Frame frame = second.readFrame(WAIT);
                    assertEquals(i + 1, frame.seq(), "frame " + i);
                    final ByteBuffer payload = ByteBuffer.wrap(frame.payload());
                    assertEquals(i, Payloads.sequence(payload), "frame " + i);
                    assertTrue(Payloads.verify(payload), "the bytes of frame " + i);
                }
            }
        }
    }

    @Test
    void anAgentStackLendsItsRingByDefault() throws Exception
    {
        final AgentGate gate = new AgentGate();
        final CoreStack a = stacks.openGated("zc-a", gate);
        final RdsStack b = stacks.open("zc-b");
        assertEquals(TcpConfig.DEFAULT_TCP_SEND_RING_BYTES, TcpConfig.of(a.config()).tcpSendRingBytes());
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100)).configureBlocking(false);
        final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 101)).configureBlocking(false);
        // the ring is taken once a quarter of it (512 KiB) has been copied in large writes: 9 bursts
        for (int burst = 0; burst < 16; burst++)
        {
            // held, the agent takes the burst in one duty cycle: one stage of 64 frames, 63 KiB
            gate.hold = true;
            Await.until(WAIT, () -> gate.held, () -> "the agent held");
            for (int i = 0; i < 64; i++)
            {
                assertEquals(SIZE, sa.send(Payloads.fill(out, 1, nextToSend++, SIZE), sb.localAddress()));
            }
            gate.hold = false;
            Await.until(WAIT, () -> poll(sb) >= 0 && nextExpected == nextToSend,
                () -> "received " + nextExpected + " of " + nextToSend);
        }
        assertEquals(0, badMessages);
        assertTrue(counter(a, "tcp_zero_copy_bytes") > 0);
    }

    @Test
    void aConnectionTakesItsRingOnlyOnceAQuarterOfItHasBeenCopiedInLargeWrites() throws Exception
    {
        final Pair p = new Pair(RING);
        // bursts of 16 messages: one stage of 16,128 bytes each (the congestion map, 8,240 bytes, is written from
        // its own buffer and does not count); four come to 64,512 bytes copied, under a quarter of the ring (65,536)
        for (int burst = 0; burst < 4; burst++)
        {
            p.round(16);
        }
        assertEquals(0L, counter(p.a, "tcp_zero_copy_bytes"), "no ring yet");
        p.round(16);
        final long zeroCopyBefore = counter(p.a, "tcp_zero_copy_bytes");
        p.round(16);
        assertEquals(zeroCopyBefore + 16 * (SIZE + RdsHeader.LENGTH), counter(p.a, "tcp_zero_copy_bytes"), "the ring is taken");
    }

    @Test
    void aRingOfZeroBytesCopiesEverything() throws Exception
    {
        final Pair p = new Pair(0);
        p.round(PER_ROUND);
        assertEquals(0L, counter(p.a, "tcp_zero_copy_bytes"));
    }

    /**
     * Frames of {@link TcpPath#DIRECT_WRITE_BYTES} or more go out in gathering writes from their own buffers, ring
     * or not: the kernel's one copy costs less than ours into the ring and its {@code sendfile}. Nor do they count
     * towards taking the ring, so a connection that only streams them never maps one.
     */
    @Test
    void largeFramesAreWrittenFromTheirOwnBuffersAndNeverTakeTheRing() throws Exception
    {
        size = TcpPath.DIRECT_WRITE_BYTES - RdsHeader.LENGTH; // a frame of exactly DIRECT_WRITE_BYTES
        final Pair p = new Pair(RING);
        for (int round = 0; round < 4; round++)
        {
            p.round(PER_ROUND); // 2 MiB a round: eight times what takes the ring in staged frames
        }
        assertEquals(1 + 4 * PER_ROUND, counter(p.b, "recv_delivered"));
        assertEquals(0L, counter(p.a, "tcp_zero_copy_bytes"));
        size = SIZE; // and then small frames: the connection takes its ring once they have filled a quarter of it
        p.round(PER_ROUND);
        assertTrue(counter(p.a, "tcp_zero_copy_bytes") > 0, "staged frames go out zero-copy");
    }

    @Test
    void ringSizesOutsideTheRangeAreRefused()
    {
        final TcpConfig.Builder builder = TcpConfig.builder();
        for (final int bytes : new int[] {-1, 1, RING - 1, (1 << 30) + 1, Integer.MAX_VALUE})
        {
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> builder.tcpSendRingBytes(bytes));
            assertTrue(ex.getMessage().contains("tcpSendRingBytes"), ex.getMessage());
        }
        assertEquals(0, builder.tcpSendRingBytes(0).build().tcpSendRingBytes());
        assertEquals(RING, builder.tcpSendRingBytes(RING).build().tcpSendRingBytes());
        assertEquals(1 << 30, builder.tcpSendRingBytes(1 << 30).build().tcpSendRingBytes());
    }
}
