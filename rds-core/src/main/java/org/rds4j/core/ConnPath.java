package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * One path of a {@link Connection} (the kernel's {@code rds_conn_path}), what a transport sees of it: the state
 * machine with its reconnect backoff, and the events that drive it. Its parts: {@link PathSender} (sequences, the
 * send queue with its retransmission list, the frames given to the transport), {@link ReceiveAcks} (the receive
 * rules and when an ack is due), {@link PeerHandshake} (the peer's generation and kind), {@link Liveness}
 * (heartbeat and handshake deadlines); received frames go through the connection's {@link FrameReceiver}. A
 * changed peer generation is a restarted peer: what was sent to the old process is dropped and sequencing
 * starts again, so no stale retransmission reaches the new one.
 * <p>
 * States ({@link ConnectionState}) and the only changes {@link #transition} allows; it refuses any other and
 * counts it ({@code conn_illegal_transition}):
 * <pre>
 *   DOWN       -&gt; CONNECTING  a reconnect is due: this side connects, or has messages queued
 *   CONNECTING -&gt; DOWN        the attempt failed; the next follows the backoff delay
 *   DOWN       -&gt; HANDSHAKE   the transport connected (the peer connected to us, or our connect completed):
 *   CONNECTING -&gt; HANDSHAKE   the congestion map and the probe go, nothing else
 *   HANDSHAKE  -&gt; UP          the peer's probe or pong told its generation; at once on a path that needs no
 *                             handshake (loopback, a kernel peer)
 *   HANDSHAKE  -&gt; DOWN        the path failed, or the peer did not answer the handshake in the connect timeout
 *   UP         -&gt; DOWN        the path failed, the peer went silent for the heartbeat timeout, broke the
 *                             protocol or restarted; unacked messages are requeued and a reconnect is scheduled
 *   (any)      -&gt; DOWN        the stack closes (CONNECTING, HANDSHAKE, UP)
 * </pre>
 * Agent thread only, except {@link #state()} and the sequence getters, which any thread may read.
 */
final class ConnPath implements ConnectionPath
{
    private static final Logger LOG = LoggerFactory.getLogger(ConnPath.class);

    private final PathHost host;
    private final StackCounters counters;
    private final Connection connection;
    private final Transport transport;
    private final FrameReceiver receiver;
    private final ReconnectBackoff backoff;
    private final ReceiveAcks acks;
    private final Liveness liveness;
    private final PeerHandshake handshake = new PeerHandshake(this);
    private final PathSender sender;

    private volatile ConnectionState state = ConnectionState.DOWN;
    /** The live transport connection: not null in HANDSHAKE and UP only. */
    private TransportPath path;
    private long reconnectAtNs;
    private boolean reconnectWanted;

    /**
     * @param host       the stack.
     * @param connection the connection the path belongs to.
     * @param receiver   the connection's receive path.
     */
    ConnPath(final PathHost host, final Connection connection, final FrameReceiver receiver)
    {
        this.host = host;
        this.counters = host.counters();
        this.connection = connection;
        this.transport = connection.transport();
        this.receiver = receiver;
        this.backoff = new ReconnectBackoff(
            host.config().reconnectDelayMin().toNanos(), host.config().reconnectDelayMax().toNanos());
        this.acks = new ReceiveAcks(host.config().ackDelay().toNanos(), counters);
        this.liveness = new Liveness(host.config().heartbeatInterval().toNanos(),
            host.config().heartbeatTimeout().toNanos(), host.config().connectTimeout().toNanos());
        this.sender = new PathSender(host, transport.checksumsHeaders(), acks);
    }

    @Override
    public InetAddress localAddress()
    {
        return connection.localAddress();
    }

    @Override
    public InetAddress remoteAddress()
    {
        return connection.remoteAddress();
    }

    /** @return the current state; any thread may read it. */
    ConnectionState state()
    {
        return state;
    }

    @Override
    public boolean isConnecting()
    {
        return state == ConnectionState.CONNECTING;
    }

    /** @return true in HANDSHAKE and UP: the transport path is up, whether or not the handshake is done. */
    @Override
    public boolean isUp()
    {
        final ConnectionState current = state;
        return current == ConnectionState.UP || current == ConnectionState.HANDSHAKE;
    }

    /** @return the send half: sequences, the send queue, the frames given to the transport. */
    PathSender sender()
    {
        return sender;
    }

    /** @return the receive side's sequence and ack state. */
    ReceiveAcks acks()
    {
        return acks;
    }

    /** @return what the handshake knows of the peer. */
    PeerKind peerKind()
    {
        return handshake.kind();
    }

    /**
     * The one place the state changes.
     *
     * @param from the state the caller expects.
     * @param to   the state to pass to.
     * @return false, and counted, if the state is not {@code from} or the change is not one the class lists.
     */
    boolean transition(final ConnectionState from, final ConnectionState to)
    {
        if (state != from || !isListed(from, to))
        {
            counters.connIllegalTransition.incrementOrdered();
            LOG.warn("{}: refused a change of state {} -> {}", this, from, to);
            return false;
        }
        state = to;
        return true;
    }

    private static boolean isListed(final ConnectionState from, final ConnectionState to)
    {
        switch (from)
        {
            case DOWN: return to == ConnectionState.CONNECTING || to == ConnectionState.HANDSHAKE;
            case CONNECTING: return to == ConnectionState.DOWN || to == ConnectionState.HANDSHAKE;
            case HANDSHAKE: return to == ConnectionState.UP || to == ConnectionState.DOWN;
            case UP: return to == ConnectionState.DOWN;
            default: return false;
        }
    }

    // ---------------------------------------------------------------- connection events

    /**
     * The transport established the connection; refused (the new path closed) if one is up already.
     *
     * @param newPath the live transport connection.
     */
    @Override
    public void onConnected(final TransportPath newPath)
    {
        if (!transition(state, ConnectionState.HANDSHAKE))
        {
            newPath.close();
            return;
        }
        path = newPath;
        backoff.reset();
        liveness.onPathUp(host.nowNs());
        final boolean handshaking = handshake.onPathUp(newPath, transport.startsWithHandshake());
        sender.onPathUp(handshaking);
        // an ack may have been lost with the old connection: repeat it at once
        acks.onPathUp(host.cycle(), handshake.kind() != PeerKind.KERNEL_WITHOUT_PROBES);
        if (!handshaking)
        {
            transition(ConnectionState.HANDSHAKE, ConnectionState.UP);
        }
        counters.connUp.incrementOrdered();
        LOG.info("{} up", this);
        host.onPeerUp(connection);
    }

    @Override
    public void onConnectFailed(final String reason)
    {
        if (state != ConnectionState.CONNECTING)
        {
            return;
        }
        transition(ConnectionState.CONNECTING, ConnectionState.DOWN);
        reconnectAtNs = host.nowNs() + backoff.nextDelayNs();
        counters.connAttemptFailed.incrementOrdered();
        LOG.debug("{} connect failed: {}", this, reason);
    }

    @Override
    public void onPathDown(final TransportPath failed, final String reason)
    {
        pathDown(failed, reason, false);
    }

    /**
     * As {@link #onPathDown}, for a peer that broke the protocol or went silent (a bad frame, a frame left
     * incomplete, an unanswered handshake or heartbeat): the one log line is a warning.
     */
    @Override
    public void onPeerMisbehaved(final TransportPath failed, final String reason)
    {
        pathDown(failed, reason, true);
    }

    private void pathDown(final TransportPath failed, final String reason, final boolean misbehaved)
    {
        if (failed != path || path == null)
        {
            return;
        }
        if (misbehaved)
        {
            LOG.warn("{} dropped: {}", this, reason);
        }
        else
        {
            // a kernel peer counts what TCP acked as delivered: take in what arrived before the path goes
            path.drainReceived();
            if (failed != path)
            {
                return; // what was drained dropped the path already
            }
            LOG.info("{} down: {}", this, reason);
        }
        final TransportPath old = path;
        path = null;
        sender.takeBackAppended(old); // before the close releases the transport's memory
        old.close();
        sender.requeueForRetransmission();
        transition(state, ConnectionState.DOWN);
        acks.onPathDown();
        counters.connReset.incrementOrdered();
        reconnectWanted = connection.initiatesReconnect();
        reconnectAtNs = host.nowNs() + backoff.nextDelayNs();
        host.onPeerDown(connection);
    }

    /** The peer asked to be connected to (a TCP poke from a higher address): connect now if down. */
    @Override
    public void connectIfDown()
    {
        if (state == ConnectionState.DOWN)
        {
            reconnectWanted = true;
            reconnectAtNs = host.nowNs();
        }
    }

    @Override
    public void drop(final String reason)
    {
        if (path != null)
        {
            onPathDown(path, reason);
        }
    }

    @Override
    public void onPeerConnectedAgain()
    {
        drop("the peer connected again");
    }

    /**
     * Agent duty: connects when due; when up, gives up a dead peer, sends the heartbeat and transmits.
     *
     * @param nowNs the time.
     * @return work done.
     */
    int doWork(final long nowNs)
    {
        ConnectionState current = state;
        if (current == ConnectionState.UP || current == ConnectionState.HANDSHAKE)
        {
            if (liveness.isDead(nowNs, current == ConnectionState.HANDSHAKE))
            {
                // Silence is judged on what has arrived, not on what was read: the connections run before the
                // transports' reads, and an agent held for a while (a pause, a starved CPU, a long first cycle)
                // finds the deadline past with the peer's frames waiting. A kernel peer counts what TCP acked
                // as delivered, so closing the path on them would lose them.
                path.drainReceived();
                if (path == null)
                {
                    return 1; // what was read dropped the path
                }
                current = state;
                if (liveness.isDead(nowNs, current == ConnectionState.HANDSHAKE))
                {
                    return dropSilentPeer(nowNs, current == ConnectionState.HANDSHAKE);
                }
            }
            if (current == ConnectionState.UP && liveness.heartbeatDue(nowNs))
            {
                queueHeartbeat();
            }
            return hasOutput(nowNs) ? path.transmit() : 0;
        }
        if (current == ConnectionState.DOWN && nowNs >= reconnectAtNs && (reconnectWanted || sender.queuedMessages() > 0))
        {
            transition(ConnectionState.DOWN, ConnectionState.CONNECTING);
            transport.connect(this);
            return 1;
        }
        return 0;
    }

    /**
     * The latest time the next duty cycle must run for this path if nothing wakes the agent: the heartbeat's next
     * probe or timeout when it is up with nothing to send or to ack; the reconnect time when it is down
     * and will reconnect; {@code nowNs} (keep polling) in every other state.
     *
     * @param nowNs the time.
     * @return the deadline.
     */
    long idleDeadlineNs(final long nowNs)
    {
        final ConnectionState current = state;
        if (current == ConnectionState.UP)
        {
            final boolean ackOwed = handshake.kind() != PeerKind.KERNEL_TRANSPORT_ACKED && acks.isAckOwed();
            // messages sent and unacked need no timer: the peer's acks come as input, and a silent peer is the
            // heartbeat's to find
            return ackOwed || hasOutput(nowNs) ? nowNs : liveness.deadlineNs();
        }
        if (current == ConnectionState.DOWN)
        {
            return reconnectWanted || sender.queuedMessages() > 0 ? reconnectAtNs : Transport.NO_DEADLINE;
        }
        return nowNs;
    }

    private int dropSilentPeer(final long nowNs, final boolean handshaking)
    {
        final String reason;
        if (handshaking)
        {
            counters.connHandshakeTimeout.incrementOrdered();
            reason = "the peer did not answer the handshake probe";
        }
        else
        {
            counters.connHeartbeatTimeout.incrementOrdered();
            reason = "no frame from the peer for " + liveness.silentNs(nowNs) / 1_000_000 + " ms";
        }
        pathDown(path, reason, true);
        return 1;
    }

    /** Closes the transport path and frees every queued message; the stack is closing. */
    void close()
    {
        if (path != null)
        {
            path.close();
            path = null;
        }
        if (state != ConnectionState.DOWN)
        {
            transition(state, ConnectionState.DOWN);
        }
        sender.releaseAll();
    }

    // ---------------------------------------------------------------- sending

    private boolean hasOutput(final long nowNs)
    {
        return sender.hasOutput(connection.local.congestionMap, state == ConnectionState.UP, isAckDue(nowNs));
    }

    @Override
    public void requestControlFrame()
    {
        sender.requestControlFrame();
    }

    @Override
    public long ackSequence()
    {
        return acks.ackValue();
    }

    @Override
    public long sequenceReadOnPath()
    {
        return sender.sequenceReadOnPath();
    }

    /** Kernel RDS over TCP ignores RDS acks and takes an ack-only frame's sequence 0 as the next in sequence. */
    private boolean isAckDue(final long nowNs)
    {
        final PeerKind kind = handshake.kind();
        return kind != PeerKind.KERNEL_TRANSPORT_ACKED &&
            acks.isAckDue(nowNs, host.cycle(), kind != PeerKind.KERNEL_WITHOUT_PROBES);
    }

    @Override
    public int fillTransmit(final ByteBuffer[] out, final int max)
    {
        return sender.fill(out, max, connection.local.congestionMap, state == ConnectionState.UP,
            isAckDue(host.nowNs()), handshake.kind() != PeerKind.KERNEL_WITHOUT_PROBES);
    }

    /**
     * A sending thread that holds the duty cycle has the transport write its message once, straight into the memory
     * it is sent from, as the kernel's {@code rds_sendmsg} queues and transmits in the caller: possible while the
     * path is up and nothing of the queue waits to be sent before it.
     *
     * @param flags the sender's flags (ACK_REQUIRED past half its send buffer).
     * @return the bytes appended and not yet flushed, this frame's included (the sender tests them at once: its batch's
     *         first frame, a full batch), or -1 if not now: the message goes the usual way.
     */
    int append(final RdsSocketImpl socket, final ByteBuffer payload, final int length, final int sport,
        final int dport, final int flags)
    {
        final TransportPath current = path;
        if (state != ConnectionState.UP || current == null || !sender.mayAppend())
        {
            return -1;
        }
        final long position = current.append(sender.appendSequence(), acks.ackValue(),
            sender.appendFlags(flags, length), sport, dport, payload, length);
        if (position < 0)
        {
            return -1;
        }
        sender.appended(socket, length, sport << 16 | dport, position);
        return current.appendedBytes();
    }

    /**
     * @return whether messages may be appended to this path's transport while it lives ({@link #append}): 1 yes,
     *         0 not while the path is down, -1 never on this connection's transport.
     */
    int appends()
    {
        final TransportPath current = path;
        if (current == null || state != ConnectionState.UP)
        {
            return 0;
        }
        return current.appends() ? 1 : -1;
    }

    /** Sends what was appended to the transport. */
    void flushAppended()
    {
        final TransportPath current = path;
        if (current != null)
        {
            current.flushAppended();
        }
    }

    @Override
    public void onAppendedFlushed(final long lastSequence)
    {
        sender.appendedFlushed(lastSequence);
    }

    /**
     * Removes a socket's unacked messages, to one port or all (see {@link PathSender#cancel}); appended frames
     * are flushed first, so that each is either dropped whole or never begun.
     *
     * @return how many were dropped.
     */
    int cancel(final RdsSocketImpl socket, final int dport)
    {
        flushAppended();
        return sender.cancel(socket, dport);
    }

    @Override
    public int onTransmitted(final ByteBuffer[] out, final int count)
    {
        return sender.onTransmitted(out, count);
    }

    // ---------------------------------------------------------------- receiving

    @Override
    public void onFrame(final DirectBuffer buffer, final int offset)
    {
        receiver.onFrame(this, buffer, offset, false);
    }

    @Override
    public void onBatchFrame(final DirectBuffer buffer, final int offset)
    {
        receiver.onFrame(this, buffer, offset, true);
    }

    @Override
    public void onBatchEnd()
    {
        host.batchEnd();
    }

    /** A frame arrived: the peer is alive (and, while the handshake waits, gets longer to answer). */
    void onFrameArrived()
    {
        liveness.onFrame(host.nowNs(), state == ConnectionState.HANDSHAKE);
    }

    /**
     * A probe or its pong told the peer's generation: the handshake is done; a generation other than the one
     * known means the peer restarted.
     *
     * @param generation the generation it carries, 0 if none.
     */
    void onHandshake(final int generation)
    {
        counters.recvProbe.incrementOrdered();
        final int previous = handshake.onGeneration(generation);
        if (previous != 0)
        {
            if (state == ConnectionState.UP)
            {
                // mid-connection: stop the transport before the queue is rewritten under it
                onPathDown(path, "peer restarted");
            }
            forgetOldIncarnation(previous, generation);
        }
        if (isUp())
        {
            handshake.learnAckRule(generation, path);
        }
        if (state == ConnectionState.HANDSHAKE)
        {
            transition(ConnectionState.HANDSHAKE, ConnectionState.UP);
            LOG.debug("{} handshake done, peer generation {}", this, Integer.toHexString(generation));
        }
    }

    /**
     * The peer restarted: drops what was sent to the old process, numbers the rest from 1, and forgets the old
     * process's sequence and acks.
     */
    private void forgetOldIncarnation(final int oldGeneration, final int newGeneration)
    {
        final long flushed = sender.forgetOldIncarnation();
        acks.reset();
        counters.connPeerRestart.incrementOrdered();
        LOG.info("{} peer restarted (generation {} -> {}): {} messages sent to the old process dropped", this,
            Integer.toHexString(oldGeneration), Integer.toHexString(newGeneration), flushed);
    }

    /**
     * An ack the peer gave outside a frame (loopback acks everything it hands over at once; IB carries the
     * peer's ack sequence in its connect private data), or a received frame's. An ack above what was sent on
     * this path comes from an earlier incarnation of one side (a restarted process starts again at 1) and is
     * dropped: applying it would free messages the peer never had.
     */
    @Override
    public void onPeerAck(final long ack)
    {
        sender.onAck(ack);
    }

    /**
     * The heartbeat: a sequenced probe, answered by a pong to port 1 that any RDS peer sends; to a kernel peer
     * that must not see probes, an empty message to port 1 with ACK_REQUIRED, which it drops and acks.
     */
    private void queueHeartbeat()
    {
        if (handshake.kind() == PeerKind.KERNEL_WITHOUT_PROBES)
        {
            sender.queueControl(RdsHeader.PROBE_PORT, RdsHeader.PROBE_PORT).flags = RdsHeader.FLAG_ACK_REQUIRED;
        }
        else
        {
            sender.queueControl(RdsHeader.PROBE_PORT, 0);
        }
        counters.sendHeartbeat.incrementOrdered();
    }

    @Override
    public String toString()
    {
        return "Connection[" + connection.localAddress().getHostAddress() + "->" +
            connection.remoteAddress().getHostAddress() + " " + transport.name() + " " + state + "]";
    }
}
