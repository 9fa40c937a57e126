package org.rds4j.core;

import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The send half of a {@link ConnPath}, as the kernel's {@code send.c}: sequence numbers, the send queue with its
 * retransmission list, the ack-request budget, the frames given to the transport and how far it wrote them,
 * and the peer's acks. Agent thread only, except {@link #nextTxSequence()}.
 */
final class PathSender
{
    /** The paths rds4j offers in the handshake: one per node pair. */
    static final int NPATHS = 1;

    private final PathHost host;
    private final StackCounters counters;
    private final boolean checksums;
    private final ReceiveAcks acks;
    private final SendQueue queue = new SendQueue();
    private final AckRequestBudget ackBudget = new AckRequestBudget();
    private final ControlFrames frames;

    /** Written by the agent with release stores (a volatile store is a full fence, per message), read by it plainly. */
    private final AtomicLong nextTxSequence = new AtomicLong(1);
    /** Highest sequence fully handed to a transport; an ack above it acks something never sent. */
    private long highestSequenceSent;
    /** Highest ack the peer sent (at most {@link #highestSequenceSent}). */
    private long highestAck;
    /** {@link #highestSequenceSent} when the current path came up: a higher sequence was only ever sent on it. */
    private long pathSequenceFloor;

    /**
     * @param host      the stack.
     * @param checksums the transport wants header checksums.
     * @param acks      the path's receive side, whose ack every frame carries.
     */
    PathSender(final PathHost host, final boolean checksums, final ReceiveAcks acks)
    {
        this.host = host;
        this.counters = host.counters();
        this.checksums = checksums;
        this.acks = acks;
        this.frames = new ControlFrames(checksums);
    }

    /**
     * Frames a sending thread appended to the transport itself ({@link ConnPath#append}), oldest first, by
     * sequence: their owners, payload bytes, ports and places in the transport's memory, until acked. A cancelled
     * one keeps its place with no owner (its bytes are released at the cancel, its sequence is a gap). At most
     * {@link #APPENDED_MAX} at once; then messages go the usual way.
     */
    private static final int APPENDED_MAX = 1 << 15;
    private static final int APPENDED_FIRST = 64;
    private long[] appendedSequences;
    private long[] appendedPositions;
    private int[] appendedLengths;
    private int[] appendedPorts;
    private RdsSocketImpl[] appendedSockets;
    /** The tables' length minus one (a power of two): made at the first append, doubled as needed. */
    private int appendedMask = -1;
    private long appendedHead;
    private long appendedTail;
    /** The last appended frame the transport began to send; those after it are still in its stage. */
    private long lastAppendedFlushed;
    /** Frames appended since the transport last began to send them ({@link #appendedFlushed}). */
    private int appendedUnflushed;

    /** @return whether a frame may be appended now: nothing of the queue waits to be sent before it, and room. */
    boolean mayAppend()
    {
        return !queue.hasUnsent() && frames.inProgress() == ControlFrames.Kind.NONE && appendedRoom();
    }

    /** Makes the tables at the first append and doubles them when full, up to {@link #APPENDED_MAX} frames. */
    private boolean appendedRoom()
    {
        final int count = (int)(appendedTail - appendedHead);
        if (count <= appendedMask)
        {
            return true;
        }
        final int length = appendedMask < 0 ? APPENDED_FIRST : (appendedMask + 1) * 2;
        if (length > APPENDED_MAX)
        {
            return false;
        }
        final long[] sequences = new long[length];
        final long[] positions = new long[length];
        final int[] lengths = new int[length];
        final int[] ports = new int[length];
        final RdsSocketImpl[] sockets = new RdsSocketImpl[length];
        for (int i = 0; i < count; i++)
        {
            final int from = index(appendedHead + i);
            sequences[i] = appendedSequences[from];
            positions[i] = appendedPositions[from];
            lengths[i] = appendedLengths[from];
            ports[i] = appendedPorts[from];
            sockets[i] = appendedSockets[from];
        }
        appendedSequences = sequences;
        appendedPositions = positions;
        appendedLengths = lengths;
        appendedPorts = ports;
        appendedSockets = sockets;
        appendedMask = length - 1;
        appendedHead = 0;
        appendedTail = count;
        return true;
    }

    private int index(final long appendedIndex)
    {
        return (int)(appendedIndex & appendedMask);
    }

    /**
     * @param flags  the flags the sender chose (ACK_REQUIRED past half its send buffer).
     * @param length payload bytes.
     * @return the flags of a frame about to be appended, with ACK_REQUIRED where the ack-request budget runs out.
     */
    int appendFlags(final int flags, final int length)
    {
        final int all = ackBudget.charge(length) ? flags | RdsHeader.FLAG_ACK_REQUIRED : flags;
        if ((all & RdsHeader.FLAG_ACK_REQUIRED) != 0)
        {
            counters.sendAckRequired.incrementOrdered();
        }
        return all;
    }

    /** @return the sequence a frame about to be appended gets ({@link #appended} takes it). */
    long appendSequence()
    {
        return nextTxSequence.getPlain();
    }

    /**
     * A frame with the sequence of {@link #appendSequence} was appended.
     *
     * @param socket   its owner.
     * @param length   payload bytes.
     * @param ports    its source port in the high 16 bits, its destination port in the low.
     * @param position its place in the transport's memory.
     */
    void appended(final RdsSocketImpl socket, final int length, final int ports, final long position)
    {
        final int index = index(appendedTail++);
        appendedSequences[index] = takeSequence();
        appendedPositions[index] = position;
        appendedLengths[index] = length;
        appendedPorts[index] = ports;
        appendedSockets[index] = socket;
        appendedUnflushed++;
    }

    /** The transport began sending the appended frames up to {@code lastSequence}: they count as sent. */
    void appendedFlushed(final long lastSequence)
    {
        lastAppendedFlushed = lastSequence;
        highestSequenceSent = Math.max(highestSequenceSent, lastSequence);
        counters.sendTransmitted.getAndAddOrdered(appendedUnflushed);
        appendedUnflushed = 0;
    }

    /** Frees the appended frames a cumulative ack covers: their bytes, one release per run of one socket's. */
    private void releaseAppended(final long ack)
    {
        RdsSocketImpl socket = null;
        long bytes = 0;
        int count = 0;
        while (appendedHead != appendedTail)
        {
            final int index = index(appendedHead);
            if (appendedSequences[index] > ack)
            {
                break;
            }
            final RdsSocketImpl owner = appendedSockets[index];
            if (owner != null)
            {
                if (owner != socket && socket != null)
                {
                    host.releaseAppendedBytes(socket, bytes);
                    bytes = 0;
                }
                socket = owner;
                bytes += appendedLengths[index];
                appendedSockets[index] = null;
                count++;
            }
            appendedHead++;
        }
        if (socket != null)
        {
            host.releaseAppendedBytes(socket, bytes);
        }
        counters.sendDropAcked.getAndAddOrdered(count);
    }

    /** Cancels a socket's appended frames (all sent: the caller flushed them), to one port or all; @return how many. */
    private int cancelAppended(final RdsSocketImpl socket, final int dport)
    {
        int dropped = 0;
        for (long i = appendedHead; i != appendedTail; i++)
        {
            final int index = index(i);
            if (appendedSockets[index] == socket && (dport < 0 || (appendedPorts[index] & 0xFFFF) == dport))
            {
                appendedSockets[index] = null;
                host.releaseAppendedBytes(socket, appendedLengths[index]);
                dropped++;
            }
        }
        return dropped;
    }

    /**
     * The path the frames were appended to went down: each one not cancelled becomes a message of the queue,
     * copied out of the transport's memory before it is released, in sequence order among the queue's, sent if
     * the transport had begun sending it ({@link #requeueForRetransmission} then marks it RETRANSMITTED).
     *
     * @param old the path, not yet closed.
     */
    void takeBackAppended(final TransportPath old)
    {
        final int count = (int)(appendedTail - appendedHead);
        if (count == 0)
        {
            return;
        }
        final Message[] taken = new Message[count]; // a path lost with frames in flight: rare, and allocating
        int kept = 0;
        int sent = 0;
        for (long i = appendedHead; i != appendedTail; i++)
        {
            final int index = index(i);
            final RdsSocketImpl socket = appendedSockets[index];
            if (socket == null)
            {
                continue;
            }
            final int length = appendedLengths[index];
            final Message message = host.pool().acquire(length);
            old.readAppended(appendedPositions[index], RdsHeader.LENGTH + length, message.buffer, 0);
            message.sequence = appendedSequences[index];
            message.socket = socket;
            message.sport = appendedPorts[index] >>> 16;
            message.dport = appendedPorts[index] & 0xFFFF;
            message.flags = RdsHeader.flags(message.buffer, 0);
            message.rewind();
            if (message.sequence <= lastAppendedFlushed)
            {
                sent++;
            }
            taken[kept++] = message;
            appendedSockets[index] = null;
        }
        appendedHead = appendedTail;
        appendedUnflushed = 0;
        queue.merge(taken, kept, sent);
    }

    /** Drops every appended frame, its bytes released; @return how many were not cancelled. */
    private int dropAppended()
    {
        int dropped = 0;
        for (long i = appendedHead; i != appendedTail; i++)
        {
            final int index = index(i);
            final RdsSocketImpl socket = appendedSockets[index];
            if (socket != null)
            {
                host.releaseAppendedBytes(socket, appendedLengths[index]);
                appendedSockets[index] = null;
                dropped++;
            }
        }
        appendedHead = appendedTail;
        appendedUnflushed = 0;
        return dropped;
    }

    /** @return the sequence the next new message gets; any thread may read it. */
    long nextTxSequence()
    {
        return nextTxSequence.get();
    }

    /** @return the messages queued or sent and unacked, appended frames included. */
    int queuedMessages()
    {
        return queue.size() + (int)(appendedTail - appendedHead);
    }

    /** A transport wants an ack-only frame sent once, unless a data frame goes first (IB: a credit update). */
    void requestControlFrame()
    {
        frames.requestAck();
    }

    /**
     * Appends a message to the send queue with the next sequence number.
     *
     * @param message the message.
     */
    void enqueue(final Message message)
    {
        message.sequence = takeSequence();
        message.rewind();
        queue.add(message);
    }

    private long takeSequence()
    {
        final long sequence = nextTxSequence.getPlain();
        nextTxSequence.setRelease(sequence + 1);
        return sequence;
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
        return dropped + cancelAppended(socket, dport);
    }

    /**
     * A transport connection came up.
     *
     * @param handshake the handshake probe goes after the congestion map.
     */
    void onPathUp(final boolean handshake)
    {
        pathSequenceFloor = highestSequenceSent;
        frames.onPathUp(handshake);
    }

    /**
     * The transport connection went: every message sent or part written is flagged RETRANSMITTED (and will ask
     * for an ack), a cancelled one is dropped, and the whole queue is unsent again.
     */
    void requeueForRetransmission()
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
     * The peer restarted: drops every message sent to the old process (it may have delivered them; resending
     * would deliver them twice or to a stranger) and numbers the never-sent rest from 1 as for a new connection.
     *
     * @return how many of the application's messages were dropped.
     */
    long forgetOldIncarnation()
    {
        final int sent = queue.sentCount();
        final long flushedBefore = counters.sendFlushedPeerRestart.get();
        counters.sendFlushedPeerRestart.getAndAddOrdered(dropAppended()); // taken back at the path's loss: none left
        queue.removeIf(
            (index, message) -> index < sent || message.cancelled || (message.flags & RdsHeader.FLAG_RETRANSMITTED) != 0,
            this::releaseFlushed);
        nextTxSequence.setRelease(1);
        for (int i = 0; i < queue.size(); i++)
        {
            final Message message = queue.get(i);
            message.sequence = takeSequence();
            message.stamped = false;
        }
        highestSequenceSent = 0;
        highestAck = 0;
        pathSequenceFloor = 0;
        return counters.sendFlushedPeerRestart.get() - flushedBefore;
    }

    private void releaseFlushed(final Message message)
    {
        if (!message.cancelled && message.socket != null)
        {
            counters.sendFlushedPeerRestart.incrementOrdered(); // an application's message, not a pong or probe
        }
        release(message);
    }

    /** Frees every queued message; the stack is closing. */
    void releaseAll()
    {
        dropAppended();
        Message message;
        while ((message = queue.pollHead()) != null)
        {
            release(message);
        }
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
     * The peer's cumulative ack frees what it covers. An ack above what was sent comes from an earlier incarnation
     * of one side (a restarted process starts again at 1) and is dropped: applying it would free messages the
     * peer never had.
     *
     * @param ack the peer's cumulative ack.
     */
    void onAck(final long ack)
    {
        if (ack > highestSequenceSent)
        {
            counters.recvDropBadAck.incrementOrdered();
            return;
        }
        highestAck = Math.max(highestAck, ack);
        releaseAppended(ack);
        Message message;
        while ((message = queue.pollAcked(ack, frames.inProgress() == ControlFrames.Kind.DATA)) != null)
        {
            counters.sendDropAcked.incrementOrdered();
            if (message.cancelled)
            {
                host.releaseMessage(message);
            }
            else
            {
                host.releaseAcked(message);
            }
        }
        // an ack covers hundreds of a streaming socket's messages: one atomic update of its send buffer, not one each
        host.releaseAckedDone();
    }

    /** @return see {@link org.rds4j.core.spi.ConnectionPath#sequenceReadOnPath()}. */
    long sequenceReadOnPath()
    {
        return highestAck > pathSequenceFloor ? highestAck : 0;
    }

    /**
     * @param map         the local congestion map.
     * @param handshaken  the handshake is done: data and acks may go.
     * @param ackDue      an ack-only frame is due by the ack rules.
     * @return true if the transport has something to send.
     */
    boolean hasOutput(final CongestionMap map, final boolean handshaken, final boolean ackDue)
    {
        return frames.hasOutput(map) ||
            (handshaken && (queue.hasUnsent() || appendedUnflushed > 0 || frames.ackWanted() || ackDue));
    }

    /**
     * Gives a transport the frames to send next, in order: the frame it was part way through, the congestion
     * map if it changed (always first on a new connection), the handshake probe on a new connection, then,
     * once the handshake is done, data frames, and an ack-only frame when an ack is due and no data frame
     * carries it. Frames are positioned from their first unsent byte.
     *
     * @param out        where to put them.
     * @param max        most frames to give.
     * @param map        the local congestion map.
     * @param handshaken the handshake is done.
     * @param ackDue     an ack-only frame is due by the ack rules.
     * @param extensions probes and pongs among the data carry the handshake extensions.
     * @return the number of frames put in {@code out}, from index 0.
     */
    int fill(
        final ByteBuffer[] out, final int max, final CongestionMap map, final boolean handshaken, final boolean ackDue,
        final boolean extensions)
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
        if (count < max && frames.congestionDue(map))
        {
            out[count++] = frames.congestion(map);
            counters.congUpdateQueued.incrementOrdered();
        }
        if (count < max && frames.probeDue())
        {
            out[count++] = frames.probe(NPATHS, host.generation());
        }
        if (!handshaken)
        {
            return count;
        }
        final long ack = acks.ackValue();
        while (count < max && nextData < queue.size())
        {
            out[count++] = stampData(queue.get(nextData++), ack, extensions);
            dataGiven = true;
            frames.dataGiven();
        }
        if (count < max && !dataGiven && frames.ackFree() && (frames.ackWanted() || ackDue))
        {
            out[count++] = frames.ack(ack);
        }
        return count;
    }

    private ByteBuffer stampData(final Message message, final long ack, final boolean extensions)
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
        if (extensions && (message.sport == RdsHeader.PROBE_PORT || message.dport == RdsHeader.PROBE_PORT))
        {
            RdsHeader.writeHandshakeExtensions(message.buffer, 0, NPATHS, host.generation());
        }
        if (checksums)
        {
            RdsHeader.writeChecksum(message.buffer, 0);
        }
        return message.frame;
    }

    /**
     * Tells how far a write of frames from {@link #fill} went: frames with nothing remaining are done; the first
     * with bytes remaining is resumed by the next fill (see {@link ControlFrames}).
     *
     * @param out   the array given to {@link #fill}; its entries are cleared.
     * @param count the count it returned.
     * @return the number of frames completed.
     */
    int onTransmitted(final ByteBuffer[] out, final int count)
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
}
