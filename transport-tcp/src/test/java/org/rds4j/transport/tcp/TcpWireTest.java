package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.wire.RdsHeader;
import org.rds4j.transport.tcp.FakePeer.Frame;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Wire-level tests of RDS over TCP: a {@link FakePeer} made of plain java.nio sockets plays the other node,
 * so every header rds4j sends is checked byte for byte and every frame it receives is exactly what the test
 * wrote.
 * <p>
 * Addresses: test {@code n} uses 127.0.(100+n).x; the stack is at .10, a fake peer at .20 (higher: the stack
 * connects to it) or .5 / .6 (lower: the fake peer connects in). All on TCP port {@value #TCP_PORT}.
 * Absence of a frame is shown with markers (a ping whose pong must come after anything queued before it),
 * never by sleeping.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpWireTest
{
    private static final int TCP_PORT = 27100;
    private static final int FLAG_ACK_REQUIRED_BIT = FakePeer.FLAG_ACK_REQUIRED;
    private static final Duration T = Duration.ofSeconds(5);
    private static final int CONG = FakePeer.FLAG_CONG_BITMAP;
    private static final int ACK_REQ = FakePeer.FLAG_ACK_REQUIRED;
    private static final int RETRANS = FakePeer.FLAG_RETRANSMITTED;

    private RdsStack stack;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            try
            {
                resources.get(i).close();
            }
            catch (final Exception ex)
            {
                // best effort
            }
        }
        resources.clear();
        if (stack != null)
        {
            stack.close();
            stack = null;
        }
    }

    // ============================================================ sending side: rds4j (lower) connects to the fake peer

    @Test
    void firstFrameIsFullCongestionMapThenDataInSequence() throws Exception
    {
        final InetAddress stackAddress = address(1, 10);
        final InetAddress peerAddress = address(1, 20);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        final byte[][] payloads = {ascii("msg-1"), ascii("second message"), pattern(300, 7)};
        for (final byte[] payload : payloads)
        {
            assertEquals(payload.length, socket.send(ByteBuffer.wrap(payload), destination));
        }

        final FakePeer peer = track(listener.accept(T));
        assertEquals(stackAddress, peer.remoteAddress().getAddress(), "rds4j connects from its bound address");

        final Frame cong = peer.readFrame(T);
        assertFullCongestionMap(cong);
        assertArrayEquals(new byte[8192], cong.payload(), "no port is congested yet");

        for (int i = 0; i < payloads.length; i++)
        {
            final Frame data = peer.readFrame(T);
            assertEquals(i + 1, data.seq(), "sequence numbers start at 1 per connection: " + data);
            assertEquals(0, data.ack(), "nothing received, nothing to ack: " + data);
            assertEquals(payloads[i].length, data.len());
            assertEquals(5000, data.sport());
            assertEquals(7000, data.dport());
            assertEquals(0, data.flags(), "no reason for any flag: " + data);
            assertEquals(0, data.credit());
            assertEquals(0, data.csum(), "TCP headers are not checksummed");
            assertArrayEquals(payloads[i], data.payload());
            if (i == 0)
            {
                final byte[] expected = {
                    0, 0, 0, 0, 0, 0, 0, 1,                 // sequence 1
                    0, 0, 0, 0, 0, 0, 0, 0,                 // ack 0
                    0, 0, 0, 5,                             // len 5
                    0x13, (byte)0x88,                       // sport 5000
                    0x1B, 0x58,                             // dport 7000
                    0,                                      // flags
                    0,                                      // credit
                    0, 0, 0, 0,                             // padding
                    0, 0,                                   // checksum: none over TCP
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // no extension headers
                };
                assertEquals(48, expected.length);
                assertArrayEquals(expected, data.header(),
                    () -> "header bytes: expected " + HexFormat.of().formatHex(expected) + " got " +
                        HexFormat.of().formatHex(data.header()));
            }
        }
    }

    @Test
    void ackRequiredEveryNinthPacket() throws Exception
    {
        final InetAddress stackAddress = address(2, 10);
        final InetAddress peerAddress = address(2, 20);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        socket.setOption(RdsOptions.SO_SNDBUF, 1 << 20);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        for (int i = 1; i <= 20; i++)
        {
            assertEquals(10, socket.send(ByteBuffer.wrap(pattern(10, i)), destination));
        }
        final FakePeer peer = track(listener.accept(T));
        assertFullCongestionMap(peer.readFrame(T));
        final List<Integer> flagged = new ArrayList<>();
        for (int i = 1; i <= 20; i++)
        {
            final Frame data = peer.readFrame(T);
            assertEquals(i, data.seq(), data.toString());
            assertArrayEquals(pattern(10, i), data.payload());
            assertEquals(0, data.flags() & ~ACK_REQ, "only ACK_REQUIRED may be set: " + data);
            if ((data.flags() & ACK_REQ) != 0)
            {
                flagged.add(i);
            }
        }
        assertEquals(List.of(9, 18), flagged, "budget of 8 unacked packets: the 9th and the 18th ask for an ack");
        awaitCounter("send_ack_required", 2);
    }

    @Test
    void ackRequiredAtHalfSendBuffer() throws Exception
    {
        final InetAddress stackAddress = address(3, 10);
        final InetAddress peerAddress = address(3, 20);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        socket.setOption(RdsOptions.SO_SNDBUF, 1000);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        for (int i = 1; i <= 6; i++)
        {
            assertEquals(100, socket.send(ByteBuffer.wrap(pattern(100, i)), destination));
        }
        assertEquals(600, socket.sendQueuedBytes());
        final FakePeer peer = track(listener.accept(T));
        assertFullCongestionMap(peer.readFrame(T));
        for (int i = 1; i <= 6; i++)
        {
            final Frame data = peer.readFrame(T);
            assertEquals(i, data.seq(), data.toString());
            // queued bytes including this message: 100, 200, ... ; half of 1000 is reached by the 5th
            final int expectedFlags = i >= 5 ? ACK_REQ : 0;
            assertEquals(expectedFlags, data.flags(), "message " + i + " with " + (100 * i) + " bytes queued: " + data);
        }
    }

    @Test
    void ackReleasesSendBuffer() throws Exception
    {
        final InetAddress stackAddress = address(4, 10);
        final InetAddress peerAddress = address(4, 20);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        for (int i = 1; i <= 5; i++)
        {
            assertEquals(100, socket.send(ByteBuffer.wrap(pattern(100, i)), destination));
        }
        assertEquals(500, socket.sendQueuedBytes());

        final FakePeer peer = track(listener.accept(T));
        assertFullCongestionMap(peer.readFrame(T));
        peer.sendCongestionMap(new byte[8192]);
        for (int i = 1; i <= 5; i++)
        {
            assertEquals(i, peer.readFrame(T).seq());
        }
        assertEquals(500, socket.sendQueuedBytes(), "sent is not acked");

        peer.sendAck(3);
        Await.until(T, () -> socket.sendQueuedBytes() == 200, () -> "ack 3 frees 3 x 100 bytes; queued " + socket.sendQueuedBytes());
        // marker: a ping answered after the ack was processed; the 4th and 5th must still be held
        final Frame pong = roundTrip(peer, 1, 4444);
        assertEquals(6, pong.seq(), "the pong follows data 1..5: " + pong);
        assertEquals(200, socket.sendQueuedBytes(), "ack 3 must not free messages 4 and 5");
        awaitCounter("send_drop_acked", 3);

        peer.sendAck(5);
        Await.until(T, () -> socket.sendQueuedBytes() == 0, () -> "ack 5 frees everything; queued " + socket.sendQueuedBytes());
        awaitCounter("send_drop_acked", 5);
        assertEquals(1, connectionInfo(peerAddress).unacked(), "only the pong (seq 6) is unacked");
    }

    @Test
    void ackOfSequencesNeverSentIsIgnored() throws Exception
    {
        final InetAddress stackAddress = address(40, 10);
        final InetAddress peerAddress = address(40, 20);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        for (int i = 1; i <= 5; i++)
        {
            assertEquals(100, socket.send(ByteBuffer.wrap(pattern(100, i)), destination));
        }
        final FakePeer peer = track(listener.accept(T));
        assertFullCongestionMap(peer.readFrame(T));
        peer.sendCongestionMap(new byte[8192]);
        for (int i = 1; i <= 5; i++)
        {
            assertEquals(i, peer.readFrame(T).seq());
        }

        // a peer that outlived an earlier incarnation of this stack repeats its old, higher ack
        peer.sendAck(1000);
        final Frame pong = roundTrip(peer, 1, 4444);
        assertEquals(6, pong.seq(), "the pong follows data 1..5: " + pong);
        assertEquals(500, socket.sendQueuedBytes(), "an ack above anything sent frees nothing");
        awaitCounter("recv_drop_bad_ack", 1);
        assertEquals(0L, stack.counters().get("send_drop_acked"));

        peer.sendAck(5);
        Await.until(T, () -> socket.sendQueuedBytes() == 0, () -> "a valid ack still frees; queued " + socket.sendQueuedBytes());
        awaitCounter("send_drop_acked", 5);
    }

    @Test
    void retransmitAfterDrop() throws Exception
    {
        final InetAddress stackAddress = address(5, 10);
        final InetAddress peerAddress = address(5, 20);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        final byte[][] payloads = {pattern(10, 1), pattern(20, 2), pattern(30, 3)};
        for (final byte[] payload : payloads)
        {
            assertEquals(payload.length, socket.send(ByteBuffer.wrap(payload), destination));
        }

        try (FakePeer first = listener.accept(T))
        {
            assertFullCongestionMap(first.readFrame(T));
            for (int i = 1; i <= 3; i++)
            {
                final Frame data = first.readFrame(T);
                assertEquals(i, data.seq());
                assertEquals(0, data.flags() & RETRANS, "a first transmission: " + data);
            }
            first.sendAck(1);
            Await.until(T, () -> socket.sendQueuedBytes() == 50, () -> "ack 1 frees 10 bytes; queued " + socket.sendQueuedBytes());
        }

        // rds4j is the lower node: it reconnects on its own
        final FakePeer second = track(listener.accept(T));
        assertFullCongestionMap(second.readFrame(T));
        for (int i = 2; i <= 3; i++)
        {
            final Frame data = second.readFrame(T);
            assertEquals(i, data.seq(), "seq 1 was acked and must not be resent: " + data);
            assertEquals(RETRANS | ACK_REQ, data.flags(), "a retransmission asks for an ack: " + data);
            assertEquals(5000, data.sport());
            assertEquals(7000, data.dport());
            assertArrayEquals(payloads[i - 1], data.payload(), "identical payload");
        }
        awaitCounter("send_retransmitted", 2);
        assertEquals(50, socket.sendQueuedBytes(), "retransmitted messages are still unacked");

        final byte[] fourth = ascii("after reconnect");
        assertEquals(fourth.length, socket.send(ByteBuffer.wrap(fourth), destination));
        final Frame data = second.readFrame(T);
        assertEquals(4, data.seq(), data.toString());
        assertEquals(0, data.flags(), "a new message is not a retransmission: " + data);
        assertArrayEquals(fourth, data.payload());

        // an ack piggybacked on the fake peer's data (a ping) frees the rest
        second.sendData(1, 4, 4444, 0, 0, new byte[0]);
        Await.until(T, () -> socket.sendQueuedBytes() == 0, () -> "ack 4 in a data header frees all; queued " + socket.sendQueuedBytes());
        final List<Frame> frames = second.readUntil(T, Frame::isPong, "pong");
        assertEquals(5, frames.get(frames.size() - 1).seq());
    }

    // ============================================================ receiving side: the fake peer (lower) connects in

    @Test
    void receiverAcksAckRequired() throws Exception
    {
        final InetAddress stackAddress = address(6, 10);
        final InetAddress peerAddress = address(6, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);

        peer.sendData(1, 0, 4000, 5000, ACK_REQ, ascii("hello"));
        final List<Frame> frames = peer.readUntil(T, f -> f.ack() >= 1, "ack 1");
        final Frame ack = frames.get(frames.size() - 1);
        assertEquals(1, ack.ack());
        final byte[] expectedAck = new byte[48];
        expectedAck[15] = 1;
        assertArrayEquals(expectedAck, ack.header(), "an ack-only frame: everything 0 but ack = 1; " + ack);

        final ByteBuffer dst = ByteBuffer.allocate(100);
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        assertEquals("hello", new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));

        // no ACK_REQUIRED: the ack goes after ackDelay (1 ms by default)
        peer.sendData(2, 0, 4000, 5000, 0, ascii("world"));
        final List<Frame> later = peer.readUntil(Duration.ofSeconds(1), f -> f.ack() >= 2, "delayed ack 2");
        final Frame delayed = later.get(later.size() - 1);
        assertEquals(2, delayed.ack());
        assertTrue(delayed.isAckOnly(), "nothing to piggyback on: " + delayed);
        dst.clear();
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        assertEquals("world", new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
        awaitCounter("recv_ack_required", 1);
        awaitCounter("send_ack_only", 2);
    }

    @Test
    void ackRequiredDoesNotWaitForAckDelay() throws Exception
    {
        // with a one-minute ack delay, only ACK_REQUIRED can make the ack go within the test's deadline
        stack = RdsStack.open(RdsStackConfig.builder().name("wire-slow-ack")
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build())
            .ackDelay(Duration.ofMinutes(1)).build());
        final InetAddress stackAddress = address(19, 10);
        final InetAddress peerAddress = address(19, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);
        peer.sendData(1, 0, 4000, 5000, 0, ascii("no hurry"));
        peer.sendData(2, 0, 4000, 5000, ACK_REQ, ascii("ack me"));
        final List<Frame> frames = peer.readUntil(T, f -> f.ack() != 0, "an ack");
        final Frame ack = frames.get(frames.size() - 1);
        assertEquals(2, ack.ack(), "the first ack covers both: " + frames);
        assertTrue(ack.isAckOnly(), ack.toString());
        socket.configureBlocking(false);
        assertEquals(List.of("no hurry", "ack me"), receiveAll(socket));
    }

    @Test
    void duplicateRetransmissionDropped() throws Exception
    {
        final InetAddress stackAddress = address(7, 10);
        final InetAddress peerAddress = address(7, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);

        peer.sendData(1, 0, 4000, 5000, 0, ascii("A"));
        peer.sendData(1, 0, 4000, 5000, RETRANS, ascii("A"));      // an old sequence, retransmitted: dropped
        peer.sendData(1, 0, 4000, 5000, 0, ascii("B"));            // an old sequence, not retransmitted: delivered
        peer.sendData(5, 0, 4000, 5000, ACK_REQ, ascii("C"));      // a gap is fine
        final List<Frame> frames = peer.readUntil(T, f -> f.ack() >= 5, "ack 5");
        assertEquals(5, frames.get(frames.size() - 1).ack());

        // everything was processed before ack 5 was generated
        socket.configureBlocking(false);
        assertEquals(List.of("A", "B", "C"), receiveAll(socket));
        assertEquals(1, counter("recv_drop_old_seq"));
        assertEquals(3, counter("recv_delivered"));
        assertEquals(6, connectionInfo(peerAddress).nextRxSequence());
    }

    @Test
    void pingGetsPongAndSport0PingIgnored() throws Exception
    {
        final InetAddress stackAddress = address(8, 10);
        final InetAddress peerAddress = address(8, 5);
        socket(stackAddress, 5000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);

        peer.sendPing(1, 4444);
        final List<Frame> first = peer.readUntil(T, Frame::isData, "pong to 4444");
        final Frame pong = first.get(first.size() - 1);
        assertEquals(1, pong.seq(), "the stack's first data frame: " + pong);
        assertEquals(0, pong.sport());
        assertEquals(4444, pong.dport());
        assertEquals(0, pong.len());
        assertEquals(0, pong.flags(), pong.toString());
        assertEquals(1, pong.ack(), "the ping was received before the pong was stamped");

        peer.sendPing(2, 0);        // from port 0: no pong (no ping-pong loops)
        peer.sendPing(3, 4445);
        final List<Frame> second = peer.readUntil(T, Frame::isData, "the next data frame");
        final Frame next = second.get(second.size() - 1);
        assertEquals(4445, next.dport(), "the first pong after the sport-0 ping must be for 4445: " + second);
        assertEquals(0, next.sport());
        assertEquals(2, next.seq());
        assertEquals(3, next.ack(), "the sport-0 ping is still sequenced and acked");
        // recv_ping counts pings that are answered: Connection.onFrame increments it only when sport != 0
        // (as the kernel's rds_recv_incoming), so the sport-0 ping is not counted: 4444 and 4445 only.
        awaitCounter("send_pong", 2);
        assertEquals(2, counter("recv_ping"));
    }

    @Test
    void unboundPortDroppedButAcked() throws Exception
    {
        final InetAddress stackAddress = address(9, 10);
        final InetAddress peerAddress = address(9, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);

        peer.sendData(1, 0, 4000, 6000, 0, ascii("nobody listens"));
        final List<Frame> frames = peer.readUntil(T, f -> f.ack() >= 1, "ack 1");
        assertEquals(1, frames.get(frames.size() - 1).ack());
        awaitCounter("recv_drop_no_sock", 1);
        assertEquals(0, counter("recv_delivered"));

        // the bound port still works on the same connection
        peer.sendData(2, 0, 4000, 5000, ACK_REQ, ascii("somebody"));
        final ByteBuffer dst = ByteBuffer.allocate(100);
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        assertEquals("somebody", new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
        assertEquals(1, counter("recv_drop_no_sock"));
    }

    /**
     * Frames that arrive in one read are queued in runs (docs/receive-runs.md): every way a run is broken (another
     * sending port, another socket, an ack-only frame, a dropped retransmission, a frame to no socket, a ping, a
     * congestion update) keeps each message's bytes, sender and order, and every frame's rule; then a batch larger
     * than the socket's receive ring comes in order, whole.
     */
    @Test
    void framesOfOneReadComeInOrderWithTheirSendersWhereverTheirRunsBreak() throws Exception
    {
        final InetAddress stackAddress = address(44, 10);
        final InetAddress peerAddress = address(44, 5);
        final RdsSocket a = socket(stackAddress, 5000);
        final RdsSocket b = socket(stackAddress, 5001);
        final FakePeer peer = connectIn(peerAddress, stackAddress);

        final java.io.ByteArrayOutputStream read = new java.io.ByteArrayOutputStream();
        read.write(data(1, 4000, 5000, 0, "a1"));
        read.write(data(2, 4000, 5000, 0, "a2"));
        read.write(data(3, 4001, 5000, 0, "c1"));
        read.write(data(4, 4000, 5000, 0, "a3"));
        read.write(data(5, 4000, 5001, 0, "b1"));
        read.write(data(6, 4000, 5000, 0, "a4"));
        read.write(FakePeer.header(0, 0, 0, 0, 0, 0, 0, 0));
        read.write(data(7, 4000, 5000, 0, "a5"));
        read.write(data(7, 4000, 5000, RETRANS, "a5 again"));
        read.write(data(8, 4000, 5000, 0, "a6"));
        read.write(data(9, 4000, 6000, 0, "to nobody"));
        read.write(data(10, 4000, 5000, 0, "a7"));
        read.write(FakePeer.header(11, 0, 0, 4000, 0, 0, 0, 0));
        read.write(data(12, 4000, 5000, 0, "a8"));
        read.write(FakePeer.concat(FakePeer.header(0, 0, FakePeer.CONG_MAP_BYTES, 0, 0, CONG, 0, 0),
            new byte[FakePeer.CONG_MAP_BYTES]));
        read.write(data(13, 4000, 5000, 0, "a9"));
        read.write(data(14, 4000, 5000, ACK_REQ, "a10"));
        peer.sendRaw(read.toByteArray());
        peer.readUntil(T, f -> f.ack() >= 14, "ack 14");

        final List<String> polled = new ArrayList<>();
        a.configureBlocking(false);
        assertEquals(2, a.poll((sender, payload) -> polled.add(sender.getPort() + " " + text(payload)), 2));
        assertEquals(List.of("4000 a1", "4000 a2"), polled);
        final ByteBuffer dst = ByteBuffer.allocate(100);
        assertEquals(new InetSocketAddress(peerAddress, 4001), a.receive(dst));
        assertEquals("c1", new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
        polled.clear();
        assertEquals(8, a.poll((sender, payload) -> polled.add(sender.getPort() + " " + text(payload)), 100));
        assertEquals(List.of("4000 a3", "4000 a4", "4000 a5", "4000 a6", "4000 a7", "4000 a8", "4000 a9", "4000 a10"),
            polled);
        b.configureBlocking(false);
        assertEquals(List.of("b1"), receiveAll(b));
        assertEquals(12, counter("recv_delivered"));
        assertEquals(1, counter("recv_drop_old_seq"));
        assertEquals(1, counter("recv_drop_no_sock"));
        assertEquals(1, counter("recv_ping"));
        assertEquals(0, a.receiveQueuedBytes());

        // more than the receive ring holds (3,000 x 112 bytes), in one write: runs as long as a record carries
        final int count = 3000;
        final ByteBuffer batch = ByteBuffer.allocate(count * (FakePeer.HEADER + 64));
        for (int i = 0; i < count; i++)
        {
            final byte[] payload = pattern(64, i);
            batch.put(FakePeer.header(15 + i, 0, 64, 4000 + (i / 700) % 2, 5000, i == count - 1 ? ACK_REQ : 0, 0, 0));
            batch.put(payload);
        }
        peer.sendRaw(batch.array());
        peer.readUntil(T, f -> f.ack() >= 15 + count - 1, "the batch's last ack");
        assertEquals(count * 64L, a.receiveQueuedBytes());
        for (int i = 0; i < count; i++)
        {
            dst.clear();
            assertEquals(new InetSocketAddress(peerAddress, 4000 + (i / 700) % 2), a.receive(dst), "message " + i);
            assertArrayEquals(pattern(64, i), Arrays.copyOf(dst.array(), dst.position()), "message " + i);
        }
        assertNull(a.receive(dst.clear()));
        assertEquals(12 + count, counter("recv_delivered"));
        assertEquals(0, a.receiveQueuedBytes());
        // how the reads cut the stream is TCP's choice; that the batch went in runs of two or more is not
        final long runs = counter("recv_runs");
        assertTrue(runs >= 1 && runs <= count / 2 + 2, "runs: " + runs);

        // frames for the two sockets in turn, in one write: each socket's go into a run of its own, in order
        batch.clear();
        for (int i = 0; i < 2000; i++)
        {
            batch.put(FakePeer.header(15 + count + i, 0, 64, 4000, 5000 + i % 2, i == 1999 ? ACK_REQ : 0, 0, 0));
            batch.put(pattern(64, i));
        }
        peer.sendRaw(Arrays.copyOf(batch.array(), batch.position()));
        peer.readUntil(T, f -> f.ack() >= 15 + count + 1999, "the alternating batch's last ack");
        for (int i = 0; i < 2000; i++)
        {
            final RdsSocket socket = i < 1000 ? a : b;
            final int message = i < 1000 ? 2 * i : 2 * (i - 1000) + 1;
            dst.clear();
            assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst), "message " + message);
            assertArrayEquals(pattern(64, message), Arrays.copyOf(dst.array(), dst.position()), "message " + message);
        }
        assertNull(a.receive(dst.clear()));
        assertNull(b.receive(dst.clear()));
        assertEquals(12 + count + 2000, counter("recv_delivered"));
        final long interleaved = counter("recv_runs") - runs;
        assertTrue(interleaved >= 2 && interleaved <= 1000 + 4, "runs of frames that alternate sockets: " + interleaved);
    }

    @Test
    void congestionUpdateOnOverflowAndDrain() throws Exception
    {
        final InetAddress stackAddress = address(10, 10);
        final InetAddress peerAddress = address(10, 5);
        final InetAddress otherPeerAddress = address(10, 6);
        final int port = 5003; // byte 625, bit 3
        final RdsSocket socket = socket(stackAddress, port);
        socket.setOption(RdsOptions.SO_RCVBUF, 1000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);
        final FakePeer other = connectIn(otherPeerAddress, stackAddress);

        long seq = 0;
        for (int i = 1; i <= 10; i++)
        {
            peer.sendData(++seq, 0, 4000, port, 0, pattern(100, i));
        }
        // 1000 bytes queued is not above 1000: no update may have been queued before the pong
        List<Frame> frames = pingUntilPong(peer, ++seq, 4444);
        assertNoCongestionUpdate(frames, "with 1000 bytes queued");
        assertEquals(1000, socket.receiveQueuedBytes());

        peer.sendData(++seq, 0, 4000, port, 0, pattern(100, 11));
        for (final FakePeer node : List.of(peer, other))
        {
            frames = node.readUntil(T, Frame::isCongestionUpdate, "congestion update with port " + port + " set");
            final Frame update = frames.get(frames.size() - 1);
            assertFullCongestionMap(update);
            final byte[] expected = new byte[8192];
            expected[port / 8] = (byte)(1 << (port % 8));
            assertEquals(0x08, update.payload()[625] & 0xFF, "port 5003 is bit 3 of byte 625");
            assertArrayEquals(expected, update.payload(), "only port " + port + " is congested; sent to " + node);
        }
        assertEquals(1100, socket.receiveQueuedBytes());

        final ByteBuffer dst = ByteBuffer.allocate(1000);
        for (int i = 1; i <= 6; i++)
        {
            dst.clear();
            assertNotNull(socket.receive(dst));
            assertEquals(100, dst.position());
        }
        assertEquals(500, socket.receiveQueuedBytes());
        // 500 is not below half of 1000: still congested. Two markers: a release decided in the cycle that
        // answers the first ping would still go before the second pong.
        frames = pingUntilPong(peer, ++seq, 4444);
        frames.addAll(pingUntilPong(peer, ++seq, 4445));
        assertNoCongestionUpdate(frames, "with 500 bytes queued");

        dst.clear();
        assertNotNull(socket.receive(dst));
        assertEquals(400, socket.receiveQueuedBytes());
        for (final FakePeer node : List.of(peer, other))
        {
            frames = node.readUntil(T, Frame::isCongestionUpdate, "congestion update with every bit clear");
            final Frame update = frames.get(frames.size() - 1);
            assertFullCongestionMap(update);
            assertArrayEquals(new byte[8192], update.payload(), "the bit is cleared below half; sent to " + node);
        }
    }

    @Test
    void peerCongestionMapMakesSendReturnENOBUFS() throws Exception
    {
        final InetAddress stackAddress = address(11, 10);
        final InetAddress peerAddress = address(11, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        final ConcurrentLinkedQueue<InetSocketAddress> uncongested = new ConcurrentLinkedQueue<>();
        socket.setOption(RdsOptions.RDS_CONG_MONITOR, true);
        socket.setNotificationListener(new RdsNotificationListener()
        {
            @Override
            public void onUncongested(final InetSocketAddress destination)
            {
                uncongested.add(destination);
            }
        });
        socket.configureBlocking(false);
        final FakePeer peer = connectIn(peerAddress, stackAddress);
        awaitCounter("cong_update_received", 1);

        peer.sendCongestionMap(FakePeer.congestionMapWith(7000));
        awaitCounter("cong_update_received", 2);

        final InetSocketAddress congested = new InetSocketAddress(peerAddress, 7000);
        final InetSocketAddress free = new InetSocketAddress(peerAddress, 7001);
        assertEquals(RdsResult.ENOBUFS, socket.send(ByteBuffer.wrap(ascii("blocked")), congested));
        final byte[] toFree = ascii("to 7001");
        assertEquals(toFree.length, socket.send(ByteBuffer.wrap(toFree), free));
        final Frame first = peer.readDataFrame(T);
        assertEquals(7001, first.dport());
        assertEquals(1, first.seq());
        assertArrayEquals(toFree, first.payload());

        peer.sendCongestionMap(new byte[8192]);
        Await.until(T, () ->
        {
            try
            {
                socket.poll((sender, payload) -> { }, 16);
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
            return !uncongested.isEmpty();
        }, () -> "onUncongested(" + congested + ")");
        assertEquals(List.of(congested), new ArrayList<>(uncongested));

        final byte[] now = ascii("now to 7000");
        assertEquals(now.length, socket.send(ByteBuffer.wrap(now), congested));
        final Frame second = peer.readDataFrame(T);
        assertEquals(7000, second.dport());
        assertEquals(2, second.seq());
        assertArrayEquals(now, second.payload());
        assertEquals(1, counter("send_cong_blocked"));
    }

    @Test
    void badFramesDropConnection() throws Exception
    {
        final InetAddress stackAddress = address(12, 10);
        final InetAddress peerAddress = address(12, 5);
        final InetAddress healthyAddress = address(12, 6);
        final RdsSocket socket = socket(stackAddress, 5000);
        final InetSocketAddress stackTcp = new InetSocketAddress(stackAddress, TCP_PORT);

        final byte[] hugeLength = FakePeer.header(1, 0, 0x7fffffffL, 4000, 5000, 0, 0, 0);
        final byte[] shortCongestionUpdate = FakePeer.concat(FakePeer.header(0, 0, 100, 0, 0, CONG, 0, 0), new byte[100]);
        final byte[] badChecksumHeader = FakePeer.header(1, 0, 5, 4000, 5000, 0, 0, 0);
        final int good = FakePeer.checksumOf(badChecksumHeader);
        final int bad = (good ^ 0x5A5A) == 0 ? 0x1234 : good ^ 0x5A5A;
        badChecksumHeader[30] = (byte)(bad >>> 8);
        badChecksumHeader[31] = (byte)bad;
        final byte[] badChecksum = FakePeer.concat(badChecksumHeader, ascii("hello"));

        final byte[] justOverLimit = FakePeer.header(1, 0, (1 << 20) + 1, 4000, 5000, 0, 0, 0);

        final byte[][] cases = {hugeLength, shortCongestionUpdate, badChecksum, justOverLimit};
        final String[] names = {"len 0x7fffffff", "flags 0x01 with len 100", "wrong non-zero checksum", "len 1 MiB + 1"};
        for (int i = 0; i < cases.length; i++)
        {
            final long before = counter("conn_bad_frame");
            try (FakePeer peer = FakePeer.connect(peerAddress, stackTcp, T))
            {
                peer.sendRaw(cases[i]);
                peer.expectClosedByPeer(T);
            }
            final int caseIndex = i;
            Await.until(T, () -> counter("conn_bad_frame") == before + 1,
                () -> names[caseIndex] + ": conn_bad_frame " + counter("conn_bad_frame") + ", expected " + (before + 1));
            assertEquals(i + 1, counter("conn_bad_frame"), names[i]);
        }
        assertEquals(0, counter("recv_delivered"), "nothing of a bad frame is delivered");

        // the stack keeps working: a healthy node exchanges a message with the socket; its header carries a
        // correct non-zero checksum, which is accepted
        final FakePeer healthy = connectIn(healthyAddress, stackAddress);
        final byte[] header = FakePeer.withChecksum(FakePeer.header(1, 0, 7, 4000, 5000, ACK_REQ, 0, 0));
        assertTrue(header[30] != 0 || header[31] != 0);
        healthy.sendRaw(FakePeer.concat(header, ascii("healthy")));
        final ByteBuffer dst = ByteBuffer.allocate(100);
        assertEquals(new InetSocketAddress(healthyAddress, 4000), socket.receive(dst));
        assertEquals("healthy", new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
        final byte[] reply = ascii("reply");
        assertEquals(reply.length, socket.send(ByteBuffer.wrap(reply), new InetSocketAddress(healthyAddress, 4000)));
        final Frame answer = healthy.readDataFrame(T);
        assertEquals(1, answer.seq());
        assertEquals(1, answer.ack());
        assertEquals(5000, answer.sport());
        assertEquals(4000, answer.dport());
        assertArrayEquals(reply, answer.payload());
        assertEquals(cases.length, counter("conn_bad_frame"));
    }

    @Test
    void rxSequenceSurvivesReconnect() throws Exception
    {
        final InetAddress stackAddress = address(17, 10);
        final InetAddress peerAddress = address(17, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        try (FakePeer first = FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T))
        {
            assertFullCongestionMap(first.readFrame(T));
            first.sendData(1, 0, 4000, 5000, ACK_REQ, ascii("A"));
            final List<Frame> frames = first.readUntil(T, f -> f.ack() >= 1, "ack 1");
            assertEquals(1, frames.get(frames.size() - 1).ack());
        }
        Await.until(T, () -> !connectionInfo(peerAddress).state().equals("UP"), () -> "connection down after the close");

        // the fake peer resends seq 1 as a retransmission on the new connection: the stack kept next rx = 2
        final FakePeer second = connectIn(peerAddress, stackAddress);
        second.sendData(1, 0, 4000, 5000, RETRANS | ACK_REQ, ascii("A"));
        second.sendData(2, 0, 4000, 5000, ACK_REQ, ascii("B"));
        final List<Frame> frames = second.readUntil(T, f -> f.ack() >= 2, "ack 2");
        assertEquals(2, frames.get(frames.size() - 1).ack());
        socket.configureBlocking(false);
        assertEquals(List.of("A", "B"), receiveAll(socket));
        assertEquals(1, counter("recv_drop_old_seq"));
    }

    @Test
    void closingCongestedSocketClearsItsBit() throws Exception
    {
        final InetAddress stackAddress = address(18, 10);
        final InetAddress peerAddress = address(18, 5);
        final int port = 5010; // byte 626, bit 2
        final RdsSocket socket = socket(stackAddress, port);
        socket.setOption(RdsOptions.SO_RCVBUF, 100);
        final FakePeer peer = connectIn(peerAddress, stackAddress);
        peer.sendData(1, 0, 4000, port, 0, pattern(100, 1));
        peer.sendData(2, 0, 4000, port, 0, pattern(100, 2));
        List<Frame> frames = peer.readUntil(T, Frame::isCongestionUpdate, "congestion update with the bit set");
        final byte[] expected = new byte[8192];
        expected[626] = 0x04;
        assertArrayEquals(expected, frames.get(frames.size() - 1).payload());

        socket.close();
        frames = peer.readUntil(T, Frame::isCongestionUpdate, "congestion update after close");
        assertArrayEquals(new byte[8192], frames.get(frames.size() - 1).payload(), "closing the socket clears its bit");
    }

    /** An ack written on a connection that then broke may be lost: the stack repeats it first thing on the next. */
    @Test
    void ackIsRepeatedOnReconnect() throws Exception
    {
        final InetAddress stackAddress = address(25, 10);
        final InetAddress peerAddress = address(25, 5);
        socket(stackAddress, 5000);
        try (FakePeer first = FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T))
        {
            assertFullCongestionMap(first.readFrame(T));
            first.sendData(1, 0, 4000, 5000, 0, ascii("A"));
            final List<Frame> frames = first.readUntil(T, f -> f.ack() >= 1, "delayed ack 1");
            assertEquals(1, frames.get(frames.size() - 1).ack());
        }
        Await.until(T, () -> !connectionInfo(peerAddress).state().equals("UP"), () -> "connection down after the close");

        final FakePeer second = track(FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T));
        assertFullCongestionMap(second.readFrame(T));
        final Frame ack = second.readFrame(Duration.ofSeconds(2));
        assertTrue(ack.isAckOnly(), "right after the map, with nothing new received: " + ack);
        assertEquals(1, ack.ack(), ack.toString());
    }

    /** A peer that asks again (a duplicate with ACK_REQUIRED) is answered again, on the same connection. */
    @Test
    void repeatedAckRequestIsAnsweredAgain() throws Exception
    {
        final InetAddress stackAddress = address(24, 10);
        final InetAddress peerAddress = address(24, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);
        peer.sendData(1, 0, 4000, 5000, ACK_REQ, ascii("A"));
        List<Frame> frames = peer.readUntil(T, f -> f.ack() >= 1, "ack 1");
        assertEquals(1, frames.get(frames.size() - 1).ack());
        peer.sendData(1, 0, 4000, 5000, RETRANS | ACK_REQ, ascii("A"));
        frames = peer.readUntil(Duration.ofSeconds(2), f -> f.ack() >= 1, "a second ack 1 answering the repeated request");
        assertEquals(1, frames.get(frames.size() - 1).ack());
        awaitCounter("recv_drop_old_seq", 1);
        socket.configureBlocking(false);
        assertEquals(List.of("A"), receiveAll(socket));
    }

    /**
     * The fake peer sent seq 1 with ACK_REQUIRED and the stack acked it, but suppose that ack was lost with the
     * connection (it can be: the stack's write succeeded, the peer never read it). The peer resends seq 1 as
     * RETRANSMITTED|ACK_REQUIRED on the new connection, as the kernel does; the stack rightly drops the
     * duplicate but must still answer the ack request, or the peer holds the message (and its send-buffer
     * bytes) until the stack happens to send it data.
     */
    @Test
    void retransmittedAckRequiredIsAckedAgainOnNewConnection() throws Exception
    {
        final InetAddress stackAddress = address(23, 10);
        final InetAddress peerAddress = address(23, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        try (FakePeer first = FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T))
        {
            assertFullCongestionMap(first.readFrame(T));
            first.sendData(1, 0, 4000, 5000, ACK_REQ, ascii("A"));
            final List<Frame> frames = first.readUntil(T, f -> f.ack() >= 1, "ack 1");
            assertEquals(1, frames.get(frames.size() - 1).ack());
        }
        Await.until(T, () -> !connectionInfo(peerAddress).state().equals("UP"), () -> "connection down after the close");

        final FakePeer second = connectIn(peerAddress, stackAddress);
        second.sendData(1, 0, 4000, 5000, RETRANS | ACK_REQ, ascii("A"));
        awaitCounter("recv_drop_old_seq", 1);
        final List<Frame> frames = second.readUntil(Duration.ofSeconds(2), f -> f.ack() >= 1,
            "an ack covering seq 1 on the new connection, answering its ACK_REQUIRED");
        assertEquals(1, frames.get(frames.size() - 1).ack());
        socket.configureBlocking(false);
        assertEquals(List.of("A"), receiveAll(socket));
    }

    /**
     * A message cancelled while the transport is part way through writing it is not requeued when the
     * connection drops; the message queued behind it was never sent, so on the next connection it must go as
     * a first transmission, not marked RETRANSMITTED. Without a send ring (zero-copy off), so that the 1 MiB
     * messages are written from their own buffers; staged, the message behind would be handed to the transport
     * too, and so be a retransmission on the next connection.
     */
    @Test
    void cancelWhileWritingDoesNotMarkTheNextMessageRetransmitted() throws Exception
    {
        stack = RdsStack.open(RdsStackConfig.builder().name("wire-copy")
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).tcpSendRingBytes(0).build()).build());
        final InetAddress stackAddress = address(22, 10);
        final InetAddress peerAddress = address(22, 20);
        // a small receive window: the stack can push at most its own TCP send buffer plus a few KiB
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT, 4096));
        final RdsSocket socket = socket(stackAddress, 5000);
        socket.setOption(RdsOptions.SO_SNDBUF, 64 << 20);
        // more 1 MiB messages than the largest TCP send buffer (tcp_wmem max) can take: a write stalls mid-message
        final int big = (int)(maxTcpSendBuffer() >> 20) + 3;
        final InetSocketAddress cancelled = new InetSocketAddress(peerAddress, 7000);
        final InetSocketAddress kept = new InetSocketAddress(peerAddress, 7001);
        for (int i = 0; i < big; i++)
        {
            assertEquals(1 << 20, socket.send(ByteBuffer.wrap(pattern(1 << 20, i)), cancelled));
        }
        final byte[] after = ascii("queued behind the cancelled ones");
        assertEquals(after.length, socket.send(ByteBuffer.wrap(after), kept));

        try (FakePeer first = listener.accept(T))
        {
            assertFullCongestionMap(first.readFrame(T));
            first.answerProbes(false);
            assertTrue(first.readFrame(T).isHandshakeProbe());
            first.sendHandshakePong();
            final Frame header = first.readHeader(T);
            assertEquals(1, header.seq());
            assertEquals(7000, header.dport());
            // the stack's first gathering write has begun; it cannot complete: one 1 MiB message is part written
            assertEquals(big, socket.cancelSentTo(cancelled));
            assertEquals(after.length, socket.sendQueuedBytes(), "cancelled bytes leave the send buffer");
        }   // closed with unread data: a reset; the stack reconnects (it is the lower node)

        final FakePeer second = track(listener.accept(T));
        assertFullCongestionMap(second.readFrame(T));
        final Frame next = second.readFrame(T);
        assertEquals(big + 1, next.seq(), "no cancelled message is resent: " + next);
        assertEquals(7001, next.dport());
        assertArrayEquals(after, next.payload());
        assertEquals(0, next.flags() & RETRANS, "never sent before, so not a retransmission: " + next);
        assertEquals(0, counter("send_retransmitted"), "nothing was retransmitted");
    }

    /**
     * Small frames are staged and written together (with a send ring, staged in it and sent zero-copy until it
     * fills: this peer never acks) and frames of {@link TcpPath#DIRECT_WRITE_BYTES} or more are written from their
     * own buffers. A mix of sizes around the boundary arrives in order with every byte.
     */
    @ParameterizedTest(name = "send ring {0} bytes")
    @ValueSource(ints = {0, TcpConfig.DEFAULT_TCP_SEND_RING_BYTES})
    void framesOfMixedSizesArriveInOrderWithEveryByte(final int sendRingBytes) throws Exception
    {
        final int boundary = TcpPath.DIRECT_WRITE_BYTES - RdsHeader.LENGTH;
        final int[] sizes = {64, 20 << 10, 0, 64, 1 << 20, 100, boundary - 1, boundary, 3, boundary, boundary - 1, 300_000, 1};
        sendThenExpectInOrder(41, 0, sizes.length, i -> sizes[i], sendRingBytes);
    }

    /**
     * Frames through a socket that takes them a little at a time: the stage (the send ring's or the copy stage)
     * and the gathering writes of frames from {@link TcpPath#DIRECT_WRITE_BYTES} up (sizes cross that boundary
     * every few dozen frames) are written in part again and again, and every frame still arrives whole and in
     * order.
     */
    @ParameterizedTest(name = "send ring {0} bytes")
    @ValueSource(ints = {0, TcpConfig.DEFAULT_TCP_SEND_RING_BYTES})
    void stagedAndDirectFramesSurvivePartialWritesInOrder(final int sendRingBytes) throws Exception
    {
        // runs of 40 staged frames (payloads of 100 B up to the direct-write size) and 10 larger ones, so that the
        // stages are large enough to take the ring
        final int small = TcpPath.DIRECT_WRITE_BYTES - RdsHeader.LENGTH - 100;
        sendThenExpectInOrder(44, 4096, 20_000,
            i -> (i / 10) % 5 == 4 ? small + 100 + (i * 397) % TcpPath.DIRECT_WRITE_BYTES : 100 + (i * 397) % small,
            sendRingBytes);
        assertTrue(counter("tcp_sndbuf_full") > 0, "writes the socket took in part are counted");
        if (sendRingBytes == 0)
        {
            assertEquals(0, counter("tcp_zero_copy_bytes"));
        }
        else
        {
            // the ring is lent once (the peer never acks): all of it, at most, in stages of 4 KiB or more
            final long zeroCopy = counter("tcp_zero_copy_bytes");
            assertTrue(zeroCopy > 0 && zeroCopy <= sendRingBytes, zeroCopy + " bytes zero-copy");
        }
    }

    /**
     * Sends {@code count} messages, message i of {@code size.applyAsInt(i)} bytes, from a new socket on
     * {@code address(test, 10)} to a fake peer on {@code address(test, 20)} whose receive buffer is {@code window}
     * bytes (0: the system's default), with a send ring of {@code sendRingBytes}, then checks that each is written once and arrives in order, byte for byte.
     */
    private void sendThenExpectInOrder(
        final int test, final int window, final int count, final IntUnaryOperator size, final int sendRingBytes)
        throws Exception
    {
        // the fake peer never answers: a heartbeat (a sequenced probe, counted in send_transmitted) would go
        // after each second of its silence, so a run slowed past a second by a loaded machine counted one more
        stack = RdsStack.open(RdsStackConfig.builder().name("wire-ring-" + sendRingBytes)
            .heartbeat(Duration.ofSeconds(60), Duration.ofSeconds(120))
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).tcpSendRingBytes(sendRingBytes).build()).build());
        final InetAddress peerAddress = address(test, 20);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT, window));
        final RdsSocket socket = socket(address(test, 10), 5000);
        socket.setOption(RdsOptions.SO_SNDBUF, 64 << 20);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        for (int i = 0; i < count; i++)
        {
            assertEquals(size.applyAsInt(i), socket.send(ByteBuffer.wrap(pattern(size.applyAsInt(i), i)), destination));
        }
        final FakePeer peer = track(listener.accept(T));
        assertFullCongestionMap(peer.readFrame(T));
        for (int i = 0; i < count; i++)
        {
            final Frame data = peer.readFrame(T);
            assertEquals(i + 1, data.seq(), data.toString());
            assertEquals(size.applyAsInt(i), data.len(), data.toString());
            assertArrayEquals(pattern(size.applyAsInt(i), i), data.payload(), "payload of message " + (i + 1));
        }
        // the agent counts a frame once the transport reports it written, which may be after the peer read it
        Await.until(T, () -> counter("send_transmitted") >= count, () -> "transmitted " + counter("send_transmitted"));
        assertEquals(count, counter("send_transmitted"));
    }

    /**
     * In INVOKER mode a frame that asks for an ack is acked by the reply the application sends before the next
     * duty cycle; without a reply, the next cycle sends an ack-only frame.
     */
    @Test
    void anAckAskedForRidesOnAnImmediateReplyElseGoesAloneOneCycleLater() throws Exception
    {
        final InetAddress stackAddress = address(42, 10);
        final InetAddress peerAddress = address(42, 5);
        final RdsStack invoker = track(RdsStack.open(RdsStackConfig.builder().name("wire-invoker")
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build())
            .threading(org.rds4j.Threading.INVOKER).build()));
        final RdsSocket socket = invoker.openSocket().bind(new InetSocketAddress(stackAddress, 5000));
        socket.configureBlocking(false);
        final FakePeer peer;
        final java.util.concurrent.atomic.AtomicBoolean driving = new java.util.concurrent.atomic.AtomicBoolean(true);
        final Thread driver = new Thread(() ->
        {
            while (driving.get())
            {
                if (invoker.invoke() == 0)
                {
                    Thread.onSpinWait();
                }
            }
        }, "wire-invoker-driver");
        driver.start();
        try
        {
            // the handshake needs duty cycles while this thread plays the peer
            peer = track(FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T));
            assertFullCongestionMap(peer.readFrame(T));
            peer.sendCongestionMap(new byte[8192]);
            peer.sendPing(1, 7000);
            peer.readUntil(T, f -> f.isPong() && f.dport() == 7000, "pong: the handshake is done");
            Await.until(T, () -> invoker.counters().get("recv_probe") >= 1, () -> "the stack saw the handshake answer");
        }
        finally
        {
            driving.set(false);
            driver.join();
        }
        final long ackOnlyBefore = invoker.counters().get("send_ack_only");

        peer.sendData(2, 0, 7000, 5000, FLAG_ACK_REQUIRED_BIT, ascii("request"));
        final ByteBuffer dst = ByteBuffer.allocate(64);
        invokeUntilReceived(invoker, socket, dst);
        assertEquals(5, socket.send(ByteBuffer.wrap(ascii("reply")), new InetSocketAddress(peerAddress, 7000)));
        invoker.invoke();
        final Frame reply = peer.readFrame(T);
        assertEquals(5, reply.len(), "the reply comes first, no ack-only frame before it: " + reply);
        assertEquals(2, reply.ack(), "the reply carries the ack: " + reply);
        assertEquals(ackOnlyBefore, invoker.counters().get("send_ack_only"));

        peer.sendData(3, 0, 7000, 5000, FLAG_ACK_REQUIRED_BIT, ascii("no reply to this one"));
        invokeUntilReceived(invoker, socket, dst);
        invoker.invoke();
        final Frame ack = peer.readFrame(T);
        assertTrue(ack.isAckOnly(), "without a reply the ack goes alone: " + ack);
        assertEquals(3, ack.ack(), ack.toString());
        assertEquals(ackOnlyBefore + 1, invoker.counters().get("send_ack_only"));
    }

    /** Runs duty cycles until one delivers a message to {@code socket} (a cycle that reads it delivers it). */
    private static void invokeUntilReceived(final RdsStack stack, final RdsSocket socket, final ByteBuffer dst)
        throws IOException
    {
        final long deadline = System.nanoTime() + T.toNanos();
        while (true)
        {
            stack.invoke();
            if (socket.receive(dst.clear()) != null)
            {
                return;
            }
            assertTrue(System.nanoTime() < deadline, "nothing received within " + T);
        }
    }

    /**
     * With more connections than are read directly every cycle, the selector says which to read: six peers
     * each exchange messages with one socket, and go on doing so once some have left.
     */
    @Test
    void manyConnectionsAreReadThroughTheSelector() throws Exception
    {
        final InetAddress stackAddress = address(43, 100);
        final RdsSocket socket = socket(stackAddress, 5000);
        final int peerCount = TcpTransport.DIRECT_READ_PATHS + 2;
        final List<FakePeer> peers = new ArrayList<>();
        for (int p = 0; p < peerCount; p++)
        {
            peers.add(connectIn(address(43, 10 + p), stackAddress));
        }
        long seq = 1;
        for (int round = 0; round < 2; round++)
        {
            final int live = round == 0 ? peerCount : TcpTransport.DIRECT_READ_PATHS - 1;
            for (int p = 0; p < live; p++)
            {
                roundTrip(peers.get(p), seq + p, 6000 + p);
                peers.get(p).sendData(seq + p + 100, 0, 6000 + p, 5000, 0, ascii("from peer " + p));
            }
            final List<String> received = new ArrayList<>();
            final ByteBuffer dst = ByteBuffer.allocate(100);
            for (int p = 0; p < live; p++)
            {
                assertNotNull(socket.receive(dst.clear()), "message " + p + " of round " + round);
                received.add(new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
            }
            final List<String> expected = new ArrayList<>();
            for (int p = 0; p < live; p++)
            {
                expected.add("from peer " + p);
            }
            received.sort(null);
            assertEquals(expected, received);
            if (round == 0)
            {
                // all but three leave: the stack goes back to reading its connections directly
                for (int p = live - 1; p >= TcpTransport.DIRECT_READ_PATHS - 1; p--)
                {
                    peers.remove(p).close();
                }
                awaitCounter("conn_reset", peerCount - TcpTransport.DIRECT_READ_PATHS + 1);
            }
            seq += 1000;
        }
    }

    @Test
    void probeWithExtensionHeaderGetsPongToPort1() throws Exception
    {
        final InetAddress stackAddress = address(21, 10);
        final InetAddress peerAddress = address(21, 5);
        socket(stackAddress, 5000);
        final FakePeer peer = connectIn(peerAddress, stackAddress);
        // the kernel's multipath probe: sport 1, dport 0, extension header NPATHS (type 5, be16 8)
        final byte[] probe = FakePeer.header(1, 0, 0, 1, 0, 0, 0, 0);
        probe[32] = 5;
        probe[33] = 0;
        probe[34] = 8;
        peer.sendRaw(probe);
        final List<Frame> frames = peer.readUntil(T, Frame::isData, "pong to the probe");
        final Frame pong = frames.get(frames.size() - 1);
        assertEquals(0, pong.sport(), pong.toString());
        assertEquals(1, pong.dport(), "the probe's pong goes to port 1: " + pong);
        assertEquals(0, pong.len());
        assertEquals(1, pong.ack());
        assertEquals(5, pong.header()[32], "the pong carries NPATHS first: " + pong);
        assertEquals(6, pong.header()[35], "then GEN_NUM: " + pong);
        // the kernel-style probe, and the fake peer's answer to the stack's own handshake probe
        awaitCounter("recv_probe", 2);
    }

    // ============================================================ connection rules

    @Test
    void higherStackWithUnackedDataPokesAfterDrop() throws Exception
    {
        final InetAddress stackAddress = address(20, 10);
        final InetAddress peerAddress = address(20, 5);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        final InetSocketAddress destination = new InetSocketAddress(peerAddress, 7000);
        final byte[][] payloads = {ascii("one"), ascii("two")};
        try (FakePeer first = FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T))
        {
            assertFullCongestionMap(first.readFrame(T));
            for (final byte[] payload : payloads)
            {
                assertEquals(payload.length, socket.send(ByteBuffer.wrap(payload), destination));
            }
            assertEquals(1, first.readFrame(T).seq());
            assertEquals(2, first.readFrame(T).seq());
            // closed without an ack: the stack is the higher node, so it pokes to be connected to again
        }
        try (FakePeer poke = listener.accept(T))
        {
            assertEquals(stackAddress, poke.remoteAddress().getAddress());
            assertEquals(0, poke.expectClosedByPeer(T), "a poke carries no byte");
        }
        final FakePeer second = track(FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T));
        assertFullCongestionMap(second.readFrame(T));
        for (int i = 1; i <= 2; i++)
        {
            final Frame data = second.readFrame(T);
            assertEquals(i, data.seq(), data.toString());
            assertEquals(RETRANS | ACK_REQ, data.flags(), data.toString());
            assertArrayEquals(payloads[i - 1], data.payload());
        }
        second.sendAck(2);
        Await.until(T, () -> socket.sendQueuedBytes() == 0, () -> "ack 2 frees all; queued " + socket.sendQueuedBytes());
    }

    @Test
    void higherNodeIsClosedAndConnectedBack() throws Exception
    {
        final InetAddress stackAddress = address(13, 10);
        final InetAddress peerAddress = address(13, 20);
        final RdsSocket socket = socket(stackAddress, 5000);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));

        try (FakePeer intruder = FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T))
        {
            assertEquals(0, intruder.expectClosedByPeer(T), "a connection from a higher node is closed unread and unanswered");
        }
        final FakePeer back = track(listener.accept(T));
        assertEquals(stackAddress, back.remoteAddress().getAddress());
        assertFullCongestionMap(back.readFrame(T));
        awaitCounter("conn_refused", 1);

        back.sendCongestionMap(new byte[8192]);
        back.sendData(1, 0, 4000, 5000, ACK_REQ, ascii("over the connection it made"));
        final ByteBuffer dst = ByteBuffer.allocate(100);
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        final List<Frame> frames = back.readUntil(T, f -> f.ack() >= 1, "ack 1");
        assertEquals(1, frames.get(frames.size() - 1).ack());
    }

    @Test
    void higherStackPokesThenWaitsToBeConnected() throws Exception
    {
        final InetAddress stackAddress = address(14, 20);
        final InetAddress peerAddress = address(14, 10);
        final FakePeer.Listener listener = track(FakePeer.listen(peerAddress, TCP_PORT));
        final RdsSocket socket = socket(stackAddress, 5000);
        final byte[] payload = ascii("poke first");
        assertEquals(payload.length, socket.send(ByteBuffer.wrap(payload), new InetSocketAddress(peerAddress, 7000)));

        try (FakePeer poke = listener.accept(T))
        {
            assertEquals(stackAddress, poke.remoteAddress().getAddress());
            assertEquals(0, poke.expectClosedByPeer(T), "a poke carries no byte");
        }
        final FakePeer peer = track(FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T));
        assertFullCongestionMap(peer.readFrame(T));
        final Frame data = peer.readFrame(T);
        assertEquals(1, data.seq());
        assertEquals(5000, data.sport());
        assertEquals(7000, data.dport());
        assertArrayEquals(payload, data.payload());
    }

    /**
     * The lower node connects only when it has lost its connection, so a second connection from it while one is
     * up makes the old one stale: the old path is dropped, what arrived on it first delivered, and the newcomer
     * becomes the path (a kernel peer may already have sent on it, and counts what TCP acked as delivered).
     */
    @Test
    void secondConnectionWhileUpReplacesTheStalePath() throws Exception
    {
        final InetAddress stackAddress = address(15, 10);
        final InetAddress peerAddress = address(15, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        final FakePeer stale = connectIn(peerAddress, stackAddress);
        stale.sendData(1, 0, 4000, 5000, 0, ascii("on the old connection"));
        final FakePeer peer = track(FakePeer.connect(peerAddress, new InetSocketAddress(stackAddress, TCP_PORT), T));
        peer.sendCongestionMap(new byte[8192]);
        peer.sendData(2, 0, 4000, 5000, ACK_REQ, ascii("on the new connection"));
        stale.expectClosedByPeer(T);
        assertFullCongestionMap(peer.readFrame(T));
        awaitCounter("conn_reset", 1);
        final ByteBuffer dst = ByteBuffer.allocate(100);
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        assertEquals("on the old connection", new String(dst.array(), 0, dst.position(), java.nio.charset.StandardCharsets.US_ASCII));
        dst.clear();
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        assertEquals("on the new connection", new String(dst.array(), 0, dst.position(), java.nio.charset.StandardCharsets.US_ASCII));
        final List<Frame> frames = peer.readUntil(T, f -> f.ack() >= 2, "ack 2 on the new connection");
        assertEquals(2, frames.get(frames.size() - 1).ack());
        assertEquals(2, counter("conn_up"));
        assertEquals(0, counter("conn_refused"));
    }

    @Test
    void largeAndSplitFramesAreReassembled() throws Exception
    {
        final InetAddress stackAddress = address(16, 10);
        final InetAddress peerAddress = address(16, 5);
        final RdsSocket socket = socket(stackAddress, 5000);
        socket.setOption(RdsOptions.SO_RCVBUF, 4 << 20);
        final FakePeer peer = connectIn(peerAddress, stackAddress);

        // a frame written a few bytes at a time
        final byte[] small = FakePeer.concat(FakePeer.header(1, 0, 11, 4000, 5000, 0, 0, 0), ascii("split frame"));
        for (int i = 0; i < small.length; i += 7)
        {
            peer.sendRaw(Arrays.copyOfRange(small, i, Math.min(small.length, i + 7)));
        }
        // a 1 MiB frame: larger than the stack's initial read buffer
        final byte[] big = pattern(1 << 20, 3);
        peer.sendData(2, 0, 4000, 5000, ACK_REQ, big);

        final ByteBuffer dst = ByteBuffer.allocate(1 << 20);
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        assertEquals("split frame", new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
        dst.clear();
        assertEquals(new InetSocketAddress(peerAddress, 4000), socket.receive(dst));
        assertEquals(big.length, dst.position());
        assertArrayEquals(big, dst.array());

        // and a 1 MiB message the other way
        assertEquals(big.length, socket.send(ByteBuffer.wrap(big), new InetSocketAddress(peerAddress, 4000)));
        final Frame echo = peer.readDataFrame(T);
        assertEquals(1, echo.seq());
        assertEquals(2, echo.ack());
        assertEquals(1 << 20, echo.len());
        assertArrayEquals(big, echo.payload());
    }

    // ============================================================ helpers

    /** @return tcp_wmem's maximum (the most a TCP send buffer autotunes to), 4 MiB if unknown. */
    private static long maxTcpSendBuffer()
    {
        try
        {
            final String[] fields = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/net/ipv4/tcp_wmem")).trim().split("\\s+");
            return Math.max(4L << 20, Long.parseLong(fields[2]));
        }
        catch (final IOException | RuntimeException ex)
        {
            return 4L << 20;
        }
    }

    private static InetAddress address(final int test, final int host) throws UnknownHostException
    {
        return InetAddress.getByAddress(new byte[] {127, 0, (byte)(100 + test), (byte)host});
    }

    private RdsStack stack()
    {
        if (stack == null)
        {
            stack = RdsStack.open(RdsStackConfig.builder().name("wire")
                .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build()).build());
        }
        return stack;
    }

    private RdsSocket socket(final InetAddress address, final int port) throws IOException
    {
        final RdsSocket socket = stack().openSocket();
        socket.bind(new InetSocketAddress(address, port));
        socket.setOption(RdsOptions.SO_RCVTIMEO, T);
        socket.setOption(RdsOptions.SO_SNDTIMEO, T);
        return socket;
    }

    private <C extends AutoCloseable> C track(final C resource)
    {
        resources.add(resource);
        return resource;
    }

    /**
     * Connects a fake node from a lower address to the stack, as the kernel would: checks that the stack's
     * first frame is its full congestion map and sends the fake node's own (all clear).
     */
    private FakePeer connectIn(final InetAddress from, final InetAddress stackAddress) throws IOException
    {
        final FakePeer peer = track(FakePeer.connect(from, new InetSocketAddress(stackAddress, TCP_PORT), T));
        final Frame first = peer.readFrame(T);
        assertFullCongestionMap(first);
        peer.sendCongestionMap(new byte[8192]);
        return peer;
    }

    /** Sends a ping and reads until its pong; returns the frames read, the pong last. */
    private static List<Frame> pingUntilPong(final FakePeer peer, final long seq, final int sport) throws IOException
    {
        peer.sendPing(seq, sport);
        return new ArrayList<>(peer.readUntil(T, f -> f.isPong() && f.dport() == sport, "pong to " + sport));
    }

    private static Frame roundTrip(final FakePeer peer, final long seq, final int sport) throws IOException
    {
        final List<Frame> frames = pingUntilPong(peer, seq, sport);
        return frames.get(frames.size() - 1);
    }

    private static void assertNoCongestionUpdate(final List<Frame> frames, final String when)
    {
        for (final Frame frame : frames)
        {
            assertFalse(frame.isCongestionUpdate(), "no congestion update " + when + ": " + frames);
        }
    }

    private static void assertFullCongestionMap(final Frame frame)
    {
        assertEquals(CONG, frame.flags(), "a congestion update has flags exactly 0x01: " + frame);
        assertEquals(0, frame.seq(), frame.toString());
        assertEquals(0, frame.ack(), frame.toString());
        assertEquals(8192, frame.len(), frame.toString());
        assertEquals(0, frame.sport(), frame.toString());
        assertEquals(0, frame.dport(), frame.toString());
        assertEquals(0, frame.csum(), frame.toString());
        assertEquals(8192, frame.payload().length);
    }

    private long counter(final String name)
    {
        final Long value = stack().counters().get(name);
        assertNotNull(value, "no counter " + name);
        return value;
    }

    private void awaitCounter(final String name, final long expected)
    {
        Await.until(T, () -> counter(name) >= expected, () -> name + " = " + counter(name) + ", expected " + expected);
        assertEquals(expected, counter(name), name);
    }

    private RdsStack.ConnectionInfo connectionInfo(final InetAddress remote)
    {
        for (final RdsStack.ConnectionInfo info : stack().connections())
        {
            if (info.remote().equals(remote) && info.transport().equals("tcp"))
            {
                return info;
            }
        }
        throw new AssertionError("no tcp connection to " + remote + ": " + stack().connections());
    }

    private static List<String> receiveAll(final RdsSocket socket) throws IOException
    {
        final List<String> received = new ArrayList<>();
        final ByteBuffer dst = ByteBuffer.allocate(1000);
        while (socket.receive(dst.clear()) != null)
        {
            received.add(new String(dst.array(), 0, dst.position(), StandardCharsets.US_ASCII));
        }
        assertNull(socket.receive(dst.clear()));
        return received;
    }

    private static byte[] data(final long seq, final int sport, final int dport, final int flags, final String text)
    {
        final byte[] payload = ascii(text);
        return FakePeer.concat(FakePeer.header(seq, 0, payload.length, sport, dport, flags, 0, 0), payload);
    }

    private static String text(final ByteBuffer payload)
    {
        final byte[] bytes = new byte[payload.remaining()];
        payload.get(bytes);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    private static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] pattern(final int length, final int seed)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(seed * 31 + i * 7 + (i >>> 8));
        }
        return bytes;
    }
}
