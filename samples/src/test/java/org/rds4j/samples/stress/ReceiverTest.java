package org.rds4j.samples.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsClaim;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsReceiveInfo;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;

/** The receive side's checks, driven message by message through {@link Receiver#onMessage} with a fake socket. */
class ReceiverTest
{
    private static final InetSocketAddress SELF = address("127.0.11.2", 4000);
    private static final InetSocketAddress SENDER = address("127.0.11.1", 4000);

    private final FakeSocket socket = new FakeSocket();
    private int completions;

    @Test
    void aGoodRequestIsCountedAndAnsweredWithTheAskedLengthAndPattern()
    {
        final Receiver r = passive(false);
        r.onMessage(SENDER, request(7, 0, 100, 48, StressMessage.FLAG_PATTERN, 12345));
        assertEquals(1, r.requests());
        assertEquals(100, r.requestBytes());
        assertEquals(0, r.verifyErrors(), r.lastError());
        assertEquals(1, socket.sent.size());
        final ByteBuffer reply = socket.sent.get(0);
        assertEquals(SENDER, socket.destinations.get(0));
        assertEquals(48, reply.remaining());
        assertEquals(StressMessage.REPLY, StressMessage.type(reply));
        assertEquals(7, StressMessage.task(reply));
        assertEquals(0, StressMessage.sequence(reply));
        assertEquals(12345, StressMessage.timestamp(reply), "the request's timestamp comes back");
        assertEquals(StressMessage.FLAG_PATTERN, StressMessage.flags(reply));
        assertTrue(StressMessage.matches(reply, 7, 0));
        assertEquals(1, r.repliesSent());
    }

    @Test
    void aFlippedByteIsAVerifyError()
    {
        final Receiver r = passive(false);
        final ByteBuffer m = request(1, 0, 200, StressMessage.HEADER_BYTES, StressMessage.FLAG_PATTERN, 0);
        m.put(150, (byte)(m.get(150) ^ 0x10));
        r.onMessage(SENDER, m);
        assertEquals(1, r.verifyErrors());
        assertNotNull(r.lastError());
        assertTrue(r.lastError().contains("pattern"), r.lastError());
        assertEquals(1, r.requests(), "it still arrived");
        assertEquals(1, socket.sent.size(), "and is still answered");
    }

    @Test
    void withoutThePatternFlagThePayloadIsNotChecked()
    {
        final Receiver r = passive(false);
        r.onMessage(SENDER, request(1, 0, 200, StressMessage.HEADER_BYTES, 0, 0)); // zeros after the header
        assertEquals(0, r.verifyErrors(), r.lastError());
    }

    @Test
    void duplicatesReorderingAndGapsPerStreamThenDone()
    {
        final Receiver r = passive(false);
        for (final long s : new long[] {0, 2, 1, 1, 4})
        {
            r.onMessage(SENDER, request(3, s, 64, StressMessage.HEADER_BYTES, StressMessage.FLAG_ONE_WAY, 0));
        }
        // another task of the same sender is another stream: its 0 is no duplicate
        r.onMessage(SENDER, request(4, 0, 64, StressMessage.HEADER_BYTES, StressMessage.FLAG_ONE_WAY, 0));
        assertEquals(5, r.requests());
        assertEquals(1, r.duplicated());
        assertEquals(1, r.reordered());
        assertEquals(0, r.verifyErrors(), r.lastError());
        assertEquals(0, socket.sent.size(), "one-way: no replies");

        r.onMessage(SENDER, done(3, 6, 2));
        assertEquals(0, completions, "task 4 has not said DONE");
        r.onMessage(SENDER, done(4, 1, 2));
        assertEquals(1, completions, "both tasks of the only sender are done");
        assertNotEquals(0, r.completeNanos());
        assertEquals(2, r.lostRequests(), "3 and 5 of task 3 never came");

        assertEquals(2, socket.sent.size());
        final ByteBuffer ack = socket.sent.get(0);
        assertEquals(StressMessage.DONE_ACK, StressMessage.type(ack));
        assertEquals(3, StressMessage.task(ack));
        assertEquals(4, StressMessage.sequence(ack), "task 3: 0, 1, 2 and 4 arrived");
        assertEquals(1, StressMessage.sequence(socket.sent.get(1)));
        assertEquals(1, r.senders());
        assertEquals(1, r.sendersDone());
    }

    @Test
    void malformedMessagesAreVerifyErrors()
    {
        final Receiver r = passive(false);
        r.onMessage(SENDER, ByteBuffer.allocate(10));
        r.onMessage(SENDER, ByteBuffer.allocate(64));
        final ByteBuffer wrongLength = request(0, 0, 64, StressMessage.HEADER_BYTES, 0, 0);
        wrongLength.limit(63);
        r.onMessage(SENDER, wrongLength);
        final ByteBuffer badType = request(0, 0, 64, StressMessage.HEADER_BYTES, 0, 0);
        badType.put(4, (byte)9);
        r.onMessage(SENDER, badType);
        // a reply to a request this node never sent, a DONE_ACK for a task it does not have
        final ByteBuffer reply = request(0, 0, 64, StressMessage.HEADER_BYTES, 0, 0);
        reply.put(4, StressMessage.REPLY);
        r.onMessage(SENDER, reply);
        final ByteBuffer ack = done(0, 0, 1);
        ack.put(4, StressMessage.DONE_ACK);
        r.onMessage(SENDER, ack);
        assertEquals(6, r.verifyErrors());
        assertEquals(0, r.requests());
    }

    @Test
    void aRequestAfterItsDoneAndASecondDoneAreErrors()
    {
        final Receiver r = passive(false);
        r.onMessage(SENDER, request(0, 0, 64, StressMessage.HEADER_BYTES, StressMessage.FLAG_ONE_WAY, 0));
        r.onMessage(SENDER, done(0, 1, 1));
        assertEquals(0, r.verifyErrors(), r.lastError());
        r.onMessage(SENDER, request(0, 1, 64, StressMessage.HEADER_BYTES, StressMessage.FLAG_ONE_WAY, 0));
        r.onMessage(SENDER, done(0, 2, 1));
        assertEquals(2, r.verifyErrors());
    }

    @Test
    void aVerifyingPassiveNodePutsThePatternIntoItsReplies()
    {
        final Receiver r = passive(true);
        r.onMessage(SENDER, request(2, 5, 64, 80, 0, 0));
        final ByteBuffer reply = socket.sent.get(0);
        assertEquals(80, reply.remaining());
        assertEquals(StressMessage.FLAG_PATTERN, StressMessage.flags(reply));
        assertTrue(StressMessage.matches(reply, 2, 5));
    }

    private Receiver passive(final boolean verify)
    {
        final StressSettings settings = new StressSettings(SELF, List.of(), 1, 1, 64, StressMessage.HEADER_BYTES, false,
            1_000_000_000L, verify, 0, false, 0, 0, 0);
        return new Receiver(socket, settings, new SenderTask[0], () -> completions++);
    }

    private static ByteBuffer request(
        final int task, final long sequence, final int size, final int ackSize, final int flags, final long timestamp)
    {
        final ByteBuffer b = ByteBuffer.allocate(size);
        StressMessage.writeHeader(b, StressMessage.REQUEST, flags, task, size, ackSize, sequence, timestamp);
        if ((flags & StressMessage.FLAG_PATTERN) != 0)
        {
            StressMessage.fill(b, task, sequence);
        }
        return b;
    }

    private static ByteBuffer done(final int task, final long count, final int tasks)
    {
        final ByteBuffer b = ByteBuffer.allocate(StressMessage.HEADER_BYTES);
        StressMessage.writeHeader(b, StressMessage.DONE, 0, task, StressMessage.HEADER_BYTES, tasks, count, 0);
        return b;
    }

    private static InetSocketAddress address(final String ip, final int port)
    {
        try
        {
            return new InetSocketAddress(InetAddress.getByName(ip), port);
        }
        catch (final java.net.UnknownHostException e)
        {
            throw new IllegalStateException(e);
        }
    }

    /** Records what is sent; receives nothing. */
    private static final class FakeSocket implements RdsSocket
    {
        final List<ByteBuffer> sent = new ArrayList<>();
        final List<InetSocketAddress> destinations = new ArrayList<>();

        @Override
        public RdsSocket bind(final InetSocketAddress local)
        {
            return this;
        }

        @Override
        public RdsSocket bind(final SocketAddress local)
        {
            return this;
        }

        @Override
        public InetSocketAddress localAddress()
        {
            return SELF;
        }

        @Override
        public InetSocketAddress getLocalAddress()
        {
            return SELF;
        }

        @Override
        public int tryClaim(final int length, final InetSocketAddress destination, final RdsClaim claim)
        {
            throw new UnsupportedOperationException("the receiver does not claim");
        }

        @Override
        public int send(final ByteBuffer src, final InetSocketAddress destination)
        {
            final ByteBuffer copy = ByteBuffer.allocate(src.remaining());
            copy.put(src).flip();
            sent.add(copy);
            destinations.add(destination);
            return copy.remaining();
        }

        @Override
        public InetSocketAddress receive(final ByteBuffer dst)
        {
            return null;
        }

        @Override
        public int receive(final ByteBuffer dst, final RdsReceiveInfo info)
        {
            info.clear();
            return RdsResult.EAGAIN;
        }

        @Override
        public int poll(final RdsMessageHandler handler, final int limit)
        {
            return 0;
        }

        @Override
        public RdsSocket startDelivery(final Executor executor, final RdsMessageHandler handler)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public int cancelSentTo(final InetSocketAddress destination)
        {
            return 0;
        }

        @Override
        public <T> RdsSocket setOption(final SocketOption<T> option, final T value)
        {
            return this;
        }

        @Override
        public <T> T getOption(final SocketOption<T> option)
        {
            return null;
        }

        @Override
        public Set<SocketOption<?>> supportedOptions()
        {
            return Set.of();
        }

        @Override
        public boolean awaitDrained(final Duration timeout)
        {
            return true;
        }

        @Override
        public RdsSocket configureBlocking(final boolean blocking)
        {
            return this;
        }

        @Override
        public boolean isBlocking()
        {
            return true;
        }

        @Override
        public RdsSocket setNotificationListener(final RdsNotificationListener listener)
        {
            return this;
        }

        @Override
        public long sendQueuedBytes()
        {
            return 0;
        }

        @Override
        public long receiveQueuedBytes()
        {
            return 0;
        }

        @Override
        public boolean isOpen()
        {
            return true;
        }

        @Override
        public void close()
        {
        }
    }
}
