package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsClaim;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Sockets sending through their send rings: messages are ring records by default, a destination that never acks
 * holds the ring's front while the others go on through pooled messages, a cancel frees its records, 1 MiB
 * messages, retransmission after the network is cut, claims, and close with records in flight. On a
 * {@link org.rds4j.core.test.MemoryNetwork}, addresses 127.0.6.x; 127.0.9.6 is a dead peer (no stack has it).
 */
class SendRingSocketTest
{
    private static final InetAddress A_IP = ip("127.0.6.1");
    private static final InetAddress B_IP = ip("127.0.6.2");
    private static final InetSocketAddress DEAD = new InetSocketAddress(ip("127.0.9.6"), 7000);
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int RING = 16384;

    private final MemoryStacks stacks = new MemoryStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private CoreStack open(final String name)
    {
        return open(name, RING);
    }

    private CoreStack open(final String name, final int ringBytes)
    {
        return stacks.open(RdsStackConfig.builder().name(name).infoFile(false).sendRingBytes(ringBytes).build());
    }

    /** @return a blocking socket of B's that waits at most {@link #WAIT} in receive. */
    private static RdsSocket receiver(final CoreStack b, final int port) throws Exception
    {
        return b.openSocket().bind(new InetSocketAddress(B_IP, port)).setOption(RdsOptions.SO_RCVTIMEO, WAIT);
    }

    private static ByteBuffer numbered(final int length, final int n)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(length);
        for (int i = 0; i < length; i++)
        {
            buffer.put(i, (byte)(n * 31 + i));
        }
        return buffer;
    }

    /** Receives {@code count} messages numbered from {@code first} and checks every byte. */
    private static void receiveInOrder(final RdsSocket socket, final InetSocketAddress from, final int first,
        final int count, final int length) throws Exception
    {
        final ByteBuffer dst = ByteBuffer.allocate(length + 1);
        for (int n = first; n < first + count; n++)
        {
            dst.clear();
            assertEquals(from, socket.receive(dst), "message " + n);
            dst.flip();
            assertEquals(numbered(length, n), dst, "message " + n + " byte for byte");
        }
    }

    private static long counter(final CoreStack stack, final String name)
    {
        return stack.counters().get(name);
    }

    private static SendRing ringOf(final RdsSocket socket)
    {
        return ((RdsSocketImpl)socket).mappedSendRing();
    }

    @Test
    void messagesAreWrittenIntoTheRingAndArriveByteForByte() throws Exception
    {
        final CoreStack a = open("ring-a", 1 << 20); // room for all 500: no ack is needed to go on
        final CoreStack b = open("ring-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 10));
        final RdsSocket sb = receiver(b, 20);
        for (int n = 0; n < 500; n++)
        {
            assertEquals(100, sa.send(numbered(100, n), sb.localAddress()));
        }
        receiveInOrder(sb, sa.localAddress(), 0, 500, 100);
        assertEquals(0L, counter(a, "send_ring_spill"), "every message was a ring record");
        Await.until(WAIT, () -> sa.sendQueuedBytes() == 0 && ringOf(sa).usedBytes() == 0,
            () -> "acked and reclaimed: " + ringOf(sa).usedBytes() + " ring bytes used");
    }

    @Test
    void aDestinationThatNeverAcksHoldsTheRingButNotTheOtherDestinations() throws Exception
    {
        final CoreStack a = open("stuck-a");
        final CoreStack b = open("stuck-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 11)).configureBlocking(false);
        final RdsSocket sb = receiver(b, 21);
        // 15 records of 1000 + 48 bytes (1088 each): 16320 of the ring's 16384 bytes, never acked
        for (int n = 0; n < 15; n++)
        {
            assertEquals(1000, sa.send(numbered(1000, n), DEAD));
        }
        assertEquals(0L, counter(a, "send_ring_spill"));
        assertEquals(16320, ringOf(sa).usedBytes());

        // the live destination's messages do not fit behind them: they go through pooled messages, all of them
        for (int n = 0; n < 200; n++)
        {
            assertEquals(1000, sa.send(numbered(1000, n), sb.localAddress()));
            if (n % 50 == 49)
            {
                receiveInOrder(sb, sa.localAddress(), n - 49, 50, 1000);
            }
        }
        assertEquals(200L, counter(a, "send_ring_spill"), "none fitted in the ring");
        Await.until(WAIT, () -> sa.sendQueuedBytes() == 15000,
            () -> "only the dead peer's messages unacked: " + sa.sendQueuedBytes());
        assertEquals(16320, ringOf(sa).usedBytes());

        // the cancel frees the stuck records, and the ring takes messages again
        assertEquals(15, sa.cancelSentTo(DEAD));
        Await.until(WAIT, () -> ringOf(sa).usedBytes() == 0, () -> ringOf(sa).usedBytes() + " ring bytes used");
        assertEquals(1000, sa.send(numbered(1000, 200), sb.localAddress()));
        receiveInOrder(sb, sa.localAddress(), 200, 1, 1000);
        assertEquals(200L, counter(a, "send_ring_spill"), "the last message was a ring record");
    }

    @Test
    void messagesOverAnEighthOfTheRingUpTo1MiBGoThroughPooledMessages() throws Exception
    {
        final CoreStack a = open("big-a");
        final CoreStack b = open("big-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 12));
        final RdsSocket sb = receiver(b, 22);
        final int fits = RING / 8 - 48;
        assertEquals(fits, sa.send(numbered(fits, 0), sb.localAddress()));
        assertEquals(fits + 1, sa.send(numbered(fits + 1, 1), sb.localAddress()));
        assertEquals(1 << 20, sa.send(numbered(1 << 20, 2), sb.localAddress()));
        receiveInOrder(sb, sa.localAddress(), 0, 1, fits);
        receiveInOrder(sb, sa.localAddress(), 1, 1, fits + 1);
        receiveInOrder(sb, sa.localAddress(), 2, 1, 1 << 20);
        assertEquals(2L, counter(a, "send_ring_spill"));
    }

    /**
     * Threads send messages that are ring records (100 bytes) and messages too long for the ring (3000 bytes, pooled,
     * through the socket's queue) in a random mix: each thread's messages arrive in the order it sent them, each once,
     * byte for byte. A record the stack read before a pooled message sent ahead of it would break a thread's order.
     */
    @Test
    void threadsMixingRingRecordsAndPooledMessagesEachArriveInOrder() throws Exception
    {
        final CoreStack a = open("mix-a");
        final CoreStack b = open("mix-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 16));
        final RdsSocket sb = receiver(b, 26).setOption(RdsOptions.SO_RCVBUF, 4 << 20);
        final int threads = 3;
        final int perThread = 3000;
        final java.util.concurrent.atomic.AtomicReference<Throwable> failure =
            new java.util.concurrent.atomic.AtomicReference<>();
        final Thread[] senders = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            final int id = t;
            senders[t] = new Thread(() ->
            {
                final java.util.Random random = new java.util.Random(id);
                try
                {
                    for (int n = 0; n < perThread; n++)
                    {
                        final int length = random.nextInt(4) == 0 ? 3000 : 100;
                        final ByteBuffer message = numbered(length, n);
                        message.putInt(0, id).putInt(4, n);
                        assertEquals(length, sa.send(message, sb.localAddress()));
                    }
                }
                catch (final Throwable ex)
                {
                    failure.set(ex);
                }
            }, "mix-sender-" + t);
            senders[t].start();
        }
        final int[] next = new int[threads];
        final ByteBuffer dst = ByteBuffer.allocate(3001);
        for (int i = 0; i < threads * perThread; i++)
        {
            dst.clear();
            assertEquals(sa.localAddress(), sb.receive(dst), "message " + i + ": " + failure.get());
            dst.flip();
            final int id = dst.getInt(0);
            final int n = dst.getInt(4);
            assertEquals(next[id], n, "thread " + id + "'s messages in order");
            final ByteBuffer expected = numbered(dst.remaining(), n);
            expected.putInt(0, id).putInt(4, n);
            assertEquals(expected, dst, "thread " + id + "'s message " + n + " byte for byte");
            next[id]++;
        }
        for (final Thread sender : senders)
        {
            sender.join(WAIT.toMillis());
        }
        assertEquals(null, failure.get());
        final long spilled = counter(a, "send_ring_spill");
        assertTrue(spilled >= 3 * perThread / 8 && spilled < threads * perThread,
            "the long ones pooled, short ones behind them too, the rest ring records: " + spilled);
    }

    @Test
    void messagesInTheRingAreSentAgainAfterTheNetworkIsCut() throws Exception
    {
        final CoreStack a = open("cut-a");
        final CoreStack b = open("cut-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 13)).configureBlocking(false);
        final RdsSocket sb = receiver(b, 23);
        assertEquals(64, sa.send(numbered(64, 0), sb.localAddress()));
        receiveInOrder(sb, sa.localAddress(), 0, 1, 64);

        // frames sent while cut are lost with the path; the stack sends them again from the ring once healed
        stacks.network().faults((from, to, length) -> org.rds4j.core.test.MemoryNetwork.Fate.DROP);
        for (int n = 1; n <= 40; n++)
        {
            assertEquals(64, sa.send(numbered(64, n), sb.localAddress()));
        }
        Await.until(WAIT, () -> unacked(a) >= 40, () -> unacked(a) + " unacked");
        stacks.network().faults((from, to, length) -> org.rds4j.core.test.MemoryNetwork.Fate.DELIVER);
        stacks.network().cut(A_IP, B_IP);
        stacks.network().heal(A_IP, B_IP);
        receiveInOrder(sb, sa.localAddress(), 1, 40, 64);
        assertTrue(counter(a, "send_retransmitted") >= 40, "sent again: " + counter(a, "send_retransmitted"));
        assertEquals(0L, counter(a, "send_ring_spill"), "from the ring's records");
    }

    private static int unacked(final CoreStack stack)
    {
        int unacked = 0;
        for (final org.rds4j.RdsStack.ConnectionInfo info : stack.connections())
        {
            unacked += info.unacked();
        }
        return unacked;
    }

    @Test
    void claimsAreRingRecordsAndAnAbortedOneIsReclaimed() throws Exception
    {
        final CoreStack a = open("claim-a");
        final CoreStack b = open("claim-b");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 14));
        final RdsSocket sb = receiver(b, 24);
        final RdsClaim claim = new RdsClaim();

        assertEquals(100, sa.tryClaim(100, sb.localAddress(), claim));
        assertEquals(192, ringOf(sa).usedBytes(), "the claim is a record of the ring");
        claim.abort();
        assertEquals(100, sa.tryClaim(100, sb.localAddress(), claim));
        claim.buffer().put(claim.offset(), numbered(100, 7), 0, 100);
        claim.commit();
        receiveInOrder(sb, sa.localAddress(), 7, 1, 100);
        assertEquals(0L, counter(a, "send_ring_spill"));
        Await.until(WAIT, () -> ringOf(sa).usedBytes() == 0,
            () -> "the aborted record and the acked one reclaimed: " + ringOf(sa).usedBytes());
    }

    @Test
    void aClosedSocketsRingIsUnmappedOnceItsRecordsAreDropped() throws Exception
    {
        final CoreStack a = open("close-a");
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 15)).configureBlocking(false);
        for (int n = 0; n < 5; n++)
        {
            assertEquals(100, sa.send(numbered(100, n), DEAD));
        }
        final SendRing ring = ringOf(sa);
        Await.until(WAIT, () -> unacked(a) == 5, () -> unacked(a) + " queued on the connection");
        assertFalse(ring.isUnmapped());
        sa.close();
        Await.until(WAIT, ring::isUnmapped, () -> "unmapped: " + ring.usedBytes() + " bytes used");
        assertEquals(5L, counter(a, "send_cancelled"), "close dropped the queued messages");
    }
}
