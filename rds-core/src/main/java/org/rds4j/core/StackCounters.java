package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.rds4j.core.spi.TransportCounters;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The stack's counters, agrona {@link AtomicCounter}s named after the kernel's RDS statistics. Counters
 * the agent alone updates are incremented with ordered (non-atomic) writes; the few that application
 * threads update use atomic increments. Transports add their own with {@link #newTransportCounter}.
 */
public final class StackCounters implements TransportCounters
{
    /** The stack's own counters and the transports' (about 40 and 15 now), with room to grow. */
    private static final int MAX_COUNTERS = 128;
    /** Bytes of counter metadata (labels) the counters need: 128 counters of {@link CountersManager#METADATA_LENGTH}. */
    public static final int METADATA_BYTES = MAX_COUNTERS * CountersManager.METADATA_LENGTH;
    /** Bytes of counter values the counters need: 128 counters of {@link CountersManager#COUNTER_LENGTH}. */
    public static final int VALUES_BYTES = MAX_COUNTERS * CountersManager.COUNTER_LENGTH;

    private final CountersManager manager;

    /** Messages moved from sockets into connection send queues. */
    public final AtomicCounter sendQueued;
    /** Data frames fully handed to a transport (first sends and retransmissions). */
    public final AtomicCounter sendTransmitted;
    /** Messages freed by an ack. */
    public final AtomicCounter sendDropAcked;
    /** Messages that carried ACK_REQUIRED. */
    public final AtomicCounter sendAckRequired;
    /** Messages put back for retransmission after a connection dropped. */
    public final AtomicCounter sendRetransmitted;
    /** Messages dropped by cancelSentTo or socket close. */
    public final AtomicCounter sendCancelled;
    /** Send attempts refused for a full send buffer or hand-off queue (each retry of a blocked send counts). Application threads. */
    public final AtomicCounter sendQueueFull;
    /** Send attempts refused for a congested destination (each retry of a blocked send counts). Application threads. */
    public final AtomicCounter sendCongBlocked;
    /** Messages sent that were held in pooled memory, not their socket's send ring: too large for it, or it had no room. Application threads. */
    public final AtomicCounter sendRingSpill;
    /**
     * Duty cycles a blocking send ran on its calling thread: its message alone in the send buffer, or a stream of
     * small messages the agent fell behind (in INVOKER mode, every blocking send's). Application threads.
     */
    public final AtomicCounter sendCallerCycles;
    /**
     * Messages a blocking send wrote straight into its connection's transport, and a driver's clients' sends its agent
     * did (see {@code RdsSocketImpl}). Application threads, a driver's agent.
     */
    public final AtomicCounter sendAppended;
    /**
     * Batches of appended messages their sender sent itself, full ({@code AgentCalls.appendBatchBytes}): with
     * {@link #sendAppended}, the messages per write of a stream. Application threads, a driver's agent.
     */
    public final AtomicCounter sendAppendedBatches;
    /** Pongs sent in answer to pings from bound ports (answers to probes are not counted here). */
    public final AtomicCounter sendPong;
    /** Ack-only frames sent. */
    public final AtomicCounter sendAckOnly;
    /** Messages delivered to a socket. */
    public final AtomicCounter recvDelivered;
    /**
     * Runs of two or more messages of one transport batch (a TCP read, an IB poll, a loopback transmit), for one
     * socket from one sender, queued as one ring record.
     */
    public final AtomicCounter recvRuns;
    /** Delivered messages that waited outside their socket's receive ring: too large for it, or it was full. */
    public final AtomicCounter recvRingSpill;
    /** Retransmitted messages dropped as already received. */
    public final AtomicCounter recvDropOldSeq;
    /** Retransmitted frames on a connection's first transport connection: sent to an earlier process at this address. */
    public final AtomicCounter recvDropStale;
    /** Messages to a port with no socket (still acked). */
    public final AtomicCounter recvDropNoSock;
    /** Pings received from bound ports (probes from port 1 are counted in recv_probe). */
    public final AtomicCounter recvPing;
    /** Messages received with ACK_REQUIRED. */
    public final AtomicCounter recvAckRequired;
    /** Ack-only frames received. */
    public final AtomicCounter recvAckOnly;
    /** Acks ignored because they acknowledged sequences never sent on the connection (a restarted peer). */
    public final AtomicCounter recvDropBadAck;
    /** Congestion map updates queued to peers. */
    public final AtomicCounter congUpdateQueued;
    /** Congestion map updates received. */
    public final AtomicCounter congUpdateReceived;
    /** Connections that came up. */
    public final AtomicCounter connUp;
    /** Connections that went down after being up. */
    public final AtomicCounter connReset;
    /** Connection attempts that failed. */
    public final AtomicCounter connAttemptFailed;
    /** Connections dropped for a frame that failed validation. */
    public final AtomicCounter connBadFrame;
    /**
     * Transport connections refused: no socket bound to the local address, a node that must be connected to
     * instead, a newcomer the transport does not take while the pair is up (IB), the loser of a crossed connect.
     */
    public final AtomicCounter connRefused;
    /** Messages allocated because the pool had none of the size free: grows at warm-up, flat in steady state. */
    public final AtomicCounter poolAlloc;
    /** Handshake probes sent, one per new connection. */
    public final AtomicCounter sendProbe;
    /** Probes and pongs to the probe port received: each tells the peer's generation. */
    public final AtomicCounter recvProbe;
    /** Heartbeat probes queued because nothing arrived for the heartbeat interval. */
    public final AtomicCounter sendHeartbeat;
    /** Connections dropped because nothing arrived for the heartbeat timeout (a silent or half-open peer). */
    public final AtomicCounter connHeartbeatTimeout;
    /** Connections dropped because the peer did not answer the handshake probe within the connect timeout. */
    public final AtomicCounter connHandshakeTimeout;
    /** Peer restarts seen: a handshake told a generation other than the one known. */
    public final AtomicCounter connPeerRestart;
    /** Messages dropped because they had been sent to a peer process that has since restarted. */
    public final AtomicCounter sendFlushedPeerRestart;
    /** Connections dropped because a frame stayed incomplete longer than the frame timeout (a stalled or slowloris peer). */
    public final AtomicCounter connFrameTimeout;
    /** Connections refused, accepted or to be made, because the peer is outside the allow-list ({@code allowedPeers}). */
    public final AtomicCounter connRefusedNotAllowed;
    /** Incoming connections refused because their node pair connected faster than {@code peerConnectRate}. */
    public final AtomicCounter connRefusedRate;
    /** Incoming connections of a new node pair refused because the stack already has {@code maxPeers} of them. */
    public final AtomicCounter connRefusedLimit;
    /** State changes a connection path refused as not in its list of transitions: a bug, never expected. */
    public final AtomicCounter connIllegalTransition;

    /** Allocates the counters in direct memory, all at zero. */
    public StackCounters()
    {
        this(new UnsafeBuffer(ByteBuffer.allocateDirect(METADATA_BYTES)), new UnsafeBuffer(ByteBuffer.allocateDirect(VALUES_BYTES)));
    }

    /**
     * Allocates the counters in given memory, for example a memory-mapped file that tools read with agrona's
     * {@link org.agrona.concurrent.status.CountersReader} (the stack's info file).
     *
     * @param metadata zeroed memory of {@link #METADATA_BYTES} bytes for the counters' labels.
     * @param values   zeroed memory of {@link #VALUES_BYTES} bytes, 8-byte aligned, for their values.
     */
    public StackCounters(final UnsafeBuffer metadata, final UnsafeBuffer values)
    {
        manager = new CountersManager(metadata, values);
        sendQueued = manager.newCounter("send_queued");
        sendTransmitted = manager.newCounter("send_transmitted");
        sendDropAcked = manager.newCounter("send_drop_acked");
        sendAckRequired = manager.newCounter("send_ack_required");
        sendRetransmitted = manager.newCounter("send_retransmitted");
        sendCancelled = manager.newCounter("send_cancelled");
        sendQueueFull = manager.newCounter("send_queue_full");
        sendCongBlocked = manager.newCounter("send_cong_blocked");
        sendPong = manager.newCounter("send_pong");
        sendAckOnly = manager.newCounter("send_ack_only");
        recvDelivered = manager.newCounter("recv_delivered");
        recvDropOldSeq = manager.newCounter("recv_drop_old_seq");
        recvDropStale = manager.newCounter("recv_drop_stale");
        recvDropNoSock = manager.newCounter("recv_drop_no_sock");
        recvPing = manager.newCounter("recv_ping");
        recvAckRequired = manager.newCounter("recv_ack_required");
        recvAckOnly = manager.newCounter("recv_ack_only");
        recvDropBadAck = manager.newCounter("recv_drop_bad_ack");
        congUpdateQueued = manager.newCounter("cong_update_queued");
        congUpdateReceived = manager.newCounter("cong_update_received");
        connUp = manager.newCounter("conn_up");
        connReset = manager.newCounter("conn_reset");
        connAttemptFailed = manager.newCounter("conn_attempt_failed");
        connBadFrame = manager.newCounter("conn_bad_frame");
        connRefused = manager.newCounter("conn_refused");
        poolAlloc = manager.newCounter("pool_alloc");
        sendProbe = manager.newCounter("send_probe");
        recvProbe = manager.newCounter("recv_probe");
        sendHeartbeat = manager.newCounter("send_heartbeat");
        connHeartbeatTimeout = manager.newCounter("conn_heartbeat_timeout");
        connHandshakeTimeout = manager.newCounter("conn_handshake_timeout");
        connPeerRestart = manager.newCounter("conn_peer_restart");
        sendFlushedPeerRestart = manager.newCounter("send_flushed_peer_restart");
        connFrameTimeout = manager.newCounter("conn_frame_timeout");
        connRefusedNotAllowed = manager.newCounter("conn_refused_not_allowed");
        connRefusedRate = manager.newCounter("conn_refused_rate");
        connRefusedLimit = manager.newCounter("conn_refused_limit");
        connIllegalTransition = manager.newCounter("conn_illegal_transition");
        recvRingSpill = manager.newCounter("recv_ring_spill");
        sendRingSpill = manager.newCounter("send_ring_spill");
        sendCallerCycles = manager.newCounter("send_caller_cycles");
        sendAppended = manager.newCounter("send_appended");
        sendAppendedBatches = manager.newCounter("send_appended_batches");
        recvRuns = manager.newCounter("recv_runs");
    }

    @Override
    public AtomicCounter connRefused()
    {
        return connRefused;
    }

    @Override
    public AtomicCounter connRefusedNotAllowed()
    {
        return connRefusedNotAllowed;
    }

    @Override
    public AtomicCounter connRefusedRate()
    {
        return connRefusedRate;
    }

    @Override
    public AtomicCounter connRefusedLimit()
    {
        return connRefusedLimit;
    }

    @Override
    public AtomicCounter connBadFrame()
    {
        return connBadFrame;
    }

    @Override
    public AtomicCounter connFrameTimeout()
    {
        return connFrameTimeout;
    }

    /**
     * Registers a counter of a transport's own, listed after the stack's by {@link #snapshot()}, by the stack's
     * {@code counters()} and by {@code rds info}. Call it while the transport is created (the stack's
     * constructor), not later: registration is not thread-safe.
     *
     * @param name unique, prefixed by the transport as the kernel's statistics are ({@code ib_}, {@code tcp_}).
     * @return the counter, at zero.
     * @throws IllegalArgumentException if a counter has the name already.
     * @throws IllegalStateException    if the counters' memory is full.
     */
    @Override
    public AtomicCounter newTransportCounter(final String name)
    {
        if (snapshot().containsKey(name))
        {
            throw new IllegalArgumentException("a counter is named " + name + " already");
        }
        return manager.newCounter(name);
    }

    /** @return every counter by name, in registration order. */
    public Map<String, Long> snapshot()
    {
        final Map<String, Long> values = new LinkedHashMap<>();
        manager.forEach((counterId, label) -> values.put(label, manager.getCounterValue(counterId)));
        return values;
    }
}
