package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.transport.tcp.FakePeer.Frame;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The handshake probe that starts every connection, peer restarts (a new generation number), and the
 * heartbeat that drops a silent peer, seen on the wire with a {@link FakePeer}.
 * <p>
 * Addresses: test {@code n} uses 127.0.(180+n).x; the stack is at .10 and connects to a fake peer at .20.
 * TCP port {@value #TCP_PORT}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HandshakeTest
{
    private static final int TCP_PORT = 27700;
    private static final Duration T = Duration.ofSeconds(5);
    private static final Duration CONNECT_TIMEOUT = Duration.ofMillis(500);
    private static final Duration HEARTBEAT_INTERVAL = Duration.ofMillis(100);
    private static final Duration HEARTBEAT_TIMEOUT = Duration.ofMillis(600);
    private static final int OLD_GENERATION = 0x0000_0A0A;
    private static final int NEW_GENERATION = 0x0000_0B0B;

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

    @Test
    void probeFollowsTheCongestionMapAndDataWaitsForTheAnswer() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(1, 20), TCP_PORT));
        final RdsSocket socket = socket(address(1, 10), 5000);
        final byte[] payload = ascii("after the handshake");
        assertEquals(payload.length, socket.send(ByteBuffer.wrap(payload), new InetSocketAddress(address(1, 20), 7000)));

        final FakePeer peer = track(listener.accept(T));
        peer.answerProbes(false);
        assertTrue(peer.readFrame(T).isCongestionUpdate(), "the congestion map goes first");
        final Frame probe = peer.readFrame(T);
        final int generation = probe.generation();
        assertNotEquals(0, generation, "the stack tells a non-zero generation: " + probe);
        final String expected =
            "0000000000000000" +        // sequence 0: unsequenced
            "0000000000000000" +        // no ack before the handshake
            "00000000" +                // no payload
            "0001" + "0000" +           // port 1 to port 0
            "00" + "00" + "00000000" +  // flags, credit, padding
            "0000" +                    // no checksum over TCP
            "050001" +                  // NPATHS 1
            "06" + String.format("%08x", generation) + // GEN_NUM
            "0000000000000000";
        assertEquals(expected, HexFormat.of().formatHex(probe.header()));
        // counted once the agent has seen its write complete, which may be after the peer read it
        Await.until(T, () -> counter("send_probe") == 1, () -> "the probe is counted: " + stack.counters());

        // nothing else goes until the peer answers: a bounded wait is the only way to see an absence here
        assertThrows(AssertionError.class, () -> peer.readFrame(Duration.ofMillis(300)));
        assertEquals(0, counter("send_transmitted"), "the message waits for the handshake");

        peer.sendHandshakePong();
        final Frame data = peer.readFrame(T);
        assertEquals(1, data.seq(), data.toString());
        assertArrayEquals(payload, data.payload());
        Await.until(T, () -> counter("recv_probe") == 1, () -> "the answer is counted: " + stack.counters());
    }

    @Test
    void sameGenerationAfterReconnectResumesWithRetransmission() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(2, 20), TCP_PORT));
        final RdsSocket socket = socket(address(2, 10), 5000);
        final InetSocketAddress destination = new InetSocketAddress(address(2, 20), 7000);
        final int generation;
        send(socket, destination, "one");
        try (FakePeer first = listener.accept(T))
        {
            first.generation(OLD_GENERATION);
            first.readFrame(T);
            assertEquals(1, first.readFrame(T).seq());
            generation = first.probesAnswered().get(0).generation();
            first.abort();
        }
        final FakePeer second = track(listener.accept(T));
        second.generation(OLD_GENERATION);
        second.readFrame(T);
        final Frame again = second.readFrame(T);
        assertEquals(generation, second.probesAnswered().get(0).generation(), "a stack keeps its generation");
        assertEquals(1, again.seq(), "retransmitted with its sequence: " + again);
        assertEquals(FakePeer.FLAG_RETRANSMITTED, again.flags() & FakePeer.FLAG_RETRANSMITTED, again.toString());
        assertEquals(0, counter("conn_peer_restart"));
        assertEquals(0, counter("send_flushed_peer_restart"));
    }

    @Test
    void restartedPeerGetsNothingSentToItsPredecessor() throws Exception
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(3, 20), TCP_PORT));
        final RdsSocket socket = socket(address(3, 10), 5000);
        final InetSocketAddress destination = new InetSocketAddress(address(3, 20), 7000);
        send(socket, destination, "to the old process 1");
        try (FakePeer old = listener.accept(T))
        {
            old.generation(OLD_GENERATION);
            old.readFrame(T);
            assertEquals(1, old.readFrame(T).seq());
            for (int i = 2; i <= 5; i++)
            {
                send(socket, destination, "to the old process " + i);
                assertEquals(i, old.readFrame(T).seq());
            }
            // read by the old process, never acked: it dies with them
            old.abort();
        }
        Await.until(T, () -> counter("conn_reset") == 1, () -> "the stack saw the reset: " + stack.counters());
        final byte[] late1 = ascii("sent while the peer was down 1");
        final byte[] late2 = ascii("sent while the peer was down 2");
        assertEquals(late1.length, socket.send(ByteBuffer.wrap(late1), destination));
        assertEquals(late2.length, socket.send(ByteBuffer.wrap(late2), destination));

        final FakePeer restarted = track(listener.accept(T));
        restarted.generation(NEW_GENERATION);
        restarted.readFrame(T);
        final Frame first = restarted.readFrame(T);
        final Frame second = restarted.readFrame(T);
        assertEquals(1, first.seq(), "sequencing starts again for the new process: " + first);
        assertEquals(0, first.flags(), "never sent before, so not a retransmission: " + first);
        assertArrayEquals(late1, first.payload(), "nothing sent to the old process comes before: " + first);
        assertEquals(2, second.seq());
        assertArrayEquals(late2, second.payload());
        assertEquals(1, counter("conn_peer_restart"));
        assertEquals(5, counter("send_flushed_peer_restart"));
        assertEquals(late1.length + late2.length, socket.sendQueuedBytes(), "flushed bytes left the send buffer");
        assertEquals(5, counter("send_retransmitted"), () -> "the five were marked for retransmission at the reset: " + stack.counters());

        // and what the new process sends is taken from sequence 1 on, acked as such
        restarted.sendCongestionMap(new byte[8192]);
        restarted.sendData(1, 2, 7000, 5000, FakePeer.FLAG_ACK_REQUIRED, ascii("hello"));
        final List<Frame> frames = restarted.readUntil(T, Frame::isAckOnly, "an ack");
        assertEquals(1, frames.get(frames.size() - 1).ack(), "the receive sequence started again too");
        assertEquals(0, socket.sendQueuedBytes(), "the peer acked both");
    }

    @Test
    void unansweredProbeDropsTheConnectionAfterTheConnectTimeout() throws Exception
    {
        final FakePeer mute = acceptAfterSending(4, "waits");
        mute.answerProbes(false);
        mute.readFrame(T);
        assertTrue(mute.readFrame(T).isHandshakeProbe());
        final long start = System.nanoTime();
        mute.expectClosedByPeer(T);
        final long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMs < CONNECT_TIMEOUT.toMillis() + 1000, "dropped after about the connect timeout: " + tookMs + " ms");
        Await.until(T, () -> counter("conn_handshake_timeout") >= 1, () -> "counted: " + stack.counters());
        assertEquals(0, counter("send_transmitted"));
    }

    @Test
    void silentPeerIsDroppedWithinTheHeartbeatTimeout() throws Exception
    {
        final FakePeer silent = acceptAfterSending(5, "last words");
        silent.readFrame(T);
        final Frame data = silent.readFrame(T);
        assertEquals(1, data.seq());
        // from here the peer says nothing: no ack, no pong, no FIN (a frozen process or a host gone silent)
        final long silentSince = System.nanoTime();
        final Frame heartbeat = silent.readUntil(T, f -> f.sport() == 1 && f.dport() == 0, "a heartbeat probe")
            .get(0);
        assertNotEquals(0, heartbeat.seq(), "a heartbeat is sequenced like data: " + heartbeat);
        silent.expectClosedByPeer(T);
        final long detectedMs = (System.nanoTime() - silentSince) / 1_000_000;
        assertTrue(detectedMs < HEARTBEAT_TIMEOUT.toMillis() + 1000,
            "detected within the heartbeat timeout (" + HEARTBEAT_TIMEOUT + "): " + detectedMs + " ms");
        Await.until(T, () -> counter("conn_heartbeat_timeout") == 1, () -> "counted: " + stack.counters());
        assertTrue(counter("send_heartbeat") >= 1);
    }

    @Test
    void answeredHeartbeatsKeepAnIdleConnectionUp() throws Exception
    {
        final FakePeer peer = acceptAfterSending(6, "hello");
        peer.readFrame(T);
        peer.readFrame(T);
        final long until = System.nanoTime() + 3 * HEARTBEAT_TIMEOUT.toNanos();
        int answered = 0;
        while (System.nanoTime() < until)
        {
            final Frame frame = peer.readFrame(T);
            if (frame.sport() == 1 && frame.dport() == 0)
            {
                // a heartbeat: answer as any RDS node does, with a pong to port 1 (unsequenced here)
                peer.sendHandshakePong();
                answered++;
            }
        }
        assertTrue(answered >= 3, "heartbeats answered: " + answered);
        assertEquals(0, counter("conn_heartbeat_timeout"));
        assertEquals(0, counter("conn_reset"), "the connection stayed up");
    }

    // ============================================================ helpers

    private static InetAddress address(final int test, final int host) throws UnknownHostException
    {
        return InetAddress.getByAddress(new byte[] {127, 0, (byte)(180 + test), (byte)host});
    }

    private RdsSocket socket(final InetAddress address, final int port) throws IOException
    {
        if (stack == null)
        {
            stack = RdsStack.open(RdsStackConfig.builder()
                .name("handshake")
                .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build())
                .connectTimeout(CONNECT_TIMEOUT)
                .heartbeat(HEARTBEAT_INTERVAL, HEARTBEAT_TIMEOUT)
                .infoFile(false)
                .build());
        }
        final RdsSocket socket = stack.openSocket();
        socket.bind(new InetSocketAddress(address, port));
        socket.setOption(RdsOptions.SO_SNDTIMEO, T);
        return socket;
    }

    /** Test {@code n}'s stack sends one message to the fake peer, which accepts the stack's connection. */
    private FakePeer acceptAfterSending(final int test, final String text) throws IOException
    {
        final FakePeer.Listener listener = track(FakePeer.listen(address(test, 20), TCP_PORT));
        final RdsSocket socket = socket(address(test, 10), 5000);
        send(socket, new InetSocketAddress(address(test, 20), 7000), text);
        return track(listener.accept(T));
    }

    private static void send(final RdsSocket socket, final InetSocketAddress destination, final String text)
        throws IOException
    {
        final byte[] bytes = ascii(text);
        assertEquals(bytes.length, socket.send(ByteBuffer.wrap(bytes), destination));
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

    private static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
