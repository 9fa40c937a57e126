package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsReceiveInfo;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.TransportType;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.ThreadMeter;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.StackFixture;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.rds4j.core.test.TestAddresses.ip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The socket-level contract of {@link RdsSocket} (its Javadoc and the kernel's errno table): result codes
 * of send/receive/poll, buffers, blocking, timeouts, interrupts, truncation, options, closed sockets, ping.
 * Stacks are on a {@link org.rds4j.core.test.MemoryNetwork} and use 127.0.1.x; 127.0.9.1 is a dead peer (no
 * stack has it).
 */
class SocketSemanticsTest
{
    private static final InetAddress A_IP = ip("127.0.1.1");
    private static final InetAddress B_IP = ip("127.0.1.2");
    private static final InetAddress DEAD_IP = ip("127.0.9.1");
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final StackFixture stacks = fixture();
    private RdsStack a;

    /** @return the stacks: in memory; {@link DriverSocketSemanticsTest} attaches each to a driver instead. */
    StackFixture fixture()
    {
        return new MemoryStacks();
    }

    @BeforeEach
    void setUp()
    {
        a = stacks.open("sem-a");
    }

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private RdsSocket bound(final RdsStack stack, final InetAddress address, final int port) throws Exception
    {
        return stack.openSocket().bind(new InetSocketAddress(address, port));
    }

    private static ByteBuffer bytes(final int size, final int seed)
    {
        final byte[] data = new byte[size];
        new Random(seed).nextBytes(data);
        return ByteBuffer.wrap(data);
    }

    private static byte[] received(final ByteBuffer dst)
    {
        return Arrays.copyOf(dst.array(), dst.position());
    }

    /** Queues 10 x 100 bytes to the dead peer with SO_SNDBUF 1000: the send buffer is then full. */
    private RdsSocket fullSocket(final int port, final InetSocketAddress dead) throws Exception
    {
        final RdsSocket s = bound(a, A_IP, port);
        s.setOption(RdsOptions.SO_SNDBUF, 1000);
        s.configureBlocking(false);
        for (int i = 0; i < 10; i++)
        {
            assertEquals(100, s.send(bytes(100, i), dead), "message " + i);
        }
        assertEquals(RdsResult.EAGAIN, s.send(bytes(100, 99), dead));
        assertEquals(1000, s.sendQueuedBytes());
        return s;
    }

    // ---------------------------------------------------------------- send results

    @Test
    void bindFailedWithEADDRINUSECanBeRetried() throws Exception
    {
        final InetSocketAddress taken = new InetSocketAddress(A_IP, 5024);
        bound(a, A_IP, 5024);
        final RdsSocket s = a.openSocket();
        final RdsException inUse = assertThrows(RdsException.class, () -> s.bind(taken));
        assertEquals(RdsResult.EADDRINUSE, inUse.code());
        assertNull(s.localAddress());
        // as a kernel socket: the failed bind left it unbound, so it binds again
        s.bind(new InetSocketAddress(A_IP, 5025));
        assertEquals(new InetSocketAddress(A_IP, 5025), s.localAddress());
    }

    @Test
    void sendOnUnboundSocketIsENOTCONN() throws Exception
    {
        final RdsSocket s = a.openSocket();
        final ByteBuffer src = bytes(10, 1);
        assertEquals(RdsResult.ENOTCONN, s.send(src, new InetSocketAddress(B_IP, 5000)));
        assertEquals(0, src.position(), "a failed send must not consume the payload");
        assertEquals(0, s.sendQueuedBytes());
    }

    @Test
    void sendToWildcardMulticastBroadcastOrOtherFamilyIsEINVAL() throws Exception
    {
        final RdsSocket s = bound(a, A_IP, 5000);
        // the last: an IPv6 destination from a socket bound to an IPv4 address (no transport can carry it)
        for (final String bad : new String[] {"0.0.0.0", "224.0.0.1", "255.255.255.255", "::1"})
        {
            final ByteBuffer src = bytes(10, 2);
            assertEquals(RdsResult.EINVAL, s.send(src, new InetSocketAddress(ip(bad), 5)), bad);
            assertEquals(0, src.position(), bad);
        }
        assertEquals(0, s.sendQueuedBytes());
    }

    @Test
    void payloadOverOneMebibyteIsEMSGSIZE() throws Exception
    {
        final RdsSocket s = bound(a, A_IP, 5001);
        s.setOption(RdsOptions.SO_SNDBUF, 4 << 20);
        final ByteBuffer src = ByteBuffer.allocate(RdsSocket.MAX_MESSAGE_SIZE + 1);
        assertEquals(RdsResult.EMSGSIZE, s.send(src, new InetSocketAddress(DEAD_IP, 5000)));
        assertEquals(0, src.position());
        assertEquals(0, s.sendQueuedBytes());
    }

    @Test
    void payloadOverSendBufferIsEMSGSIZE() throws Exception
    {
        final RdsSocket s = bound(a, A_IP, 5002);
        s.setOption(RdsOptions.SO_SNDBUF, 1000);
        final InetSocketAddress dead = new InetSocketAddress(DEAD_IP, 5000);
        assertEquals(RdsResult.EMSGSIZE, s.send(bytes(1001, 3), dead));
        assertEquals(0, s.sendQueuedBytes());
        // exactly the send buffer is not "larger than" it
        s.configureBlocking(false);
        assertEquals(1000, s.send(bytes(1000, 3), dead));
        assertEquals(1000, s.sendQueuedBytes());
    }

    @Test
    void oneMebibyteMessageArrivesIntact() throws Exception
    {
        final RdsStack b = stacks.open("sem-b");
        final RdsSocket sa = bound(a, A_IP, 5003);
        final RdsSocket sb = bound(b, B_IP, 5003);
        sa.setOption(RdsOptions.SO_SNDBUF, 2 << 20);
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final ByteBuffer src = bytes(RdsSocket.MAX_MESSAGE_SIZE, 4);
        final byte[] expected = src.array().clone();
        assertEquals(RdsSocket.MAX_MESSAGE_SIZE, sa.send(src, sb.localAddress()));
        assertEquals(src.limit(), src.position(), "a successful send consumes the payload");

        final ByteBuffer dst = ByteBuffer.allocate(RdsSocket.MAX_MESSAGE_SIZE + 100);
        assertEquals(sa.localAddress(), sb.receive(dst));
        assertEquals(RdsSocket.MAX_MESSAGE_SIZE, dst.position());
        assertArrayEquals(expected, received(dst));
        assertEquals(0, sb.receiveQueuedBytes());
        Await.until(WAIT, () -> sa.sendQueuedBytes() == 0, () -> "acked, queued " + sa.sendQueuedBytes());
    }

    @Test
    void zeroByteMessageArrives() throws Exception
    {
        final RdsStack b = stacks.open("sem-b");
        final RdsSocket sa = bound(a, A_IP, 5004);
        final RdsSocket sb = bound(b, B_IP, 5004);
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(0, sa.send(ByteBuffer.allocate(0), sb.localAddress()));
        final ByteBuffer dst = ByteBuffer.allocate(16);
        assertEquals(sa.localAddress(), sb.receive(dst));
        assertEquals(0, dst.position());
        // and the next message is a normal one
        assertEquals(3, sa.send(ByteBuffer.wrap(new byte[] {7, 8, 9}), sb.localAddress()));
        assertEquals(sa.localAddress(), sb.receive(dst));
        assertArrayEquals(new byte[] {7, 8, 9}, received(dst));
    }

    @Test
    void nonBlockingSendToDeadPeerFillsSendBufferThenEAGAIN() throws Exception
    {
        final InetSocketAddress dead = new InetSocketAddress(DEAD_IP, 5000);
        final RdsSocket s = bound(a, A_IP, 5005);
        s.setOption(RdsOptions.SO_SNDBUF, 1000);
        s.configureBlocking(false);
        for (int i = 0; i < 10; i++)
        {
            assertEquals(100, s.send(bytes(100, i), dead), "message " + i);
            assertEquals(100L * (i + 1), s.sendQueuedBytes());
        }
        final ByteBuffer eleventh = bytes(100, 10);
        assertEquals(RdsResult.EAGAIN, s.send(eleventh, dead));
        assertEquals(0, eleventh.position());
        assertEquals(1000, s.sendQueuedBytes());
        // still full a moment later: nothing can be acknowledged by a dead peer
        assertEquals(RdsResult.EAGAIN, s.send(eleventh, dead));
        assertEquals(1000, s.sendQueuedBytes());
    }

    @Test
    void lastAdmittedMessageMayOvershootSendBuffer() throws Exception
    {
        final InetSocketAddress dead = new InetSocketAddress(DEAD_IP, 5000);
        final RdsSocket s = bound(a, A_IP, 5018);
        s.setOption(RdsOptions.SO_SNDBUF, 1000);
        s.configureBlocking(false);
        assertEquals(900, s.send(bytes(900, 20), dead));
        assertEquals(500, s.send(bytes(500, 21), dead), "admitted: 900 queued is below 1000");
        assertEquals(1400, s.sendQueuedBytes());
        assertEquals(RdsResult.EAGAIN, s.send(bytes(1, 22), dead));
        assertEquals(1400, s.sendQueuedBytes());
    }

    @Test
    void blockingSendTimesOutWithETIMEDOUT() throws Exception
    {
        final InetSocketAddress dead = new InetSocketAddress(DEAD_IP, 5000);
        final RdsSocket s = fullSocket(5006, dead);
        s.configureBlocking(true);
        s.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofMillis(200));
        final long start = System.nanoTime();
        final ByteBuffer src = bytes(100, 11);
        assertEquals(RdsResult.ETIMEDOUT, s.send(src, dead));
        final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs >= 200, "returned after " + elapsedMs + " ms");
        assertEquals(0, src.position());
        assertEquals(1000, s.sendQueuedBytes());
    }

    /** What a call returned (or threw) when interrupted while blocked in it, and its thread's interrupt status then. */
    private record Interrupted(Object result, boolean statusSet)
    {
    }

    /**
     * Runs a blocking call on a thread of its own, interrupts it once it is blocked in {@code method}, and waits
     * for it to return; a call that does not return fails the test (its socket is closed to end it).
     */
    private static Interrupted interruptBlocked(final RdsSocket s, final String method, final Callable<Object> call)
        throws Exception
    {
        final AtomicReference<Object> result = new AtomicReference<>("not returned");
        final AtomicBoolean statusSet = new AtomicBoolean();
        final Thread thread = new Thread(() ->
        {
            try
            {
                result.set(call.call());
                statusSet.set(Thread.currentThread().isInterrupted());
            }
            catch (final Throwable t)
            {
                result.set(t);
            }
        }, "blocked-" + method);
        thread.start();
        Await.until(WAIT, () -> Await.blockedIn(thread, method), () -> method + " parked: " + thread.getState());
        thread.interrupt();
        thread.join(WAIT.toMillis());
        if (thread.isAlive())
        {
            s.close();
            thread.join(WAIT.toMillis());
            throw new AssertionError("interrupted " + method + " did not return");
        }
        return new Interrupted(result.get(), statusSet.get());
    }

    @Test
    void blockedSendReturnsEINTRWhenInterrupted() throws Exception
    {
        final InetSocketAddress dead = new InetSocketAddress(DEAD_IP, 5000);
        final RdsSocket s = fullSocket(5007, dead);
        s.configureBlocking(true);
        s.setOption(RdsOptions.SO_SNDTIMEO, Duration.ZERO);
        final Interrupted interrupted = interruptBlocked(s, "sendBlocking", () -> s.send(bytes(100, 12), dead));
        assertEquals(RdsResult.EINTR, interrupted.result());
        assertTrue(interrupted.statusSet(), "interrupt status must stay set");
        assertEquals(1000, s.sendQueuedBytes());
    }

    // ---------------------------------------------------------------- receive

    @Test
    void nonBlockingReceiveWithNothingQueuedReturnsNull() throws Exception
    {
        final RdsSocket s = bound(a, A_IP, 5008);
        s.configureBlocking(false);
        final ByteBuffer dst = ByteBuffer.allocate(10);
        assertNull(s.receive(dst));
        assertEquals(0, dst.position());
        assertEquals(0, s.poll((sender, payload) -> { throw new AssertionError("no message"); }, 10));
    }

    @Test
    void blockingReceiveTimesOutWithNull() throws Exception
    {
        final RdsSocket s = bound(a, A_IP, 5009);
        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(100));
        final long start = System.nanoTime();
        assertNull(s.receive(ByteBuffer.allocate(10)));
        final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs >= 100, "returned after " + elapsedMs + " ms");
    }

    @Test
    void blockedReceiveReturnsNullWhenInterrupted() throws Exception
    {
        final RdsSocket s = bound(a, A_IP, 5019);
        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ZERO);
        final Interrupted interrupted = interruptBlocked(s, "receiveBlocking", () -> s.receive(ByteBuffer.allocate(10)));
        assertNull(interrupted.result());
        assertTrue(interrupted.statusSet(), "interrupt status must stay set");
    }

    @Test
    void closeEndsBlockedSendAndReceive() throws Exception
    {
        final InetSocketAddress dead = new InetSocketAddress(DEAD_IP, 5000);
        final RdsSocket s = fullSocket(5020, dead);
        s.configureBlocking(true);
        s.setOption(RdsOptions.SO_SNDTIMEO, Duration.ZERO);
        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ZERO);
        final AtomicReference<Object> sendOutcome = new AtomicReference<>("not returned");
        final AtomicReference<Object> receiveOutcome = new AtomicReference<>("not returned");
        final Thread sender = new Thread(() ->
        {
            try
            {
                sendOutcome.set(s.send(bytes(100, 23), dead));
            }
            catch (final Throwable t)
            {
                sendOutcome.set(t);
            }
        }, "blocked-sender");
        final Thread receiver = new Thread(() ->
        {
            try
            {
                receiveOutcome.set(s.receive(ByteBuffer.allocate(10)));
            }
            catch (final Throwable t)
            {
                receiveOutcome.set(t);
            }
        }, "blocked-receiver");
        sender.start();
        receiver.start();
        Await.until(WAIT, () -> Await.blockedIn(sender, "sendBlocking") && Await.blockedIn(receiver, "receiveBlocking"),
            () -> "both parked: " + sender.getState() + ", " + receiver.getState());
        s.close();
        sender.join(WAIT.toMillis());
        receiver.join(WAIT.toMillis());
        assertFalse(sender.isAlive(), "blocked send still blocked after close");
        assertFalse(receiver.isAlive(), "blocked receive still blocked after close");
        assertTrue(sendOutcome.get() instanceof ClosedChannelException, "send outcome " + sendOutcome.get());
        assertTrue(receiveOutcome.get() == null || receiveOutcome.get() instanceof ClosedChannelException,
            "receive outcome " + receiveOutcome.get());
    }

    @Test
    void receiveIntoShortBufferTruncatesAndNextMessageIsIntact() throws Exception
    {
        final RdsStack b = stacks.open("sem-b");
        final RdsSocket sa = bound(a, A_IP, 5010);
        final RdsSocket sb = bound(b, B_IP, 5010);
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final byte[] first = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        final byte[] second = {20, 21, 22};
        assertEquals(10, sa.send(ByteBuffer.wrap(first), sb.localAddress()));
        assertEquals(3, sa.send(ByteBuffer.wrap(second), sb.localAddress()));

        final ByteBuffer small = ByteBuffer.allocate(4);
        assertEquals(sa.localAddress(), sb.receive(small));
        assertEquals(4, small.position());
        assertArrayEquals(new byte[] {0, 1, 2, 3}, small.array());

        final ByteBuffer big = ByteBuffer.allocate(100);
        assertEquals(sa.localAddress(), sb.receive(big));
        assertArrayEquals(second, received(big));
        assertEquals(0, sb.receiveQueuedBytes());
        sb.configureBlocking(false);
        assertNull(sb.receive(big), "the rest of the truncated message is discarded");
    }

    @Test
    void receiveWithInfoReportsTheFullLengthOfATruncatedMessageAndConsumesIt() throws Exception
    {
        final RdsStack b = stacks.open("sem-b");
        final RdsSocket sa = bound(a, A_IP, 5021);
        final RdsSocket sb = bound(b, B_IP, 5021);
        sb.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final ByteBuffer first = bytes(1000, 30);
        final byte[] firstBytes = first.array().clone();
        assertEquals(1000, sa.send(first, sb.localAddress()));
        assertEquals(3, sa.send(ByteBuffer.wrap(new byte[] {20, 21, 22}), sb.localAddress()));
        assertEquals(0, sa.send(ByteBuffer.allocate(0), sb.localAddress()));

        final RdsReceiveInfo info = new RdsReceiveInfo();
        // a buffer with room for 10 bytes from position 2: the full length comes back, 10 bytes are copied
        final ByteBuffer small = ByteBuffer.allocate(16).position(2).limit(12);
        assertEquals(1000, sb.receive(small, info));
        assertEquals(sa.localAddress(), info.sender());
        assertEquals(1000, info.length());
        assertTrue(info.truncated());
        assertEquals(12, small.position());
        assertArrayEquals(Arrays.copyOf(firstBytes, 10), Arrays.copyOfRange(small.array(), 2, 12));
        final byte[] outside = {small.array()[0], small.array()[1], small.array()[12], small.array()[15]};
        assertArrayEquals(new byte[4], outside, "nothing written outside the room");

        final ByteBuffer exact = ByteBuffer.allocate(3);
        assertEquals(3, sb.receive(exact, info), "the rest of the truncated message was discarded");
        assertEquals(sa.localAddress(), info.sender());
        assertFalse(info.truncated(), "exactly the room is not truncated");
        assertArrayEquals(new byte[] {20, 21, 22}, exact.array());

        assertEquals(0, sb.receive(exact.clear(), info), "a zero-length message");
        assertEquals(sa.localAddress(), info.sender());
        assertFalse(info.truncated());
        assertEquals(0, exact.position());
        assertEquals(0, sb.receiveQueuedBytes());

        sb.configureBlocking(false);
        assertEquals(RdsResult.EAGAIN, sb.receive(exact, info));
        assertNull(info.sender(), "cleared when nothing was taken");
        assertEquals(0, info.length());
    }

    @Test
    void blockingReceiveWithInfoReturnsETIMEDOUTOrEINTR() throws Exception
    {
        final RdsSocket s = bound(a, A_IP, 5022);
        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(100));
        final RdsReceiveInfo info = new RdsReceiveInfo();
        final long start = System.nanoTime();
        assertEquals(RdsResult.ETIMEDOUT, s.receive(ByteBuffer.allocate(10), info));
        final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs >= 100, "returned after " + elapsedMs + " ms");
        assertNull(info.sender());

        s.setOption(RdsOptions.SO_RCVTIMEO, Duration.ZERO);
        final Interrupted interrupted =
            interruptBlocked(s, "receiveBlocking", () -> s.receive(ByteBuffer.allocate(10), new RdsReceiveInfo()));
        assertEquals(RdsResult.EINTR, interrupted.result());
        assertTrue(interrupted.statusSet(), "interrupt status must stay set");
    }

    @Test
    void receiveWithInfoAllocatesNothing() throws Exception
    {
        final RdsStack b = stacks.open("sem-b");
        final RdsSocket sa = bound(a, A_IP, 5023);
        final RdsSocket sb = bound(b, B_IP, 5023);
        final int rounds = 3;
        final int perRound = 100;
        for (int i = 0; i <= rounds * perRound; i++)
        {
            assertEquals(100, sa.send(bytes(100, i), sb.localAddress()));
        }
        Await.until(WAIT, () -> sb.receiveQueuedBytes() == 100L * (rounds * perRound + 1),
            () -> "all queued: " + sb.receiveQueuedBytes());
        final RdsReceiveInfo info = new RdsReceiveInfo();
        final ByteBuffer dst = ByteBuffer.allocateDirect(64);
        // the first caches the sender's address
        assertEquals(100, sb.receive(dst, info));
        // a one-off allocation of the JVM's own (a few hundred bytes at a random receive, never with -Xint) may
        // show in a round; one per receive shows in every round
        final int[] truncated = new int[1];
        final long[] allocated = ThreadMeter.allocatedByCallerPerRound(rounds, () ->
        {
            for (int i = 0; i < perRound; i++)
            {
                dst.clear();
                if (sb.receive(dst, info) == 100 && info.truncated())
                {
                    truncated[0]++;
                }
            }
        });
        assertEquals(rounds * perRound, truncated[0]);
        assertEquals(0, java.util.Arrays.stream(allocated).min().getAsLong(),
            "bytes allocated by each round of " + perRound + " receives: " + java.util.Arrays.toString(allocated));
    }

    @Test
    void receiveAndPollOnUnboundSocketThrowENOTCONN() throws Exception
    {
        final RdsSocket s = a.openSocket();
        final RdsException r = assertThrows(RdsException.class, () -> s.receive(ByteBuffer.allocate(10)));
        assertEquals(RdsResult.ENOTCONN, r.code());
        final RdsException p = assertThrows(RdsException.class, () -> s.poll((sender, payload) -> { }, 1));
        assertEquals(RdsResult.ENOTCONN, p.code());
    }

    @Test
    void operationsOnClosedSocketThrowClosedChannelException() throws Exception
    {
        final RdsSocket unbound = a.openSocket();
        final RdsSocket bound = bound(a, A_IP, 5011);
        unbound.close();
        bound.close();
        bound.close(); // idempotent
        for (final RdsSocket s : new RdsSocket[] {unbound, bound})
        {
            assertFalse(s.isOpen());
            final InetSocketAddress dest = new InetSocketAddress(B_IP, 5000);
            assertThrows(ClosedChannelException.class, () -> s.bind(new InetSocketAddress(A_IP, 5012)));
            assertThrows(ClosedChannelException.class, () -> s.send(ByteBuffer.allocate(1), dest));
            assertThrows(ClosedChannelException.class, () -> s.receive(ByteBuffer.allocate(1)));
            assertThrows(ClosedChannelException.class, () -> s.poll((sender, payload) -> { }, 1));
            assertThrows(ClosedChannelException.class, () -> s.cancelSentTo(dest));
            assertThrows(ClosedChannelException.class, () -> s.setOption(RdsOptions.SO_SNDBUF, 1000));
            assertThrows(ClosedChannelException.class, () -> s.getOption(RdsOptions.SO_SNDBUF));
        }
    }

    // ---------------------------------------------------------------- options

    @Test
    void nonPositiveBufferSizesAreIllegal() throws Exception
    {
        final RdsSocket s = a.openSocket();
        assertThrows(IllegalArgumentException.class, () -> s.setOption(RdsOptions.SO_SNDBUF, 0));
        assertThrows(IllegalArgumentException.class, () -> s.setOption(RdsOptions.SO_SNDBUF, -1));
        assertThrows(IllegalArgumentException.class, () -> s.setOption(RdsOptions.SO_RCVBUF, 0));
        assertEquals(a.config().sendBufferBytes(), s.getOption(RdsOptions.SO_SNDBUF));
        assertEquals(a.config().receiveBufferBytes(), s.getOption(RdsOptions.SO_RCVBUF));
    }

    @Test
    void transportCanBeSetOnceAndOnlyBeforeBind() throws Exception
    {
        final RdsSocket once = a.openSocket();
        once.setOption(RdsOptions.RDS_TRANSPORT, TransportType.TCP);
        final RdsException twice = assertThrows(RdsException.class,
            () -> once.setOption(RdsOptions.RDS_TRANSPORT, TransportType.TCP));
        assertEquals(RdsResult.EOPNOTSUPP, twice.code());
        assertEquals(TransportType.TCP, once.getOption(RdsOptions.RDS_TRANSPORT));
        once.bind(new InetSocketAddress(A_IP, 5013));

        final RdsSocket afterBind = bound(a, A_IP, 5014);
        final RdsException late = assertThrows(RdsException.class,
            () -> afterBind.setOption(RdsOptions.RDS_TRANSPORT, TransportType.TCP));
        assertEquals(RdsResult.EOPNOTSUPP, late.code());
    }

    @Test
    void infinibandTransportWithoutIbFailsBindWithEADDRNOTAVAIL() throws Exception
    {
        final RdsSocket s = a.openSocket();
        s.setOption(RdsOptions.RDS_TRANSPORT, TransportType.IB);
        final RdsException ex = assertThrows(RdsException.class, () -> s.bind(new InetSocketAddress(A_IP, 5015)));
        assertEquals(RdsResult.EADDRNOTAVAIL, ex.code());
        assertNull(s.localAddress());
        // the port was not taken
        bound(a, A_IP, 5015);
    }

    // ---------------------------------------------------------------- poll, ping

    @Test
    void pollDeliversAtMostLimitMessages() throws Exception
    {
        final RdsStack b = stacks.open("sem-b");
        final RdsSocket sa = bound(a, A_IP, 5016);
        final RdsSocket sb = bound(b, B_IP, 5016);
        for (int i = 0; i < 5; i++)
        {
            final byte[] payload = new byte[i + 1];
            Arrays.fill(payload, (byte)i);
            assertEquals(i + 1, sa.send(ByteBuffer.wrap(payload), sb.localAddress()));
        }
        Await.until(WAIT, () -> sb.receiveQueuedBytes() == 15, () -> "15 bytes queued: " + sb.receiveQueuedBytes());
        final List<InetSocketAddress> senders = new ArrayList<>();
        final List<byte[]> payloads = new ArrayList<>();
        final org.rds4j.RdsMessageHandler handler = (sender, payload) ->
        {
            senders.add(sender);
            final byte[] copy = new byte[payload.remaining()];
            payload.get(copy);
            payloads.add(copy);
        };
        assertEquals(3, sb.poll(handler, 3));
        assertEquals(3, payloads.size());
        assertEquals(9, sb.receiveQueuedBytes());
        assertEquals(2, sb.poll(handler, 10));
        assertEquals(0, sb.poll(handler, 10));
        assertThrows(IllegalArgumentException.class, () -> sb.poll(handler, 0));
        assertEquals(5, payloads.size());
        for (int i = 0; i < 5; i++)
        {
            assertEquals(sa.localAddress(), senders.get(i));
            final byte[] expected = new byte[i + 1];
            Arrays.fill(expected, (byte)i);
            assertArrayEquals(expected, payloads.get(i), "message " + i);
        }
        assertEquals(0, sb.receiveQueuedBytes());
    }

    @Test
    void pingIsAnsweredByPongFromPortZero() throws Exception
    {
        final RdsStack b = stacks.open("sem-b");
        final RdsSocket sa = bound(a, A_IP, 5017);
        bound(b, B_IP, 5017); // B must serve its address
        sa.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final InetSocketAddress responder = new InetSocketAddress(B_IP, 0);
        assertEquals(0, sa.send(ByteBuffer.allocate(0), responder));
        final ByteBuffer dst = ByteBuffer.allocate(16);
        assertEquals(responder, sa.receive(dst));
        assertEquals(0, dst.position());

        Await.until(WAIT, () -> b.counters().get("send_pong") == 1L, () -> "pong counted: " + b.counters());
        assertEquals(1L, b.counters().get("recv_ping"));
        assertEquals(1L, b.counters().get("send_pong"));
        assertEquals(0L, a.counters().get("recv_ping"));
        assertEquals(0L, a.counters().get("send_pong"));
    }
}
