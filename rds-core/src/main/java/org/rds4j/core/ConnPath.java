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
 * One path of a {@link Connection} (the kernel's {@code rds_conn_path}): its state, sequence numbers, the acks
 * both ways, the send queue with its retransmission list, the reconnect backoff, and the frames its transport
 * path sends (congestion map first, the handshake probe, data, ack-only). The receive side's dispatch is the
 * connection's {@link FrameReceiver}; the rules about the peer are {@link PeerHandshake}'s. A changed peer
 * generation is a restarted peer: what was sent to the old process is dropped and sequencing starts again, so
 * no stale retransmission reaches the new one.
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

    /** The paths rds4j offers in the handshake: one per node pair. */
    private static final int NPATHS = 1;

    private final PathHost host;
    private final StackCounters counters;
    private final Connection connection;
    private final Transport transport;
    private final FrameReceiver receiver;
    private final SendQueue queue = new SendQueue();
    private final AckRequestBudget ackBudget = new AckRequestBudget();
    private final ReconnectBackoff backoff;
    private final ReceiveAcks acks;
    private final Liveness liveness;
    private final PeerHandshake handshake = new PeerHandshake(this);
    private final ControlFrames frames;

    private volatile ConnectionState state = ConnectionState.DOWN;
    /** The live transport connection: not null in HANDSHAKE and UP only. */
    private TransportPath path;
    /** The first transport connection of this stack's life with the peer is up, or not yet made. */
    private boolean firstSession = true;
    private long reconnectAtNs;
    private boolean reconnectWanted;

    private volatile long nextTxSequence = 1;
    /** Highest sequence fully handed to a transport; an ack above it acks something never sent. */
    private long highestSequenceSent;
    /** Highest ack the peer sent (at most {@link #highestSequenceSent}). */
    private long highestAck;
    /** {@link #highestSequenceSent} when the current path came up: a higher sequence was only ever sent on it. */
    private long pathSequenceFloor;

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
        this.acks = new ReceiveAcks(host.config().ackDelay().toNanos());
        this.liveness = new Liveness(host.config().heartbeatInterval().toNanos(),
            host.config().heartbeatTimeout().toNanos(), host.config().connectTimeout().toNanos());
        this.frames = new ControlFrames(transport.checksumsHeaders());
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

    long nextTxSequence()
    {
        return nextTxSequence;
    }

    long nextRxSequence()
    {
        return acks.nextRxSequence();
    }

    int queuedMessages()
    {
        return queue.size();
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
        pathSequenceFloor = highestSequenceSent;
        backoff.reset();
        liveness.onPathUp(host.nowNs());
        final boolean handshaking = handshake.onPathUp(newPath, transport.startsWithHandshake());
        frames.onPathUp(handshaking);
        // an ack may have been lost with the old connection: repeat it at once
        acks.onPathUp(host.cycle());
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
        if (!misbehaved)
        {
            // a kernel peer counts what TCP acked as delivered: take in what arrived before the path goes
            path.drainReceived();
            if (failed != path)
            {
                return; // what was drained dropped the path already
            }
        }
        if (misbehaved)
        {
            LOG.warn("{} dropped: {}", this, reason);
        }
        else
        {
            LOG.info("{} down: {}", this, reason);
        }
        final TransportPath old = path;
        path = null;
        old.close();
        requeueForRetransmission();
        transition(state, ConnectionState.DOWN);
        firstSession = false;
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

    private void requeueForRetransmission()
    {
        final int resent = queue.sentCount() + (frames.inProgress() == ControlFrames.Kind.DATA ? 1 : 0);
        for (int i = 0; i < queue.size(); i++)
        {
            final Message message = queue.get(i);
            if (i < resent && !message.cancelled)
            {
                message.flags |= RdsHeader.FLAG_RETRANSMITTED;
                counters.sendRetransmitted.incrementOrdered();
            }
            message.stamped = false;
            message.rewind();
        }
        queue.removeIf((index, message) -> message.cancelled, host::releaseMessage);
        queue.markAllUnsent();
        frames.clear();
    }

    /**
     * Agent duty: connects when due; when up, gives up a dead peer, sends the heartbeat and transmits.
     *
     * @param nowNs the time.
     * @return work done.
     */
    int doWork(final long nowNs)
    {
        final ConnectionState current = state;
        if (current == ConnectionState.UP || current == ConnectionState.HANDSHAKE)
        {
            final boolean handshaking = current == ConnectionState.HANDSHAKE;
            if (liveness.isDead(nowNs, handshaking))
            {
                return dropSilentPeer(nowNs, handshaking);
            }
            if (!handshaking && liveness.heartbeatDue(nowNs))
            {
                queueHeartbeat();
            }
            return hasOutput(nowNs) ? path.transmit() : 0;
        }
        if (current == ConnectionState.DOWN && nowNs >= reconnectAtNs && (reconnectWanted || queue.size() > 0))
        {
            transition(ConnectionState.DOWN, ConnectionState.CONNECTING);
            transport.connect(this);
            return 1;
        }
        return 0;
    }

    /**
     * The latest time the next duty cycle must run for this path if nothing wakes the agent: the heartbeat's next
     * probe or timeout when it is up with nothing to send, unacked or to ack; the reconnect time when it is down
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
            return queue.size() > 0 || ackOwed || hasOutput(nowNs) ? nowNs : liveness.deadlineNs();
        }
        if (current == ConnectionState.DOWN)
        {
            return reconnectWanted || queue.size() > 0 ? reconnectAtNs : Transport.NO_DEADLINE;
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
        Message message;
        while ((message = queue.pollHead()) != null)
        {
            release(message);
        }
    }

    // ---------------------------------------------------------------- sending

    /**
     * Appends a message to the send queue with the next sequence number.
     *
     * @param message the message.
     */
    void enqueue(final Message message)
    {
        message.sequence = nextTxSequence++;
        message.rewind();
        queue.add(message);
    }

    /**
     * Removes a socket's unacked messages, to one port or all. A message a transport is part way through
     * writing is marked cancelled instead: it completes, but is never retransmitted.
     *
     * @param socket the owner.
     * @param dport  the destination port, or -1 for every port.
     * @return how many messages were dropped.
     */
    int cancel(final RdsSocketImpl socket, final int dport)
    {
        final int writing = frames.inProgress() == ControlFrames.Kind.DATA ? queue.sentCount() : -1;
        int dropped = 0;
        if (writing >= 0)
        {
            final Message message = queue.get(writing);
            if (message.socket == socket && (dport < 0 || message.dport == dport) && !message.cancelled)
            {
                message.cancelled = true;
                host.releaseBytes(message);
                dropped++;
            }
        }
        dropped += queue.removeIf(
            (index, message) -> index != writing && message.socket == socket && (dport < 0 || message.dport == dport),
            host::releaseSent);
        return dropped;
    }

    private boolean hasOutput(final long nowNs)
    {
        return frames.hasOutput(connection.local.congestionMap) ||
            (state == ConnectionState.UP && (queue.hasUnsent() || frames.ackWanted() || isAckDue(nowNs)));
    }

    /**
     * Asks for an ack-only frame on the next {@link #fillTransmit} after the handshake, even if no ack is due
     * (its ack may then be 0), unless a data frame goes first. For a transport that must send something of
     * its own in a header (IB: a credit update). One frame however often it is asked before it is sent.
     */
    @Override
    public void requestControlFrame()
    {
        frames.requestAck();
    }

    @Override
    public long ackSequence()
    {
        return acks.ackValue();
    }

    /**
     * @return the highest sequence the peer has acked that was first sent on the current path, so the peer has
     *         read the path's bytes up to the end of that frame and of every frame before it; 0 if there is none
     *         yet. A retransmitted frame proves nothing: the peer may have acked it on an earlier path.
     */
    @Override
    public long sequenceReadOnPath()
    {
        return highestAck > pathSequenceFloor ? highestAck : 0;
    }

    /** Kernel RDS over TCP ignores RDS acks and takes an ack-only frame's sequence 0 as the next in sequence. */
    private boolean isAckDue(final long nowNs)
    {
        return handshake.kind() != PeerKind.KERNEL_TRANSPORT_ACKED && acks.isAckDue(nowNs, host.cycle());
    }

    /**
     * Gives a transport the frames to send next, in order: the frame it was part way through, the congestion
     * map if it changed (always first on a new connection), the handshake probe on a new connection, then,
     * once the handshake is done, data frames, and an ack-only frame when an ack is due and no data frame
     * carries it. Frames are positioned from their first unsent byte.
     */
    @Override
    public int fillTransmit(final ByteBuffer[] out, final int max)
    {
        int count = 0;
        int nextData = queue.sentCount();
        boolean dataGiven = false;
        final ByteBuffer resumed = frames.resume();
        if (resumed != null)
        {
            out[count++] = resumed;
        }
        else if (frames.inProgress() == ControlFrames.Kind.DATA)
        {
            out[count++] = queue.get(nextData++).frame;
            dataGiven = true;
        }
        if (count < max && frames.congestionDue(connection.local.congestionMap))
        {
            out[count++] = frames.congestion(connection.local.congestionMap);
            counters.congUpdateQueued.incrementOrdered();
        }
        if (count < max && frames.probeDue())
        {
            out[count++] = frames.probe(NPATHS, host.generation());
        }
        if (state != ConnectionState.UP)
        {
            return count;
        }
        final long ack = acks.ackValue();
        while (count < max && nextData < queue.size())
        {
            out[count++] = stampData(queue.get(nextData++), ack);
            dataGiven = true;
            frames.dataGiven();
        }
        if (count < max && !dataGiven && frames.ackFree() && (frames.ackWanted() || isAckDue(host.nowNs())))
        {
            out[count++] = frames.ack(ack);
        }
        return count;
    }

    private ByteBuffer stampData(final Message message, final long ack)
    {
        if (!message.stamped)
        {
            message.stamped = true;
            final boolean retransmission = (message.flags & RdsHeader.FLAG_RETRANSMITTED) != 0;
            if (ackBudget.charge(message.payloadLength) || retransmission)
            {
                message.flags |= RdsHeader.FLAG_ACK_REQUIRED;
            }
            if ((message.flags & RdsHeader.FLAG_ACK_REQUIRED) != 0)
            {
                counters.sendAckRequired.incrementOrdered();
            }
        }
        RdsHeader.write(message.buffer, 0, message.sequence, ack, message.payloadLength, message.sport,
            message.dport, message.flags, 0);
        if ((message.sport == RdsHeader.PROBE_PORT || message.dport == RdsHeader.PROBE_PORT) &&
            handshake.kind() != PeerKind.KERNEL_WITHOUT_PROBES)
        {
            RdsHeader.writeHandshakeExtensions(message.buffer, 0, NPATHS, host.generation());
        }
        if (transport.checksumsHeaders())
        {
            RdsHeader.writeChecksum(message.buffer, 0);
        }
        return message.frame;
    }

    /**
     * Tells how far a write of frames from {@link #fillTransmit} went: frames with nothing remaining are done;
     * the first with bytes remaining is resumed by the next fill (see {@link ControlFrames}).
     */
    @Override
    public int onTransmitted(final ByteBuffer[] out, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final ByteBuffer frame = out[i];
            out[i] = null;
            if (frame.hasRemaining())
            {
                frames.onPartial(frame);
                for (int j = i + 1; j < count; j++)
                {
                    frames.onNotWritten(out[j]);
                    out[j] = null;
                }
                return i;
            }
            switch (frames.onWritten(frame))
            {
                case ACK:
                    acks.ackSent(frames.ackFilled());
                    counters.sendAckOnly.incrementOrdered();
                    break;
                case PROBE:
                    counters.sendProbe.incrementOrdered();
                    break;
                case DATA:
                    final Message message = queue.get(queue.sentCount());
                    queue.markSent();
                    highestSequenceSent = Math.max(highestSequenceSent, message.sequence);
                    acks.ackSent(RdsHeader.ack(message.buffer, 0));
                    counters.sendTransmitted.incrementOrdered();
                    break;
                default:
                    break;
            }
        }
        frames.onAllWritten();
        return count;
    }

    // ---------------------------------------------------------------- receiving

    @Override
    public void onFrame(final DirectBuffer buffer, final int offset)
    {
        receiver.onFrame(this, buffer, offset);
    }

    /** A frame arrived: the peer is alive (and, while the handshake waits, gets longer to answer). */
    void onFrameArrived()
    {
        liveness.onFrame(host.nowNs(), state == ConnectionState.HANDSHAKE);
    }

    /**
     * Applies the receive rules to a sequenced frame.
     *
     * @param sequence its sequence, not 0.
     * @param flags    its flags.
     * @return false if it is an old retransmission, to drop.
     */
    boolean acceptSequence(final long sequence, final int flags)
    {
        final boolean ackRequired = (flags & RdsHeader.FLAG_ACK_REQUIRED) != 0;
        if (ackRequired)
        {
            counters.recvAckRequired.incrementOrdered();
        }
        acks.onSequenced(ackRequired, host.nowNs(), host.cycle());
        if ((flags & RdsHeader.FLAG_RETRANSMITTED) != 0)
        {
            if (sequence < acks.nextRxSequence())
            {
                counters.recvDropOldSeq.incrementOrdered();
                return false;
            }
            if (firstSession)
            {
                // a peer retransmits only what it sent on an earlier connection, and this stack had none with
                // it: the frame was meant for an earlier process at this address (a kernel peer resends its
                // unacked messages before it has seen the new generation)
                counters.recvDropStale.incrementOrdered();
                return false;
            }
        }
        acks.accept(sequence);
        return true;
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
     * The peer restarted: drops every message sent to the old process (it may have delivered them; resending
     * would deliver them twice or to a stranger), numbers the never-sent rest from 1 as for a new connection,
     * and forgets the old process's sequence and acks.
     */
    private void forgetOldIncarnation(final int oldGeneration, final int newGeneration)
    {
        final int sent = queue.sentCount();
        final long flushedBefore = counters.sendFlushedPeerRestart.get();
        queue.removeIf(
            (index, message) -> index < sent || message.cancelled || (message.flags & RdsHeader.FLAG_RETRANSMITTED) != 0,
            this::releaseFlushed);
        nextTxSequence = 1;
        for (int i = 0; i < queue.size(); i++)
        {
            final Message message = queue.get(i);
            message.sequence = nextTxSequence++;
            message.stamped = false;
        }
        highestSequenceSent = 0;
        highestAck = 0;
        pathSequenceFloor = 0;
        acks.reset();
        counters.connPeerRestart.incrementOrdered();
        LOG.info("{} peer restarted (generation {} -> {}): {} messages sent to the old process dropped", this,
            Integer.toHexString(oldGeneration), Integer.toHexString(newGeneration),
            counters.sendFlushedPeerRestart.get() - flushedBefore);
    }

    private void releaseFlushed(final Message message)
    {
        if (!message.cancelled && message.socket != null)
        {
            counters.sendFlushedPeerRestart.incrementOrdered(); // an application's message, not a pong or probe
        }
        release(message);
    }

    private void release(final Message message)
    {
        if (message.cancelled)
        {
            host.releaseMessage(message);
        }
        else
        {
            host.releaseSent(message);
        }
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
        if (ack > highestSequenceSent)
        {
            counters.recvDropBadAck.incrementOrdered();
            return;
        }
        highestAck = Math.max(highestAck, ack);
        Message message;
        while ((message = queue.pollAcked(ack, frames.inProgress() == ControlFrames.Kind.DATA)) != null)
        {
            counters.sendDropAcked.incrementOrdered();
            release(message);
        }
    }

    /**
     * The heartbeat: a sequenced probe, answered by a pong to port 1 that any RDS peer sends; to a kernel peer
     * that must not see probes, an empty message to port 1 with ACK_REQUIRED, which it drops and acks.
     */
    private void queueHeartbeat()
    {
        if (handshake.kind() == PeerKind.KERNEL_WITHOUT_PROBES)
        {
            queueControl(RdsHeader.PROBE_PORT, RdsHeader.PROBE_PORT).flags = RdsHeader.FLAG_ACK_REQUIRED;
        }
        else
        {
            queueControl(RdsHeader.PROBE_PORT, 0);
        }
        counters.sendHeartbeat.incrementOrdered();
    }

    /**
     * Queues an empty sequenced message of the stack's own (a pong, a heartbeat).
     *
     * @param sport its source port.
     * @param dport its destination port.
     * @return the message, queued.
     */
    Message queueControl(final int sport, final int dport)
    {
        final Message message = host.pool().acquire(0);
        message.sport = sport;
        message.dport = dport;
        enqueue(message);
        return message;
    }

    /** Loopback: this side's received frames were acked implicitly, so no ack frame is due. */
    void markAckedImplicitly()
    {
        acks.ackSent(acks.ackValue());
    }

    @Override
    public String toString()
    {
        return "Connection[" + connection.localAddress().getHostAddress() + "->" +
            connection.remoteAddress().getHostAddress() + " " + transport.name() + " " + state + "]";
    }
}
