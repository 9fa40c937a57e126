package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.Threading;
import org.rds4j.core.CoreStack;
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
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The TCP transport's read buffers and copy stages ({@link TcpBufferPool}): borrowed only while they hold bytes, so
 * an idle connection holds none, and a reconnect reuses what the dropped connection gave back instead of
 * allocating. Both stacks run in INVOKER mode, so the test thread is their agent and may look at the pool and the
 * paths. Stacks listen on TCP port 28300 and use 127.0.51.x: a at .2, b at .3, a stranger at .1.
 */
class TcpBufferMemoryTest
{
    private static final int TCP_PORT = 28300;
    private static final InetAddress A_IP = ip("127.0.51.2");
    private static final InetAddress B_IP = ip("127.0.51.3");
    private static final InetAddress STRANGER_IP = ip("127.0.51.1");
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int READ_BUFFER = TcpFrameReader.DEFAULT_INITIAL_CAPACITY;
    private static final int STAGE = TcpPath.STAGE_BYTES;
    private static final int SMALL = 64;
    /** Its frame needs a read buffer of the 256 KiB class: 48 B of header and 200 KiB of payload. */
    private static final int LARGE = 200 * 1024;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());
    private final ByteBuffer out = ByteBuffer.allocateDirect(LARGE);
    private final RdsStack a = invoker("mem-a");
    private final RdsStack b = invoker("mem-b");
    private RdsSocket sa;
    private RdsSocket sb;
    private long sentToB;
    private long sentToA;
    private long receivedByB;
    private long receivedByA;

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private RdsStack invoker(final String name)
    {
        return stacks.open(stacks.config(name).toBuilder()
            .threading(Threading.INVOKER)
            .sendBufferBytes(8 << 20)
            .receiveBufferBytes(8 << 20)
            .reconnectDelay(Duration.ofMillis(1), Duration.ofMillis(10)) // twenty reconnects, none waiting long
            .build());
    }

    private void open() throws IOException
    {
        sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100)).configureBlocking(false);
        sb = b.openSocket().bind(new InetSocketAddress(B_IP, 101)).configureBlocking(false);
    }

    private static long counter(final RdsStack stack, final String name)
    {
        return stack.counters().getOrDefault(name, 0L);
    }

    private static TcpTransport transport(final RdsStack stack)
    {
        return (TcpTransport)((CoreStack)stack).transport("tcp");
    }

    /** Sends {@code count} messages of {@code size} each way and runs both stacks until all are received and acked. */
    private void exchange(final int count, final int size)
    {
        for (int i = 0; i < count; i++)
        {
            send(sa, sentToB++, size, sb);
            send(sb, sentToA++, size, sa);
        }
        runUntil(() -> receivedByB == sentToB && receivedByA == sentToA && sa.sendQueuedBytes() == 0 &&
            sb.sendQueuedBytes() == 0, () -> "received " + receivedByB + " of " + sentToB + " and " + receivedByA +
            " of " + sentToA + ", unacked " + sa.sendQueuedBytes() + " and " + sb.sendQueuedBytes());
    }

    private void send(final RdsSocket from, final long sequence, final int size, final RdsSocket to)
    {
        try
        {
            final int result = from.send(Payloads.fill(out, 1, sequence, size), to.localAddress());
            assertEquals(size, result, () -> "send: " + RdsResult.name(result));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private void runUntil(final BooleanSupplier done, final Supplier<String> what)
    {
        Await.until(WAIT, () ->
        {
            a.invoke();
            b.invoke();
            try
            {
                receivedByB += sb.poll((from, payload) -> assertTrue(Payloads.verify(payload)), 1024);
                receivedByA += sa.poll((from, payload) -> assertTrue(Payloads.verify(payload)), 1024);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            return done.getAsBoolean();
        }, what);
    }

    /** Runs both stacks a few more cycles: acks that were due went out and were read. */
    private void settle()
    {
        for (int i = 0; i < 100; i++)
        {
            a.invoke();
            b.invoke();
        }
    }

    private static void assertIdle(final RdsStack stack, final long idleBytes)
    {
        final TcpTransport transport = transport(stack);
        for (final TcpPath path : transport.paths())
        {
            assertEquals(0, path.bufferBytes(), "an idle connection holds no read buffer and no copy stage");
        }
        assertEquals(0, transport.bufferPool().lentBytes(), "nothing lent");
        assertEquals(idleBytes, transport.bufferPool().idleBytes(), "what was allocated waits in the pool");
    }

    @Test
    void reconnectsReuseTheBuffersTheDroppedConnectionsGaveBack() throws IOException
    {
        open();
        exchange(10, SMALL);
        // each stack reads (one read buffer) and stages small frames and acks for a copying write (one stage)
        assertEquals(2, counter(a, "tcp_buffer_alloc"));
        assertEquals(2, counter(b, "tcp_buffer_alloc"));
        final long upBefore = counter(a, "conn_up");
        final int drops = 20;
        for (int i = 0; i < drops; i++)
        {
            ((CoreStack)(i % 2 == 0 ? a : b)).dropConnections();
            exchange(10, SMALL);
        }
        assertTrue(counter(a, "conn_up") - upBefore >= drops, "every drop reconnected: " + (counter(a, "conn_up") - upBefore));
        assertEquals(2, counter(a, "tcp_buffer_alloc"), "no buffer allocated for a reconnect");
        assertEquals(2, counter(b, "tcp_buffer_alloc"), "no buffer allocated for a reconnect");
        settle();
        assertIdle(a, READ_BUFFER + STAGE);
        assertIdle(b, READ_BUFFER + STAGE);
    }

    @Test
    void anIdleConnectionHoldsNoBuffersAndALargeFrameGivesItsBufferBack() throws IOException
    {
        open();
        exchange(10, SMALL);
        settle();
        assertIdle(a, READ_BUFFER + STAGE);
        assertIdle(b, READ_BUFFER + STAGE);

        // a 200 KiB frame: each reader's buffer grows once, to the 256 KiB class, and goes back when the frame is in
        exchange(1, LARGE);
        settle();
        final int grown = transport(b).bufferPool().capacityFor(48 + LARGE);
        assertEquals(256 * 1024, grown);
        for (final RdsStack stack : new RdsStack[] {a, b})
        {
            assertEquals(grown, transport(stack).readBufferHighWater());
            assertEquals(3, counter(stack, "tcp_buffer_alloc"), "the read buffer, the stage and the grown buffer");
            assertIdle(stack, READ_BUFFER + STAGE + grown);
        }

        // small traffic again: a read starts with the smallest class, from the pool
        exchange(10, SMALL);
        settle();
        assertEquals(3, counter(a, "tcp_buffer_alloc"));
        assertEquals(3, counter(b, "tcp_buffer_alloc"));
        assertIdle(b, READ_BUFFER + STAGE + grown);
    }

    @Test
    void aBufferIsHeldWhileAFrameIsPartWayInAndGoesBackWhenItsConnectionCloses() throws IOException
    {
        open();
        exchange(1, SMALL);
        settle();
        final TcpBufferPool pool = transport(b).bufferPool();
        final long allocated = counter(b, "tcp_buffer_alloc");
        try (FakePeer stranger = FakePeer.connect(STRANGER_IP, new InetSocketAddress(B_IP, TCP_PORT), WAIT))
        {
            // 20 bytes of a header: the stranger's path keeps its read buffer across cycles
            stranger.sendRaw(new byte[20]);
            runUntil(() -> pool.lentBytes() == READ_BUFFER, () -> "lent " + pool.lentBytes());
            settle();
            assertEquals(READ_BUFFER, pool.lentBytes(), "the path mid-frame holds one read buffer");
            assertEquals(allocated + 1, counter(b, "tcp_buffer_alloc"), "a second read buffer, for the second connection");
        }
        // the stranger's connection ends with the partial header held: the buffer goes back to the pool
        runUntil(() -> pool.lentBytes() == 0, () -> "lent " + pool.lentBytes());
        settle();
        assertIdle(b, 2L * READ_BUFFER + STAGE);
    }

    @Test
    void aConnectionWhoseReadsTakeAllTheyAskForReadsMoreAndGoesBackToTheSmallBufferWhenItSlows() throws Exception
    {
        open();
        exchange(1, SMALL);
        settle();
        final TcpBufferPool pool = transport(b).bufferPool();
        final long receivedBefore = receivedByB;
        final long allocated;
        final long idle;
        final int frames = 4096;
        final int size = 1024;
        final ByteBuffer payload = ByteBuffer.allocate(size);
        final AtomicLong written = new AtomicLong(-1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        try (FakePeer stranger = FakePeer.connect(STRANGER_IP, new InetSocketAddress(B_IP, TCP_PORT), WAIT))
        {
            final Thread writer = new Thread(() ->
            {
                try
                {
                    stranger.answerProbes(false);
                    stranger.readUntil(WAIT, FakePeer.Frame::isHandshakeProbe, "b's handshake probe");
                    stranger.sendHandshakePong();
                    written.set(0);
                    for (int seq = 1; seq <= frames; seq++)
                    {
                        Payloads.fill(payload, 1, seq, size);
                        stranger.sendData(seq, 0, 4000, 101, 0, payload.array());
                        written.addAndGet(RdsHeader.LENGTH + size);
                    }
                }
                catch (final Throwable ex)
                {
                    failure.set(ex);
                }
            }, "stranger-writer");
            writer.start();
            runUntil(() -> written.get() >= 0 || !writer.isAlive(), () -> "the stranger's handshake");
            // more than one small read's worth waits in b's socket before b reads at all: its first read takes 64 KiB
            Await.until(WAIT, () -> written.get() >= 2 * READ_BUFFER || !writer.isAlive(), () -> "written " + written);
            runUntil(() -> receivedByB == receivedBefore + frames, () -> "received " + (receivedByB - receivedBefore) +
                " of " + frames);
            writer.join();
            assertNull(failure.get());
            assertEquals(TcpPath.READ_BYTES_STREAMING, transport(b).readBufferHighWater(),
                "a read that took all it asked for is followed by larger ones");
            settle();
            allocated = counter(b, "tcp_buffer_alloc");
            idle = pool.idleBytes();
            assertEquals(0, pool.lentBytes(), "between frames the streaming connection holds no buffer");

            // one small frame: its read takes less than it asks, and the connection's next read asks the small size
            Payloads.fill(payload, 1, frames + 1, SMALL);
            stranger.sendData(frames + 1, 0, 4000, 101, 0, Arrays.copyOf(payload.array(), SMALL));
            runUntil(() -> receivedByB == receivedBefore + frames + 1, () -> "received " + (receivedByB - receivedBefore));
            stranger.sendRaw(new byte[20]);
            runUntil(() -> pool.lentBytes() > 0, () -> "lent " + pool.lentBytes());
            settle();
            assertEquals(READ_BUFFER, pool.lentBytes(), "the slowed connection's read buffer is of the small class again");
            assertEquals(allocated, counter(b, "tcp_buffer_alloc"), "taken from the pool");
        }
        runUntil(() -> pool.lentBytes() == 0, () -> "lent " + pool.lentBytes());
        settle();
        assertIdle(b, idle);
    }
}
