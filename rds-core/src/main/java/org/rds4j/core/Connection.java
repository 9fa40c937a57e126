package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.spi.Addresses;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The RDS connection of one node pair on one transport, shared by every socket of the stack: the state
 * machine, sequence numbers, cumulative acks, the send queue with its retransmission list, and the frames a
 * transport must send (congestion map first, data, ack-only).
 * <p>
 * Every new transport connection starts with a handshake: after the congestion map each side sends a probe
 * (port 1 to port 0, unsequenced) carrying its generation number, and sends nothing else until the peer's
 * probe, or a pong to port 1, tells the peer's generation. A changed generation is a restarted peer: what was
 * sent to the old process is dropped and sequencing starts again, so no stale retransmission reaches the new
 * one. An UP connection that receives no frame for the heartbeat interval queues a probe, which the peer
 * answers with a pong; no frame for the heartbeat timeout drops the connection (a silent or half-open peer).
 * <p>
 * A peer whose handshake carries no generation is kernel RDS. Over TCP the kernel sends no RDS acks and counts
 * what TCP acked as delivered; the connection asks its path to do the same ({@link TransportPath#reportTransportAcks}).
 * Later connections to that peer skip the unsequenced probe, which would move the kernel's next expected
 * sequence back to 1 and make it deliver retransmissions it already has.
 * <p>
 * Agent thread only. Transports call {@link #onConnected}, {@link #onConnectFailed}, {@link #onPathDown},
 * {@link #onFrame}, {@link #fillTransmit} and {@link #onTransmitted}.
 */
public final class Connection implements ConnectionPath
{
    private static final Logger LOG = LoggerFactory.getLogger(Connection.class);

    private static final int NONE = 0;
    private static final int CONG = 1;
    private static final int ACK = 2;
    private static final int DATA = 3;
    private static final int PROBE = 4;
    /** The paths rds4j offers in the handshake: one connection per node pair. */
    private static final int NPATHS = 1;

    private final StackAgent agent;
    private final StackCounters counters;
    final LocalEndpoint local;
    private final InetAddress remote;
    private final Transport transport;
    private final CongestionMap peerMap;
    private final SendQueue queue = new SendQueue();
    private final AckRequestBudget ackBudget = new AckRequestBudget();
    private final ReconnectBackoff backoff;
    private final Int2ObjectHashMap<InetSocketAddress> senderAddresses = new Int2ObjectHashMap<>();

    private volatile ConnectionState state = ConnectionState.DOWN;
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
    private volatile long nextRxSequence;
    private long lastAckSent;
    private boolean ackUrgent;
    /** The duty cycle in which the peer asked for an ack: the ack waits for the next, where a reply can carry it. */
    private long ackUrgentCycle;
    private long ackDeadlineNs = Long.MAX_VALUE;
    /** A transport asked for an ack-only frame whatever the ack state (IB: to carry a credit update). */
    private boolean controlFrameWanted;

    private final ByteBuffer congFrame = ByteBuffer.allocateDirect(RdsHeader.LENGTH + CongestionMap.BYTES);
    private final UnsafeBuffer congBuffer = new UnsafeBuffer(congFrame);
    private long congVersionSent = -1;
    private long congVersionFilled;
    private final ByteBuffer ackFrame = ByteBuffer.allocateDirect(RdsHeader.LENGTH);
    private final UnsafeBuffer ackBuffer = new UnsafeBuffer(ackFrame);
    private long ackFilled;
    private int inProgress = NONE;

    private final ByteBuffer probeFrame = ByteBuffer.allocateDirect(RdsHeader.LENGTH);
    private final UnsafeBuffer probeBuffer = new UnsafeBuffer(probeFrame);
    /** The peer's generation number; 0 until a handshake tells it. */
    private int peerGeneration;
    private boolean probeDue;
    private boolean handshakeDone;
    /** The peer's handshake carried no generation (kernel RDS) and the path counts transport acks as RDS acks. */
    private boolean transportAcked;
    /**
     * The transport knew at connect time that the peer is kernel RDS, which takes handshake frames only over
     * TCP (over IB, Linux 6.1 warns on every one and faults on a changed generation): no probe, no handshake
     * extensions; a heartbeat is an empty message to port 1 that asks for an ack.
     */
    private boolean kernelWithoutHandshake;
    private long handshakeDeadlineNs;
    private long lastFrameReceivedNs;
    private long nextHeartbeatNs;

    Connection(
        final StackAgent agent,
        final LocalEndpoint local,
        final InetAddress remote,
        final Transport transport,
        final CongestionMap peerMap)
    {
        this.agent = agent;
        this.counters = agent.counters;
        this.local = local;
        this.remote = remote;
        this.transport = transport;
        this.peerMap = peerMap;
        this.backoff = new ReconnectBackoff(
            agent.config.reconnectDelayMin().toNanos(), agent.config.reconnectDelayMax().toNanos());
        congFrame.limit(0);
        ackFrame.limit(0);
        probeFrame.limit(0);
    }

    /** @return the local address of the node pair. */
    @Override
    public InetAddress localAddress()
    {
        return local.address;
    }

    /** @return the peer's address. */
    @Override
    public InetAddress remoteAddress()
    {
        return remote;
    }

    /** @return the transport carrying this connection. */
    public Transport transport()
    {
        return transport;
    }

    /** @return the current state; any thread may read it. */
    public ConnectionState state()
    {
        return state;
    }

    @Override
    public boolean isConnecting()
    {
        return state == ConnectionState.CONNECTING;
    }

    @Override
    public boolean isUp()
    {
        return state == ConnectionState.UP;
    }

    long nextTxSequence()
    {
        return nextTxSequence;
    }

    long nextRxSequence()
    {
        return nextRxSequence;
    }

    int queuedMessages()
    {
        return queue.size();
    }

    // ---------------------------------------------------------------- state machine

    /**
     * The transport established the connection.
     *
     * @param newPath the live transport connection.
     */
    @Override
    public void onConnected(final TransportPath newPath)
    {
        if (state == ConnectionState.UP)
        {
            throw new IllegalStateException(this + " is already up");
        }
        path = newPath;
        pathSequenceFloor = highestSequenceSent;
        state = ConnectionState.UP;
        backoff.reset();
        congVersionSent = -1;
        inProgress = NONE;
        final long now = agent.nowNs();
        lastFrameReceivedNs = now;
        nextHeartbeatNs = now + agent.heartbeatIntervalNs;
        if (transportAcked && !newPath.reportTransportAcks(true))
        {
            transportAcked = false;
        }
        kernelWithoutHandshake = newPath.peerIsKernel();
        if (kernelWithoutHandshake)
        {
            LOG.info("{}: the transport says the peer is kernel RDS: no handshake; heartbeats ask for an ack", this);
        }
        handshakeDone = !transport.startsWithHandshake() || transportAcked || kernelWithoutHandshake;
        probeDue = !handshakeDone;
        handshakeDeadlineNs = now + agent.config.connectTimeout().toNanos();
        // an ack may have been lost with the old connection: repeat it at once
        ackUrgent = ackValue() > 0;
        ackUrgentCycle = agent.cycle() - 1;
        controlFrameWanted = false;
        counters.connUp.incrementOrdered();
        LOG.info("{} up", this);
        agent.onPeerUp(this);
    }

    /**
     * An attempt to connect failed; another follows after the backoff delay.
     *
     * @param reason for the log.
     */
    @Override
    public void onConnectFailed(final String reason)
    {
        if (state != ConnectionState.CONNECTING)
        {
            return;
        }
        state = ConnectionState.DOWN;
        reconnectAtNs = agent.nowNs() + backoff.nextDelayNs();
        counters.connAttemptFailed.incrementOrdered();
        LOG.debug("{} connect failed: {}", this, reason);
    }

    /**
     * A live path failed (ERROR) or was closed by the peer; it is torn down, unacked messages are queued for
     * retransmission and a reconnect is scheduled.
     *
     * @param failed the path that failed; ignored if it is no longer this connection's path.
     * @param reason for the log.
     */
    @Override
    public void onPathDown(final TransportPath failed, final String reason)
    {
        pathDown(failed, reason, false);
    }

    /**
     * As {@link #onPathDown}, for a peer that broke the protocol or went silent (a bad frame, a frame left
     * incomplete, an unanswered handshake or heartbeat): the one log line is a warning.
     *
     * @param failed the path that failed; ignored if it is no longer this connection's path.
     * @param reason what the peer did, for the log.
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
        state = ConnectionState.ERROR;
        if (misbehaved)
        {
            LOG.warn("{} dropped: {}", this, reason);
        }
        else
        {
            LOG.info("{} down: {}", this, reason);
        }
        disconnect();
        firstSession = false;
        counters.connReset.incrementOrdered();
        reconnectWanted = initiatesReconnect();
        reconnectAtNs = agent.nowNs() + backoff.nextDelayNs();
        agent.onPeerDown(this);
    }

    /**
     * The connect rule of the kernel: of two nodes the one with the lower address connects, so that they do not
     * race; the higher one waits unless it has data to send. A loopback connection's both ends are this stack.
     */
    private boolean initiatesReconnect()
    {
        return agent.isLoopback(transport) || Addresses.compare(local.address, remote) < 0;
    }

    /**
     * The peer asked to be connected to (a TCP poke from a higher address): connect now if down,
     * skipping the backoff delay.
     */
    @Override
    public void connectIfDown()
    {
        if (state == ConnectionState.DOWN)
        {
            reconnectWanted = true;
            reconnectAtNs = agent.nowNs();
        }
    }

    /**
     * Drops the path if any, as a path failure: UP to DOWN, unacked messages requeued, reconnect scheduled.
     * For {@link #onPeerConnectedAgain}, the stack's drop command and tests.
     *
     * @param reason for the log.
     */
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

    private void disconnect()
    {
        state = ConnectionState.DISCONNECTING;
        final TransportPath old = path;
        path = null;
        old.close();
        requeueForRetransmission();
        state = ConnectionState.DOWN;
    }

    private void requeueForRetransmission()
    {
        final int resent = queue.sentCount() + (inProgress == DATA ? 1 : 0);
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
        queue.removeIf((index, message) -> message.cancelled, agent::releaseMessage);
        queue.markAllUnsent();
        inProgress = NONE;
        congFrame.limit(0);
        ackFrame.limit(0);
        probeFrame.limit(0);
    }

    /**
     * Agent duty: connects when due, transmits when up.
     *
     * @return work done.
     */
    int doWork(final long nowNs)
    {
        final ConnectionState current = state;
        if (current == ConnectionState.UP)
        {
            if (nowNs - lastFrameReceivedNs >= agent.heartbeatTimeoutNs || (!handshakeDone && nowNs >= handshakeDeadlineNs))
            {
                return dropSilentPeer(nowNs);
            }
            if (handshakeDone && nowNs - nextHeartbeatNs >= 0)
            {
                nextHeartbeatNs = nowNs + agent.heartbeatIntervalNs;
                if (nowNs - lastFrameReceivedNs >= agent.heartbeatIntervalNs)
                {
                    queueProbe();
                }
            }
            return hasOutput(nowNs) ? path.transmit() : 0;
        }
        if (current == ConnectionState.DOWN && nowNs >= reconnectAtNs && (reconnectWanted || queue.size() > 0))
        {
            state = ConnectionState.CONNECTING;
            transport.connect(this);
            return 1;
        }
        return 0;
    }

    /**
     * Agent: the latest time the next duty cycle must run for this connection if nothing wakes the agent: the
     * heartbeat's next probe or timeout when it is up with nothing to send, unacked or to ack; the reconnect time
     * when it is down and will reconnect; {@code nowNs} (keep polling) in every other state.
     */
    long idleDeadlineNs(final long nowNs)
    {
        final ConnectionState current = state;
        if (current == ConnectionState.UP)
        {
            final boolean ackOwed = !transportAcked && (ackUrgent || lastAckSent < ackValue());
            if (!handshakeDone || queue.size() > 0 || ackOwed || hasOutput(nowNs))
            {
                return nowNs;
            }
            return Math.min(nextHeartbeatNs, lastFrameReceivedNs + agent.heartbeatTimeoutNs);
        }
        if (current == ConnectionState.DOWN)
        {
            return reconnectWanted || queue.size() > 0 ? reconnectAtNs : Transport.NO_DEADLINE;
        }
        return nowNs;
    }

    private int dropSilentPeer(final long nowNs)
    {
        final String reason;
        if (handshakeDone)
        {
            counters.connHeartbeatTimeout.incrementOrdered();
            reason = "no frame from the peer for " + (nowNs - lastFrameReceivedNs) / 1_000_000 + " ms";
        }
        else
        {
            counters.connHandshakeTimeout.incrementOrdered();
            reason = "the peer did not answer the handshake probe";
        }
        pathDown(path, reason, true);
        return 1;
    }

    /** Closes the path and frees every queued message; the stack is closing. */
    void close()
    {
        if (path != null)
        {
            path.close();
            path = null;
        }
        state = ConnectionState.DOWN;
        Message message;
        while ((message = queue.pollHead()) != null)
        {
            if (message.cancelled)
            {
                agent.releaseMessage(message);
            }
            else
            {
                agent.releaseSent(message);
            }
        }
    }

    // ---------------------------------------------------------------- sending

    /** Appends a message to the send queue with the next sequence number. */
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
        final int writing = inProgress == DATA ? queue.sentCount() : -1;
        int dropped = 0;
        if (writing >= 0)
        {
            final Message message = queue.get(writing);
            if (message.socket == socket && (dport < 0 || message.dport == dport) && !message.cancelled)
            {
                message.cancelled = true;
                agent.releaseBytes(message);
                dropped++;
            }
        }
        dropped += queue.removeIf(
            (index, message) -> index != writing && message.socket == socket && (dport < 0 || message.dport == dport),
            agent::releaseSent);
        return dropped;
    }

    private boolean hasOutput(final long nowNs)
    {
        return inProgress != NONE || congVersionSent != local.congestionMap.version() || probeDue ||
            (handshakeDone && (queue.hasUnsent() || controlFrameWanted || isAckDue(nowNs)));
    }

    /**
     * Asks for an ack-only frame on the next {@link #fillTransmit} after the handshake, even if no ack is due
     * (its ack may then be 0), unless a data frame goes first. For a transport that must send something of
     * its own in a header (IB: a credit update). One frame however often it is asked before it is sent.
     */
    @Override
    public void requestControlFrame()
    {
        controlFrameWanted = true;
    }

    /**
     * @return the cumulative ack this side would send now: the highest sequence received, 0 if none (IB puts it
     *         in the connection's private data).
     */
    @Override
    public long ackSequence()
    {
        return ackValue();
    }

    /**
     * For a transport that must know how far the peer has read what it wrote on the current path (TCP lends its
     * send pages to the socket, and may reuse one only once the peer has read it).
     *
     * @return the highest sequence the peer has acked that was first sent on the current path, so the peer has
     *         read the path's bytes up to the end of that frame and of every frame before it; 0 if there is none
     *         yet. A retransmitted frame proves nothing: the peer may have acked it on an earlier path.
     */
    @Override
    public long sequenceReadOnPath()
    {
        return highestAck > pathSequenceFloor ? highestAck : 0;
    }

    private long ackValue()
    {
        return nextRxSequence == 0 ? 0 : nextRxSequence - 1;
    }

    /**
     * An ack is due when the peer asked for one (even a repeat: its retransmission shows it missed ours), from
     * the duty cycle after the one that received the request, or when a received message has waited
     * {@code ackDelay} without a piggybacked ack. Waiting one cycle lets a reply the application sends at once
     * (an echo, a response) carry the ack, instead of an ack-only frame going ahead of it on every eighth
     * request; the cycle that received the request did work, so the next follows without idling.
     */
    private boolean isAckDue(final long nowNs)
    {
        if (transportAcked)
        {
            // kernel RDS over TCP ignores RDS acks, and takes an ack-only frame's sequence 0 as the next in sequence:
            // its next expected sequence would fall back to 1 and it would deliver our retransmissions again
            return false;
        }
        return (ackUrgent && ackValue() > 0 && agent.cycle() != ackUrgentCycle) || (lastAckSent < ackValue() && nowNs >= ackDeadlineNs);
    }

    /**
     * Gives a transport the frames to send next, in order: the frame it was part way through, the congestion
     * map if it changed (always first on a new connection), the handshake probe on a new connection, then,
     * once the handshake is done, data frames, and an ack-only frame when an ack is due and no data frame
     * carries it. Frames are positioned from their first unsent byte.
     *
     * @param frames where to put them.
     * @param max    most frames to give.
     * @return the number of frames put in {@code frames}, from index 0.
     */
    @Override
    public int fillTransmit(final ByteBuffer[] frames, final int max)
    {
        int count = 0;
        int nextData = queue.sentCount();
        boolean dataGiven = false;
        switch (inProgress)
        {
            case CONG: frames[count++] = congFrame; break;
            case ACK: frames[count++] = ackFrame; break;
            case PROBE: frames[count++] = probeFrame; break;
            case DATA: frames[count++] = queue.get(nextData++).frame; dataGiven = true; break;
            default: break;
        }
        if (count < max && inProgress != CONG && congVersionSent != local.congestionMap.version())
        {
            congVersionFilled = local.congestionMap.version();
            RdsHeader.write(congBuffer, 0, 0, 0, CongestionMap.BYTES, 0, 0, RdsHeader.FLAG_CONG_BITMAP, 0);
            stampChecksum(congBuffer);
            local.congestionMap.copyTo(congBuffer, RdsHeader.LENGTH);
            congFrame.limit(congFrame.capacity()).position(0);
            frames[count++] = congFrame;
            counters.congUpdateQueued.incrementOrdered();
        }
        if (count < max && probeDue)
        {
            probeDue = false;
            RdsHeader.write(probeBuffer, 0, 0, 0, 0, RdsHeader.PROBE_PORT, 0, 0, 0);
            RdsHeader.writeHandshakeExtensions(probeBuffer, 0, NPATHS, agent.generation);
            stampChecksum(probeBuffer);
            probeFrame.limit(RdsHeader.LENGTH).position(0);
            frames[count++] = probeFrame;
        }
        if (!handshakeDone)
        {
            return count;
        }
        final long ack = ackValue();
        while (count < max && nextData < queue.size())
        {
            frames[count++] = stampData(queue.get(nextData++), ack);
            dataGiven = true;
            controlFrameWanted = false; // the data frame's header carries what the transport wanted to send
        }
        if (count < max && !dataGiven && inProgress != ACK && (controlFrameWanted || isAckDue(agent.nowNs())))
        {
            controlFrameWanted = false;
            ackFilled = ack;
            RdsHeader.write(ackBuffer, 0, 0, ack, 0, 0, 0, 0, 0);
            stampChecksum(ackBuffer);
            ackFrame.limit(RdsHeader.LENGTH).position(0);
            frames[count++] = ackFrame;
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
        if ((message.sport == RdsHeader.PROBE_PORT || message.dport == RdsHeader.PROBE_PORT) && !kernelWithoutHandshake)
        {
            RdsHeader.writeHandshakeExtensions(message.buffer, 0, NPATHS, agent.generation);
        }
        stampChecksum(message.buffer);
        return message.frame;
    }

    private void stampChecksum(final UnsafeBuffer header)
    {
        if (transport.checksumsHeaders())
        {
            RdsHeader.writeChecksum(header, 0);
        }
    }

    /**
     * Tells how far a write of frames from {@link #fillTransmit} went: frames with nothing remaining are done;
     * the first with bytes remaining is resumed by the next fill (a data frame not begun counts as not sent:
     * it can still be cancelled, and is not marked RETRANSMITTED if the connection drops).
     *
     * @param frames the array given to {@link #fillTransmit}.
     * @param count  the count it returned.
     * @return the number of frames completed.
     */
    @Override
    public int onTransmitted(final ByteBuffer[] frames, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final ByteBuffer frame = frames[i];
            frames[i] = null;
            if (frame.hasRemaining())
            {
                final int kind = frame == congFrame ? CONG : frame == ackFrame ? ACK : frame == probeFrame ? PROBE : DATA;
                // a data frame not begun is simply not sent (the next fill gives it again); a control frame given is
                // in progress either way, as giving it consumed what it carries
                inProgress = kind == DATA && frame.position() == 0 ? NONE : kind;
                for (int j = i + 1; j < count; j++)
                {
                    frames[j] = null;
                }
                return i;
            }
            if (frame == congFrame)
            {
                congVersionSent = congVersionFilled;
            }
            else if (frame == ackFrame)
            {
                ackSent(ackFilled);
                counters.sendAckOnly.incrementOrdered();
            }
            else if (frame == probeFrame)
            {
                counters.sendProbe.incrementOrdered();
            }
            else
            {
                final Message message = queue.get(queue.sentCount());
                queue.markSent();
                highestSequenceSent = Math.max(highestSequenceSent, message.sequence);
                ackSent(RdsHeader.ack(message.buffer, 0));
                counters.sendTransmitted.incrementOrdered();
            }
        }
        inProgress = NONE;
        return count;
    }

    private void ackSent(final long ack)
    {
        lastAckSent = Math.max(lastAckSent, ack);
        if (ack >= ackValue())
        {
            ackUrgent = false;
            ackDeadlineNs = Long.MAX_VALUE;
        }
    }

    // ---------------------------------------------------------------- receiving

    /**
     * A transport received a complete frame that passed {@link RdsHeader#validate}.
     *
     * @param buffer holds the frame.
     * @param offset of its header; the payload follows it.
     */
    @Override
    public void onFrame(final DirectBuffer buffer, final int offset)
    {
        lastFrameReceivedNs = agent.nowNs();
        if (!handshakeDone)
        {
            // a peer that sends is alive: a kernel answers the probe only after the data it had queued for us
            handshakeDeadlineNs = lastFrameReceivedNs + agent.config.connectTimeout().toNanos();
        }
        if (RdsHeader.isCongestionUpdate(buffer, offset))
        {
            counters.congUpdateReceived.incrementOrdered();
            agent.onPeerCongestionMap(remote, peerMap, buffer, offset + RdsHeader.LENGTH);
            return;
        }
        final long ack = RdsHeader.ack(buffer, offset);
        if (ack != 0)
        {
            onAck(ack);
        }
        if (RdsHeader.isAckOnly(buffer, offset))
        {
            counters.recvAckOnly.incrementOrdered();
            return;
        }

        final long sequence = RdsHeader.sequence(buffer, offset);
        // sequence 0 marks an unsequenced frame (the handshake probe): it moves neither acks nor nextRx
        if (sequence != 0 && !acceptSequence(sequence, RdsHeader.flags(buffer, offset)))
        {
            return;
        }

        final int sport = RdsHeader.sport(buffer, offset);
        final int dport = RdsHeader.dport(buffer, offset);
        if (dport == 0)
        {
            if (sport == RdsHeader.PROBE_PORT)
            {
                onHandshake(buffer, offset);
                if (sequence != 0)
                {
                    // a heartbeat or a kernel's probe, which waits for the pong; rds4j's handshake probe needs none
                    queueControl(0, RdsHeader.PROBE_PORT);
                }
            }
            else if (sport != 0)
            {
                counters.recvPing.incrementOrdered();
                queuePong(sport);
            }
            return;
        }
        if (dport == RdsHeader.PROBE_PORT)
        {
            onHandshake(buffer, offset);
            return;
        }
        final RdsSocketImpl socket = local.sockets.get(dport);
        if (socket == null)
        {
            counters.recvDropNoSock.incrementOrdered();
            return;
        }
        agent.deliver(socket, senderAddress(sport), buffer, offset + RdsHeader.LENGTH,
            (int)RdsHeader.length(buffer, offset));
    }

    /** Applies the receive rules to a sequenced frame; false if it is an old retransmission, to drop. */
    private boolean acceptSequence(final long sequence, final int flags)
    {
        if ((flags & RdsHeader.FLAG_ACK_REQUIRED) != 0)
        {
            counters.recvAckRequired.incrementOrdered();
            if (!ackUrgent)
            {
                ackUrgent = true;
                ackUrgentCycle = agent.cycle();
            }
        }
        else if (ackDeadlineNs == Long.MAX_VALUE)
        {
            ackDeadlineNs = agent.nowNs() + agent.ackDelayNs;
        }
        if ((flags & RdsHeader.FLAG_RETRANSMITTED) != 0)
        {
            if (sequence < nextRxSequence)
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
        nextRxSequence = sequence + 1;
        return true;
    }

    /**
     * A probe or its pong told the peer's generation (0 if it carries none, as the kernel's 6.1 probes): the
     * handshake is done; a generation other than the one known means the peer restarted.
     */
    private void onHandshake(final DirectBuffer buffer, final int offset)
    {
        counters.recvProbe.incrementOrdered();
        final int generation = RdsHeader.generation(buffer, offset);
        final int previous = peerGeneration;
        if (generation != 0)
        {
            peerGeneration = generation;
        }
        if (previous != 0 && generation != 0 && generation != previous)
        {
            if (handshakeDone)
            {
                // mid-connection: stop the transport before the queue is rewritten under it
                onPathDown(path, "peer restarted");
            }
            forgetOldIncarnation(previous, generation);
        }
        if (state == ConnectionState.UP)
        {
            learnAckRule(generation);
        }
        if (!handshakeDone && state == ConnectionState.UP)
        {
            handshakeDone = true;
            LOG.debug("{} handshake done, peer generation {}", this, Integer.toHexString(generation));
        }
    }

    /**
     * A handshake without a generation comes from kernel RDS, which over TCP sends no RDS acks: its delivery rule
     * (what TCP acked is delivered) is applied if the path can tell. One with a generation comes from a peer
     * that acks.
     */
    private void learnAckRule(final int generation)
    {
        final boolean noAcks = generation == 0;
        if (noAcks != transportAcked && (path.reportTransportAcks(noAcks) || !noAcks))
        {
            transportAcked = noAcks;
            LOG.info("{}: {}", this, noAcks ?
                "the peer is kernel RDS (no generation in its handshake): messages count as delivered once the transport acked them" :
                "the peer sends RDS acks");
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
        nextRxSequence = 0;
        lastAckSent = 0;
        ackUrgent = false;
        ackDeadlineNs = Long.MAX_VALUE;
        counters.connPeerRestart.incrementOrdered();
        LOG.info("{} peer restarted (generation {} -> {}): {} messages sent to the old process dropped", this,
            Integer.toHexString(oldGeneration), Integer.toHexString(newGeneration),
            counters.sendFlushedPeerRestart.get() - flushedBefore);
    }

    private void releaseFlushed(final Message message)
    {
        if (message.cancelled)
        {
            agent.releaseMessage(message);
            return;
        }
        if (message.socket != null)
        {
            counters.sendFlushedPeerRestart.incrementOrdered(); // an application's message, not a pong or probe
        }
        agent.releaseSent(message);
    }

    private void onAck(final long ack)
    {
        if (ack > highestSequenceSent)
        {
            // an ack of sequences never sent on this connection: from an earlier incarnation of one side
            // (a restarted process starts again at 1); applying it would free messages the peer never had
            counters.recvDropBadAck.incrementOrdered();
            return;
        }
        highestAck = Math.max(highestAck, ack);
        Message message;
        while ((message = queue.pollAcked(ack, inProgress == DATA)) != null)
        {
            counters.sendDropAcked.incrementOrdered();
            if (message.cancelled)
            {
                agent.releaseMessage(message);
            }
            else
            {
                agent.releaseSent(message);
            }
        }
    }

    private void queuePong(final int pingPort)
    {
        queueControl(0, pingPort);
        counters.sendPong.incrementOrdered();
    }

    /**
     * The heartbeat: a sequenced probe, answered by a pong to port 1 that any RDS peer sends; to a kernel peer
     * that must not see probes, an empty message to port 1 with ACK_REQUIRED, which it drops and acks.
     */
    private void queueProbe()
    {
        if (kernelWithoutHandshake)
        {
            queueControl(RdsHeader.PROBE_PORT, RdsHeader.PROBE_PORT).flags = RdsHeader.FLAG_ACK_REQUIRED;
        }
        else
        {
            queueControl(RdsHeader.PROBE_PORT, 0);
        }
        counters.sendHeartbeat.incrementOrdered();
    }

    private Message queueControl(final int sport, final int dport)
    {
        final Message message = agent.pool.acquire(0);
        message.sport = sport;
        message.dport = dport;
        enqueue(message);
        return message;
    }

    private InetSocketAddress senderAddress(final int sport)
    {
        InetSocketAddress address = senderAddresses.get(sport);
        if (address == null)
        {
            address = new InetSocketAddress(remote, sport);
            senderAddresses.put(sport, address);
        }
        return address;
    }

    /**
     * An ack the peer gave outside a frame: loopback acks everything it hands over at once; IB carries the
     * peer's ack sequence in its connect private data. Applied as a received frame's ack is.
     *
     * @param ack the peer's cumulative ack.
     */
    @Override
    public void onPeerAck(final long ack)
    {
        onAck(ack);
    }

    /** Loopback: this side's received frames were acked implicitly, so no ack frame is due. */
    void markAckedImplicitly()
    {
        ackSent(ackValue());
    }

    @Override
    public String toString()
    {
        return "Connection[" + local.address.getHostAddress() + "->" + remote.getHostAddress() + " " +
            transport.name() + " " + state + "]";
    }
}
