package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.core.FakeTransportPath.Frame;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.wire.RdsHeader.FLAG_ACK_REQUIRED;
import static org.rds4j.core.wire.RdsHeader.FLAG_RETRANSMITTED;

/** A connection path driven by a fake stack, fake time and a fake transport path: exact frames and counters. */
class ConnPathTest
{
    private static final int PEER = 0x77;
    private static final Frame CONGESTION = new Frame(0, 0, CongestionMap.BYTES, 0, 0, RdsHeader.FLAG_CONG_BITMAP, 0);
    private static final Frame PROBE = new Frame(0, 0, 0, RdsHeader.PROBE_PORT, 0, 0, FakePathHost.GENERATION);

    private FakePathHost host;
    private FakeTransport transport;
    private Connection connection;
    private ConnPath path;

    @BeforeEach
    void setUp() throws Exception
    {
        host = new FakePathHost();
        transport = new FakeTransport(true);
        final LocalEndpoint local = new LocalEndpoint(InetAddress.getByName("10.0.0.1"));
        connection = new Connection(host, local, InetAddress.getByName("10.0.0.2"), transport, new CongestionMap());
        path = connection.path(0);
    }

    @Test
    void connectsThenHandshakesBeforeAnyData()
    {
        send(7, 10);
        assertEquals(1, connection.doWork(host.nowNs));
        assertEquals(ConnectionState.CONNECTING, path.state());
        assertEquals(List.of(path), transport.connects);

        final FakeTransportPath wire = new FakeTransportPath(path);
        path.onConnected(wire);
        assertEquals(ConnectionState.HANDSHAKE, path.state());
        assertTrue(path.isUp());
        assertEquals(1, host.peerUps);
        host.advance(1000);
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION, PROBE), wire.frames());
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames(), "nothing but the handshake before the peer answers");
        assertEquals(host.nowNs, connection.idleDeadlineNs(host.nowNs));

        receive(0, 0, RdsHeader.PROBE_PORT, 0, 0, PEER);
        assertEquals(ConnectionState.UP, path.state());
        assertEquals(PeerKind.RDS_ACKS, path.peerKind());
        connection.doWork(host.nowNs);
        assertEquals(List.of(data(1, 0, 10, 7, 0)), wire.frames());

        receive(0, 1, 0, 0, 0, 0);
        assertEquals(0, connection.queuedMessages());
        assertEquals(1, host.releasedSent);
        assertCounters("conn_up", 1, "send_probe", 1, "recv_probe", 1, "cong_update_queued", 1, "send_transmitted", 1,
            "send_drop_acked", 1, "recv_ack_only", 1);
    }

    @Test
    void aRestartedPeerGetsNothingSentToItsPredecessor()
    {
        final FakeTransportPath wire = bringUp();
        send(7, 10);
        send(7, 10);
        connection.doWork(host.nowNs);
        assertEquals(List.of(data(1, 0, 10, 7, 0), data(2, 0, 10, 7, 0)), wire.frames());
        send(7, 10);

        receive(0, 0, RdsHeader.PROBE_PORT, 0, 0, PEER + 1);
        assertEquals(ConnectionState.DOWN, path.state());
        assertTrue(wire.closed);
        assertEquals(1, wire.drained);
        assertEquals(1, host.peerDowns);
        assertEquals(2, host.releasedSent, "both messages sent to the old process are dropped");
        assertEquals(1, connection.queuedMessages());
        assertEquals(2, path.sender().nextTxSequence(), "the message never sent is numbered 1");
        assertEquals(0, path.acks().nextRxSequence());

        final FakeTransportPath again = reconnect(PEER + 1);
        assertEquals(List.of(data(1, 0, 10, 7, 0)), again.frames());
        assertCounters("conn_up", 2, "conn_reset", 1, "conn_peer_restart", 1, "send_retransmitted", 2,
            "send_flushed_peer_restart", 0, "send_transmitted", 3);
    }

    @Test
    void unackedMessagesAreRetransmittedAfterThePathGoesDown()
    {
        final FakeTransportPath wire = bringUp();
        send(7, 10);
        send(7, 10);
        send(7, 10);
        connection.doWork(host.nowNs);
        assertEquals(List.of(data(1, 0, 10, 7, 0), data(2, 0, 10, 7, 0), data(3, 0, 10, 7, 0)), wire.frames());
        receive(0, 1, 0, 0, 0, 0);
        assertEquals(1, path.sequenceReadOnPath());

        path.onPathDown(wire, "reset by the test");
        assertEquals(ConnectionState.DOWN, path.state());
        assertTrue(wire.closed);
        assertEquals(1, wire.drained, "what arrived is taken in before the path goes");
        assertEquals(1, host.peerDowns);
        assertEquals(2, connection.queuedMessages());

        final FakeTransportPath again = reconnect(PEER);
        final int resent = FLAG_RETRANSMITTED | FLAG_ACK_REQUIRED;
        assertEquals(List.of(data(2, 0, 10, 7, resent), data(3, 0, 10, 7, resent)), again.frames());
        receive(0, 3, 0, 0, 0, 0);
        assertEquals(0, path.sequenceReadOnPath(), "a retransmission proves nothing about the new path");
        assertEquals(0, connection.queuedMessages());
        assertCounters("conn_reset", 1, "send_retransmitted", 2, "send_ack_required", 2, "send_drop_acked", 3,
            "send_transmitted", 5);
    }

    @Test
    void aPartlyWrittenDataFrameIsResumed()
    {
        final FakeTransportPath wire = bringUp();
        send(7, 100);
        wire.budget = 30;
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames());
        assertEquals(0, host.counters.sendTransmitted.get());

        wire.budget = Integer.MAX_VALUE;
        connection.doWork(host.nowNs);
        assertEquals(List.of(data(1, 0, 100, 7, 0)), wire.frames());
        assertEquals(1, host.counters.sendTransmitted.get());
    }

    @Test
    void aRunOfDataFramesIsSentUpToTheFrameTheWriteStoppedIn()
    {
        final FakeTransportPath wire = bringUp();
        receive(1, 0, 5, 9, FLAG_ACK_REQUIRED, 0);
        for (int i = 0; i < 5; i++)
        {
            send(7, 100);
        }
        wire.budget = 3 * (RdsHeader.LENGTH + 100) + 20;
        connection.doWork(host.nowNs);
        assertEquals(List.of(data(1, 1, 100, 7, 0), data(2, 1, 100, 7, 0), data(3, 1, 100, 7, 0)), wire.frames(),
            "the run carries the ack of 1");
        assertEquals(3, host.counters.sendTransmitted.get());
        receive(0, 4, 0, 0, 0, 0);
        assertEquals(5, connection.queuedMessages(), "4 is part written: an ack of it is not from this peer");
        receive(0, 3, 0, 0, 0, 0);
        assertEquals(2, connection.queuedMessages());
        assertEquals(3, host.releasedSent);

        receive(2, 0, 5, 9, 0, 0);
        wire.budget = Integer.MAX_VALUE;
        connection.doWork(host.nowNs);
        assertEquals(List.of(data(4, 1, 100, 7, 0), data(5, 2, 100, 7, 0)), wire.frames(),
            "the resumed frame keeps its ack; the next carries the new one");
        host.advance(host.config.ackDelay().toNanos());
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames(), "the run's last frame carried the ack: no ack-only frame");
        receive(0, 5, 0, 0, 0, 0);
        assertEquals(0, connection.queuedMessages());
        assertCounters("send_transmitted", 5, "send_drop_acked", 5, "recv_drop_bad_ack", 1, "send_ack_only", 0,
            "recv_drop_no_sock", 2);
    }

    @Test
    void aPartlyWrittenCongestionMapIsFinishedBeforeTheProbeAndSentAgainIfItChanged()
    {
        final FakeTransportPath wire = connect(new FakeTransportPath(path));
        wire.budget = 100;
        connection.doWork(host.nowNs);
        connection.local.congestionMap.set(9);
        wire.budget = Integer.MAX_VALUE;
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION, PROBE), wire.frames());
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION), wire.frames());
        assertCounters("cong_update_queued", 2, "send_probe", 1);
    }

    @Test
    void aRequestedAckFrameGivenBehindAWriteThatStoppedGoesAgain()
    {
        final FakeTransportPath wire = bringUp();
        connection.local.congestionMap.set(9);
        path.requestControlFrame();
        wire.budget = 100;
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames(), "the congestion map stopped part way; the ack-only frame behind it not begun");
        wire.budget = Integer.MAX_VALUE;
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION, ackOnly(0)), wire.frames());
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames(), "once");
        assertCounters("cong_update_queued", 2, "send_ack_only", 1);
    }

    @Test
    void anAckWaitsOneCycleForAReplyOrTheAckDelay()
    {
        final FakeTransportPath wire = bringUp();
        receive(1, 0, 5, 9, FLAG_ACK_REQUIRED, 0);
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames(), "a reply in this cycle may carry the ack");
        host.advance(0);
        connection.doWork(host.nowNs);
        assertEquals(List.of(ackOnly(1)), wire.frames());

        receive(2, 0, 5, 9, 0, 0);
        final long delay = host.config.ackDelay().toNanos();
        host.advance(delay - 1);
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames());
        host.advance(1);
        connection.doWork(host.nowNs);
        assertEquals(List.of(ackOnly(2)), wire.frames());
        assertCounters("recv_ack_required", 1, "recv_drop_no_sock", 2, "send_ack_only", 2);
    }

    @Test
    void aKernelTcpPeerIsSentNoAckOnlyFrameAndNoProbeOnLaterConnections()
    {
        final FakeTransportPath wire = connect(transportAckedWire());
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION, PROBE), wire.frames());
        receive(0, 0, RdsHeader.PROBE_PORT, 0, 0, 0);
        assertEquals(ConnectionState.UP, path.state());
        assertEquals(PeerKind.KERNEL_TRANSPORT_ACKED, path.peerKind());
        assertTrue(wire.reportingTransportAcks);

        receive(1, 0, 5, 9, FLAG_ACK_REQUIRED, 0);
        host.advance(host.config.heartbeatInterval().toNanos() / 2);
        connection.doWork(host.nowNs);
        assertEquals(List.of(), wire.frames());

        path.onPathDown(wire, "reset by the test");
        final FakeTransportPath again = transportAckedWire();
        connection.doWork(host.nowNs);
        path.onConnected(again);
        assertEquals(ConnectionState.UP, path.state(), "no handshake");
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION), again.frames());
        assertTrue(again.reportingTransportAcks);
        assertCounters("send_ack_only", 0, "send_probe", 1);
    }

    @Test
    void aKernelPeerWithoutProbesIsSentAHeartbeatThatAsksForAnAck()
    {
        final FakeTransportPath wire = new FakeTransportPath(path);
        wire.peerIsKernel = true;
        connect(wire);
        assertEquals(ConnectionState.UP, path.state());
        assertEquals(PeerKind.KERNEL_WITHOUT_PROBES, path.peerKind());
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION), wire.frames());

        host.advance(host.config.heartbeatInterval().toNanos());
        connection.doWork(host.nowNs);
        assertEquals(List.of(new Frame(1, 0, 0, RdsHeader.PROBE_PORT, RdsHeader.PROBE_PORT, FLAG_ACK_REQUIRED, 0)),
            wire.frames());
        assertCounters("send_heartbeat", 1, "send_probe", 0, "send_ack_required", 1);
    }

    @Test
    void aKernelPeerWithoutProbesHasItsFirstSessionRetransmissionsDelivered()
    {
        final FakeTransportPath wire = new FakeTransportPath(path);
        wire.peerIsKernel = true;
        connect(wire);
        // kernel RDS over IB resent what it had sent into a connection to this address's previous process
        receive(5, 0, 5, 9, FLAG_RETRANSMITTED, 0);
        assertEquals(6, path.acks().nextRxSequence(), "taken: the peer never learns a generation, never flushes");
        receive(5, 0, 5, 9, FLAG_RETRANSMITTED, 0);
        assertCounters("recv_drop_stale", 0, "recv_drop_old_seq", 1, "recv_drop_no_sock", 1);
    }

    @Test
    void aSilentPeerIsDroppedAtTheHeartbeatTimeout()
    {
        final FakeTransportPath wire = bringUp();
        final long interval = host.config.heartbeatInterval().toNanos();
        final long timeout = host.config.heartbeatTimeout().toNanos();
        assertEquals(host.nowNs + interval, connection.idleDeadlineNs(host.nowNs));
        host.advance(interval);
        connection.doWork(host.nowNs);
        final Frame heartbeat = new Frame(1, 0, 0, RdsHeader.PROBE_PORT, 0, 0, FakePathHost.GENERATION);
        assertEquals(List.of(heartbeat), wire.frames());
        host.advance(timeout - interval - 1);
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.UP, path.state());
        host.advance(1);
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.DOWN, path.state());
        assertTrue(wire.closed);
        assertEquals(1, wire.drained, "read once before the peer is judged silent: nothing had arrived");
        assertEquals(2, connection.queuedMessages(), "the unanswered heartbeats are requeued");
        assertCounters("send_heartbeat", 2, "conn_heartbeat_timeout", 1, "conn_handshake_timeout", 0, "conn_reset", 1,
            "send_retransmitted", 2);
    }

    @Test
    void anUnansweredHandshakeDropsThePathAndEveryFrameExtendsItsDeadline()
    {
        final FakeTransportPath wire = connect(new FakeTransportPath(path));
        final long timeout = host.config.connectTimeout().toNanos();
        host.advance(timeout - 1);
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.HANDSHAKE, path.state());
        receive(0, 0, 0, 0, 0, 0);
        host.advance(timeout - 1);
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.HANDSHAKE, path.state());
        host.advance(1);
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.DOWN, path.state());
        assertTrue(wire.closed);
        assertCounters("conn_handshake_timeout", 1, "conn_heartbeat_timeout", 0, "conn_reset", 1);
    }

    @Test
    void framesWaitingUnreadAtTheHeartbeatTimeoutAreTakenInAndKeepThePathUp()
    {
        final FakeTransportPath wire = bringUp();
        final long timeout = host.config.heartbeatTimeout().toNanos();
        // the agent was held past the timeout while a data frame waited unread
        host.advance(timeout);
        wire.unread.add(frame(1, 0, 5, 9, 0, 0));
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.UP, path.state());
        assertFalse(wire.closed);
        assertEquals(1, wire.drained);
        assertEquals(2, path.acks().nextRxSequence(), "the waiting frame was taken in");

        host.advance(timeout);
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.DOWN, path.state(), "silent since: dropped");
        assertEquals(2, wire.drained);
        assertCounters("conn_heartbeat_timeout", 1, "conn_reset", 1, "recv_drop_no_sock", 1);
    }

    @Test
    void framesWaitingUnreadAtTheHandshakeDeadlineAreTakenInAndMayEndTheHandshake()
    {
        final FakeTransportPath wire = connect(transportAckedWire());
        host.advance(host.config.connectTimeout().toNanos());
        // a kernel peer sends its queue, then its probe (sequenced, no generation), before it answers ours
        wire.unread.add(frame(1, 0, 5, 9, 0, 0));
        wire.unread.add(frame(2, 0, RdsHeader.PROBE_PORT, 0, 0, 0));
        connection.doWork(host.nowNs);
        assertEquals(ConnectionState.UP, path.state());
        assertEquals(PeerKind.KERNEL_TRANSPORT_ACKED, path.peerKind());
        assertFalse(wire.closed);
        assertEquals(3, path.acks().nextRxSequence());
        assertCounters("conn_handshake_timeout", 0, "conn_reset", 0, "recv_drop_no_sock", 1);
    }

    @Test
    void aFrameWaitingUnreadAtTheTimeoutThatDropsThePathEndsTheCycle()
    {
        final FakeTransportPath wire = bringUp();
        host.advance(host.config.heartbeatTimeout().toNanos());
        wire.unread.add(frame(0, 0, RdsHeader.PROBE_PORT, 0, 0, PEER + 1));
        assertEquals(1, connection.doWork(host.nowNs));
        assertEquals(ConnectionState.DOWN, path.state());
        assertTrue(wire.closed);
        assertCounters("conn_peer_restart", 1, "conn_heartbeat_timeout", 0, "conn_reset", 1);
    }

    @Test
    void anIllegalChangeOfStateIsRefusedAndCounted()
    {
        bringUp();
        final FakeTransportPath second = new FakeTransportPath(path);
        path.onConnected(second);
        assertTrue(second.closed);
        assertEquals(ConnectionState.UP, path.state());
        assertFalse(path.transition(ConnectionState.DOWN, ConnectionState.CONNECTING), "the state is not DOWN");
        assertFalse(path.transition(ConnectionState.UP, ConnectionState.CONNECTING), "not a listed change");
        assertEquals(ConnectionState.UP, path.state());
        assertEquals(1, host.peerUps);
        assertCounters("conn_illegal_transition", 3, "conn_up", 1);
    }

    @Test
    void aCancelledMessageBeingWrittenIsFinishedButNeverRetransmitted()
    {
        final FakeTransportPath wire = bringUp();
        send(7, 100);
        send(7, 100);
        wire.budget = 30;
        connection.doWork(host.nowNs);
        assertEquals(2, connection.cancel(null, 7));
        assertEquals(1, host.bytesReleased, "the message being written frees its bytes, not itself");
        assertEquals(1, host.releasedSent);
        assertEquals(1, connection.queuedMessages());

        wire.budget = Integer.MAX_VALUE;
        connection.doWork(host.nowNs);
        assertEquals(List.of(data(1, 0, 100, 7, 0)), wire.frames());
        path.onPathDown(wire, "reset by the test");
        assertEquals(0, connection.queuedMessages());
        assertEquals(1, host.released);
        assertCounters("send_retransmitted", 0, "send_transmitted", 1);
    }

    @Test
    void pingsAndHeartbeatsAreAnsweredWithPongs()
    {
        final FakeTransportPath wire = bringUp();
        receive(1, 0, 40, 0, 0, 0);
        receive(2, 0, RdsHeader.PROBE_PORT, 0, 0, PEER);
        host.advance(host.config.ackDelay().toNanos());
        connection.doWork(host.nowNs);
        assertEquals(List.of(new Frame(1, 2, 0, 0, 40, 0, 0),
            new Frame(2, 2, 0, 0, RdsHeader.PROBE_PORT, 0, FakePathHost.GENERATION)), wire.frames());
        assertCounters("recv_ping", 1, "send_pong", 1, "recv_probe", 2, "send_ack_only", 0);
    }

    @Test
    void staleRetransmissionsOldSequencesAndBadAcksAreDropped()
    {
        bringUp();
        receive(5, 0, 5, 9, FLAG_RETRANSMITTED, 0);
        assertEquals(0, path.acks().nextRxSequence(), "the first session takes no retransmission");
        receive(0, 3, 0, 0, 0, 0);

        path.drop("reset by the test");
        reconnect(PEER);
        receive(5, 0, 5, 9, FLAG_RETRANSMITTED, 0);
        assertEquals(6, path.acks().nextRxSequence());
        receive(4, 0, 5, 9, FLAG_RETRANSMITTED, 0);
        assertEquals(6, path.acks().nextRxSequence());
        assertCounters("recv_drop_stale", 1, "recv_drop_bad_ack", 1, "recv_drop_old_seq", 1, "recv_drop_no_sock", 1);
    }

    private FakeTransportPath connect(final FakeTransportPath wire)
    {
        path.connectIfDown();
        assertEquals(1, connection.doWork(host.nowNs));
        path.onConnected(wire);
        return wire;
    }

    /** A wire that can report what the transport acked, as TCP's does: a kernel peer's on it. */
    private FakeTransportPath transportAckedWire()
    {
        final FakeTransportPath wire = new FakeTransportPath(path);
        wire.canReportTransportAcks = true;
        return wire;
    }

    private FakeTransportPath bringUp()
    {
        final FakeTransportPath wire = connect(new FakeTransportPath(path));
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION, PROBE), wire.frames());
        receive(0, 0, RdsHeader.PROBE_PORT, 0, 0, PEER);
        assertEquals(ConnectionState.UP, path.state());
        return wire;
    }

    /** After a drop: the next attempt (at most the minimum backoff later), the handshake, then what is queued. */
    private FakeTransportPath reconnect(final int peerGeneration)
    {
        host.advance(host.config.reconnectDelayMin().toNanos());
        assertEquals(1, connection.doWork(host.nowNs));
        final FakeTransportPath wire = new FakeTransportPath(path);
        path.onConnected(wire);
        connection.doWork(host.nowNs);
        assertEquals(List.of(CONGESTION, PROBE), wire.frames());
        receive(0, 0, RdsHeader.PROBE_PORT, 0, 0, peerGeneration);
        assertEquals(ConnectionState.UP, path.state());
        connection.doWork(host.nowNs);
        return wire;
    }

    private void send(final int dport, final int length)
    {
        final Message message = host.pool.acquire(length);
        message.sport = 5;
        message.dport = dport;
        connection.enqueue(message);
    }

    private void receive(final long sequence, final long ack, final int sport, final int dport, final int flags,
        final int generation)
    {
        path.onFrame(frame(sequence, ack, sport, dport, flags, generation), 0);
    }

    /** A frame without payload; with the handshake extensions if {@code generation} is not 0. */
    private static UnsafeBuffer frame(final long sequence, final long ack, final int sport, final int dport,
        final int flags, final int generation)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[RdsHeader.LENGTH]);
        RdsHeader.write(buffer, 0, sequence, ack, 0, sport, dport, flags, 0);
        if (generation != 0)
        {
            RdsHeader.writeHandshakeExtensions(buffer, 0, 1, generation);
        }
        return buffer;
    }

    private static Frame data(final long sequence, final long ack, final int length, final int dport, final int flags)
    {
        return new Frame(sequence, ack, length, 5, dport, flags, 0);
    }

    private static Frame ackOnly(final long ack)
    {
        return new Frame(0, ack, 0, 0, 0, 0, 0);
    }

    private void assertCounters(final Object... namesAndValues)
    {
        final var snapshot = host.counters.snapshot();
        for (int i = 0; i < namesAndValues.length; i += 2)
        {
            assertEquals(((Integer)namesAndValues[i + 1]).longValue(), snapshot.get((String)namesAndValues[i]),
                (String)namesAndValues[i]);
        }
    }
}
