package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.Payloads;
import org.rds4j.core.test.TestStacks;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A blocking sender of small messages on a TCP connection that is up writes each frame itself, straight into the
 * connection's zero-copy memory ({@code send_appended}), while the socket takes them; the frames stay there until
 * acked, so a connection lost with them unacked sends each again, whole and in order among those that went the
 * usual way, and a cancel releases them. Messages of up to 1 KiB are appended, larger ones never; a stream's sender
 * sends them in batches of 120 KiB, at most a quarter of its send buffer. The peer is a {@link FakePeer} that
 * reads every frame and acks only when told. Stacks use 127.0.51.x and TCP port 28110.
 */
class SenderAppendTest
{
    private static final int TCP_PORT = 28110;
    private static final InetAddress A_IP = ip("127.0.51.1");
    private static final InetAddress B_IP = ip("127.0.51.2");
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int SMALL = 64;
    /** The largest message a blocking sender appends ({@code AgentCalls.SENDER_STREAM_MAX_PAYLOAD}). */
    private static final int MAX_APPENDED = 1024;
    /** Messages per test: under the send buffer, so that no send waits for an ack the fake peer does not give. */
    private static final int COUNT = 2_000;
    /** Bytes of frames a sender appends before it sends them itself ({@code AgentCalls.APPEND_BATCH_BYTES}). */
    private static final int APPEND_BATCH = 120 * 1024;

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());
    private final ByteBuffer out = ByteBuffer.allocateDirect(MAX_APPENDED + 1);

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private static long counter(final RdsStack stack, final String name)
    {
        return stack.counters().getOrDefault(name, 0L);
    }

    /** A stack in the default threading (an agent thread), with room for every message of a test unacked. */
    private RdsStack stack()
    {
        return stacks.open(stacks.config("ap-a").toBuilder().sendBufferBytes(4 << 20).build());
    }


    /** Sends messages {@code from} to {@code to} (exclusive), each numbered, blocking. */
    private void send(final RdsSocket socket, final InetSocketAddress destination, final int from, final int to,
        final int size) throws Exception
    {
        for (int i = from; i < to; i++)
        {
            assertEquals(size, socket.send(Payloads.fill(out, 1, i, size), destination));
        }
    }

    /**
     * Sends message 0 (it maps the socket's send ring and connects) and answers the handshake with the fake peer,
     * which reads it: returns once the connection is up.
     */
    private FakePeer connect(final RdsStack a, final RdsSocket sa, final InetSocketAddress to,
        final FakePeer.Listener listener, final int size) throws Exception
    {
        send(sa, to, 0, 1, size);
        final FakePeer peer = listener.accept(WAIT);
        assertTrue(peer.readFrame(WAIT).isCongestionUpdate());
        peer.readNumbered(0, 1, size, false, WAIT);
        Await.until(WAIT, () -> a.connections().get(0).state().equals("UP"), () -> "up");
        return peer;
    }

    @ParameterizedTest
    @ValueSource(ints = {64, MAX_APPENDED})
    void appendedFramesAreSentAgainWholeAndInOrderAfterTheConnectionDrops(final int size) throws Exception
    {
        final RdsStack a = stack();
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100));
        final InetSocketAddress to = new InetSocketAddress(B_IP, 7000);
        try (FakePeer.Listener listener = FakePeer.listen(B_IP, TCP_PORT))
        {
            try (FakePeer first = connect(a, sa, to, listener, size))
            {
                final long appendedBefore = counter(a, "send_appended");
                send(sa, to, 1, COUNT, size);
                // appended while the socket takes them; once the fake peer's window is full (it reads after), the
                // rest waits in the socket's ring: the retransmission below merges both
                final long appended = counter(a, "send_appended") - appendedBefore;
                assertTrue(appended > 0 && appended < COUNT, () -> appended + " appended");
                first.readNumbered(1, COUNT - 1, size, false, WAIT);
                first.abort(); // read, never acked
            }
            try (FakePeer second = listener.accept(WAIT))
            {
                assertTrue(second.readFrame(WAIT).isCongestionUpdate());
                second.readNumbered(0, COUNT, size, true, WAIT);
                assertEquals(COUNT * (long)size, sa.sendQueuedBytes(), "all unacked");
                second.sendAck(COUNT);
                Await.until(WAIT, () -> sa.sendQueuedBytes() == 0, () -> "acked: " + sa.sendQueuedBytes());
                // appended again on the new connection, numbered after the retransmissions
                final long appendedBefore = counter(a, "send_appended");
                send(sa, to, COUNT, COUNT + 100, size);
                assertTrue(counter(a, "send_appended") > appendedBefore, "appended on the new connection");
                second.readNumbered(COUNT, 100, size, false, WAIT);
            }
        }
    }

    @Test
    void cancellingADestinationReleasesItsAppendedFramesExactly() throws Exception
    {
        final RdsStack a = stack();
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100));
        final InetSocketAddress to = new InetSocketAddress(B_IP, 7000);
        final InetSocketAddress other = new InetSocketAddress(B_IP, 7001);
        try (FakePeer.Listener listener = FakePeer.listen(B_IP, TCP_PORT))
        {
            try (FakePeer peer = connect(a, sa, to, listener, SMALL))
            {
                final long appendedBefore = counter(a, "send_appended");
                send(sa, to, 1, 500, SMALL);
                assertEquals(SMALL, sa.send(Payloads.fill(out, 1, 500, SMALL), other));
                assertTrue(counter(a, "send_appended") > appendedBefore, "appended");
                // 500 messages to port 7000 (the first and any the full socket left in the ring went the usual way)
                assertEquals(500, sa.cancelSentTo(to));
                assertEquals(SMALL, sa.sendQueuedBytes(), "only the message to the other port is unacked");
                peer.sendAck(501);
                Await.until(WAIT, () -> sa.sendQueuedBytes() == 0, () -> "acked: " + sa.sendQueuedBytes());
            }
        }
    }

    /** With 4 MiB the batch is APPEND_BATCH; with 256 KiB a quarter of the buffer, 64 KiB. */
    @ParameterizedTest
    @ValueSource(ints = {4 << 20, 256 << 10})
    void aStreamsSenderSendsItsFramesInFullBatches(final int sendBuffer) throws Exception
    {
        final RdsStack a = stacks.open(stacks.config("ap-a").toBuilder().sendBufferBytes(sendBuffer).build());
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100));
        final InetSocketAddress to = new InetSocketAddress(B_IP, 7000);
        final int frame = RdsHeader.LENGTH + SMALL;
        final int batch = Math.min(APPEND_BATCH, sendBuffer / 4);
        // 8 batches' worth, or what the buffer holds unacked (the fake peer never acks): 6.8 batches of 64 KiB
        final int count = Math.min(8 * batch / frame, sendBuffer / SMALL - 100);
        try (FakePeer.Listener listener = FakePeer.listen(B_IP, TCP_PORT))
        {
            try (FakePeer peer = connect(a, sa, to, listener, SMALL))
            {
                // the peer reads as they come, so that the socket takes every batch whole
                final CompletableFuture<Void> read = CompletableFuture.runAsync(() ->
                {
                    try
                    {
                        peer.readNumbered(1, count, SMALL, false, WAIT);
                    }
                    catch (final Exception ex)
                    {
                        throw new CompletionException(ex);
                    }
                });
                final long appendedBefore = counter(a, "send_appended");
                final long batchesBefore = counter(a, "send_appended_batches");
                send(sa, to, 1, count + 1, SMALL);
                read.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                final long appended = counter(a, "send_appended") - appendedBefore;
                final long batches = counter(a, "send_appended_batches") - batchesBefore;
                // each batch the sender sent itself carried at least a batch (32 KiB batches: 2-4 times as many), and
                // more than half of them were full (120 KiB batches with 256 KiB: half as many); a message that
                // found the agent holding the lock too long went the usual way and cut a batch short
                final long bytes = appended * frame;
                assertTrue(batches > bytes / (2 * batch) && batches <= bytes / batch,
                    () -> batches + " batches of " + appended + " appended frames, " + batch + " bytes each");
            }
        }
    }

    @Test
    void aMessageOverTheBoundGoesTheUsualWay() throws Exception
    {
        final RdsStack a = stack();
        final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 100));
        final InetSocketAddress to = new InetSocketAddress(B_IP, 7000);
        final int size = MAX_APPENDED + 1;
        try (FakePeer.Listener listener = FakePeer.listen(B_IP, TCP_PORT))
        {
            try (FakePeer peer = connect(a, sa, to, listener, size))
            {
                final long appendedBefore = counter(a, "send_appended");
                final long queuedBefore = counter(a, "send_queued");
                send(sa, to, 1, 500, size);
                peer.readNumbered(1, 499, size, false, WAIT);
                assertEquals(0, counter(a, "send_appended") - appendedBefore, "none appended");
                assertEquals(499, counter(a, "send_queued") - queuedBefore, "each message queued once");
            }
        }
    }
}
