package org.rds4j.transport.ib;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.TransportCounters;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;
import org.rds4j.transport.ib.verbs.CmId;
import org.rds4j.transport.ib.verbs.CompletionQueue;
import org.rds4j.transport.ib.verbs.ReceiveRing;
import org.rds4j.transport.ib.verbs.SendRing;
import org.rds4j.transport.ib.verbs.VerbsContext;
import org.rds4j.transport.ib.verbs.VerbsLayout;
import org.rds4j.transport.ib.verbs.WorkRequestIds;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * One RC queue pair under an RDS connection, with its own completion queue (and completion channel), a
 * {@link SendRing} and a {@link ReceiveRing} of registered 4 KiB fragment buffers, credit state and a
 * reassembler.
 * <p>
 * Send: frames from {@link ConnectionPath#fillTransmit} are cut into {@link Fragments}, each copied into a send slot
 * with its own header copy; a fragment needs a free slot and a send credit ({@link IbCredits#grab}); each
 * header advertises the receive buffers posted since the last one. A frame counts as transmitted once all its
 * fragments are posted (they are copied); when slots or credits run out part way, the frame's position shows
 * how far it got ({@code 48 + fragments * 4096}) and the connection resumes it first. At most one ack-only
 * frame is in flight.
 * <p>
 * Receive: completions are polled in batches; every fragment's size and header are checked
 * ({@link Fragments#checkReceived}: a non-zero checksum must verify); credits are taken; a message of one fragment
 * is handed on from its receive buffer as a frame of the poll's batch ({@link ConnectionPath#onBatchFrame}, which
 * may queue it with its socket's other frames of the batch as one record), larger ones are reassembled first; the
 * buffers are posted again, and counted for the next advertisement, once the batch has ended. Agent thread only.
 */
final class IbPath implements TransportPath
{
    private static final Logger LOG = LoggerFactory.getLogger(IbPath.class);
    private static final int FRAMES_PER_FILL = 32;
    private static final int FILLS_PER_TRANSMIT = 8;
    private static final int POLL_BATCH = 32;
    private static final int POLLS_PER_CYCLE = 8;
    /** Signal every this many send WRs (and the last of each chain). */
    private static final int SIGNAL_INTERVAL = 16;
    /** Transport retries and RNR retries on the RC QP (7: RNR waits forever; credits keep it from happening). */
    static final int RETRY_COUNT = 7;
    static final int RNR_RETRY_COUNT = 7;

    enum State
    {
        RESOLVING_ADDRESS, RESOLVING_ROUTE, CONNECTING, ACCEPTING, ESTABLISHED, CLOSED
    }

    final IbTransport transport;
    final ConnectionPath connection;
    final CmId id;
    final boolean active;
    final int tag;
    final long deadlineNs;
    private final TransportCounters counters;
    private final int sendSlots;
    private final int receiveSlots;
    private final IbCredits credits;
    private final FragmentReassembler reassembler = new FragmentReassembler();
    private final ByteBuffer[] frames = new ByteBuffer[FRAMES_PER_FILL];
    final IbPrivateData.Decoded peer = new IbPrivateData.Decoded();

    State state;
    private VerbsContext verbs;
    CompletionQueue cq;
    private SendRing sendRing;
    private ReceiveRing receiveRing;
    /** The peer is kernel RDS: its private data gave no credit (rds4j's always gives its receive ring). */
    private boolean kernelPeer;
    /** The CQ is armed and its event not yet consumed: the agent leaves it alone until the event. */
    boolean armed;
    private long lastCompletionNs;
    private FragmentWriter writer;
    /** Generation of the event thread's fd set without this path's CQ; its CQ is destroyed once it is seen. */
    long retiredGeneration;

    IbPath(final IbTransport transport, final ConnectionPath connection, final CmId id, final boolean active,
        final int tag, final long deadlineNs)
    {
        this.transport = transport;
        this.connection = connection;
        this.id = id;
        this.active = active;
        this.tag = tag;
        this.deadlineNs = deadlineNs;
        this.counters = transport.counters;
        this.sendSlots = transport.sendSlots;
        this.receiveSlots = transport.receiveSlots;
        this.credits = new IbCredits(receiveSlots / 4);
        this.state = active ? State.RESOLVING_ADDRESS : State.ACCEPTING;
    }

    /**
     * Creates the verbs resources on the id's device (rdma_cm resolved it): PD, CQ with its channel, the RC QP
     * and both rings, and posts every receive buffer.
     */
    void setUp()
    {
        verbs = VerbsContext.borrow(id.verbs());
        cq = verbs.createCompletionQueue(sendSlots + receiveSlots, POLL_BATCH);
        id.createQueuePair(verbs, cq, cq, sendSlots, receiveSlots);
        sendRing = new SendRing(id.queuePair(), sendSlots, Fragments.FRAGMENT_BYTES, tag, SIGNAL_INTERVAL);
        receiveRing = new ReceiveRing(id.queuePair(), receiveSlots, Fragments.FRAGMENT_BYTES, tag);
        final SendRing ring = sendRing;
        writer = new FragmentWriter(new FragmentWriter.Slots()
        {
            @Override
            public int inFlight()
            {
                return ring.inFlight();
            }

            @Override
            public int capacity()
            {
                return ring.slots();
            }

            @Override
            public int claim()
            {
                return ring.claim();
            }

            @Override
            public org.agrona.MutableDirectBuffer buffer()
            {
                return ring.buffer();
            }

            @Override
            public int offset(final int slot)
            {
                return ring.offset(slot);
            }

            @Override
            public void commit(final int slot, final int length, final boolean solicited)
            {
                ring.commit(slot, length, solicited);
            }

            @Override
            public void solicit(final int slot)
            {
                ring.solicit(slot);
            }
        }, credits);
        final int posted = receiveRing.postAll();
        transport.ibCounters.postRecv.incrementOrdered();
        if (posted != receiveSlots)
        {
            throw new IllegalStateException("posting " + receiveSlots + " receives failed: " + posted);
        }
    }

    /** @return the receive buffers posted: the credits the peer starts with. */
    int initialCredits()
    {
        return receiveSlots;
    }

    /** rdma_cm says the connection is established; {@link #peer} holds the peer's private data. */
    void onEstablished(final long nowNs)
    {
        state = State.ESTABLISHED;
        credits.reset(peer.credit);
        kernelPeer = peer.credit == 0;
        if (LOG.isDebugEnabled())
        {
            LOG.debug("{} established ({}): protocol {}.{}, the peer's credit {} (flow control of our sends {}), its ack {}",
                this, active ? "we connected" : "we accepted", peer.version >> 8, peer.version & 0xFF, peer.credit,
                credits.flowControl() ? "on" : "off", peer.ackSequence);
            if (kernelPeer)
            {
                LOG.debug("{}: the peer is kernel RDS (no credit in its private data)", this);
            }
        }
        lastCompletionNs = nowNs;
        connection.onConnected(this);
        if (peer.ackSequence != 0 && state == State.ESTABLISHED)
        {
            connection.onPeerAck(peer.ackSequence);
        }
    }

    /**
     * A peer whose connection private data gives no credit is kernel RDS: rds4j always offers its receive ring,
     * the kernel never (its flow control is off by default, and even on it posts receives only later).
     */
    @Override
    public boolean peerIsKernel()
    {
        return kernelPeer;
    }

    boolean isEstablished()
    {
        return state == State.ESTABLISHED;
    }

    // ------------------------------------------------------------------ send

    @Override
    public int transmit()
    {
        if (state != State.ESTABLISHED)
        {
            return 0;
        }
        int done = 0;
        for (int round = 0; round < FILLS_PER_TRANSMIT; round++)
        {
            final int count = connection.fillTransmit(frames, FRAMES_PER_FILL);
            if (count == 0)
            {
                break;
            }
            boolean stalled = false;
            for (int i = 0; i < count && !stalled; i++)
            {
                stalled = !cut(frames[i]);
            }
            final int posted = sendRing.post();
            if (posted < 0)
            {
                for (int i = 0; i < count; i++)
                {
                    frames[i] = null;
                }
                fail("ibv_post_send failed: errno " + -posted);
                return done;
            }
            if (posted > 0)
            {
                transport.ibCounters.postSend.incrementOrdered();
                transport.ibCounters.fragmentsSent.getAndAddOrdered(posted);
            }
            final int completedFrames = connection.onTransmitted(frames, count);
            done += completedFrames;
            if (completedFrames < count || stalled)
            {
                break;
            }
        }
        if (credits.advertiseSoon())
        {
            connection.requestControlFrame();
        }
        return done;
    }

    /** @return true if the whole frame is in the ring; else counts why not. */
    private boolean cut(final ByteBuffer frame)
    {
        if (LOG.isTraceEnabled() && frame.position() == 0)
        {
            LOG.trace("{} sending {}", this, describe(new UnsafeBuffer(frame), 0, frame.limit()));
        }
        final int result = writer.write(frame);
        switch (result)
        {
            case FragmentWriter.DONE: return true;
            case FragmentWriter.NO_SLOT: transport.ibCounters.txRingFull.incrementOrdered(); return false;
            case FragmentWriter.NO_CREDIT: transport.ibCounters.txThrottle.incrementOrdered(); return false;
            default: transport.ibCounters.ackSendDelayed.incrementOrdered(); return false;
        }
    }

    // ------------------------------------------------------------------ completions

    /**
     * Polls the CQ in batches and handles what completed; arms the CQ once it has been quiet for the spin
     * time, so that the event thread can wait for it.
     *
     * @return work done: completions handled, or 1 while the spin window is open (keeps the agent polling).
     */
    int poll(final long nowNs, final long spinNs)
    {
        if (state != State.ESTABLISHED || armed)
        {
            return 0; // before ESTABLISHED, completions wait in the CQ: the connection is not up yet
        }
        int handled = 0;
        for (int round = 0; round < POLLS_PER_CYCLE && state != State.CLOSED; round++)
        {
            final int n = cq.poll();
            transport.ibCounters.pollCq.incrementOrdered();
            if (n < 0)
            {
                fail("ibv_poll_cq failed: " + n);
                return handled + 1;
            }
            if (n == 0)
            {
                break;
            }
            handled += n;
            onCompletions(n);
            if (n < POLL_BATCH)
            {
                break;
            }
        }
        if (state == State.CLOSED)
        {
            return handled + 1;
        }
        repostReceives();
        if (handled > 0)
        {
            lastCompletionNs = nowNs;
            return handled;
        }
        if (nowNs - lastCompletionNs < spinNs)
        {
            return 1; // busy-poll for a while after activity
        }
        // quiet: arm, then poll once more for what completed before the arm took effect
        cq.arm();
        transport.ibCounters.reqNotifyCq.incrementOrdered();
        armed = true;
        final int n = cq.poll();
        transport.ibCounters.pollCq.incrementOrdered();
        onCompletions(n);
        if (n > 0 && state != State.CLOSED)
        {
            repostReceives();
        }
        return Math.max(n, 0);
    }

    /** The event thread saw the completion channel readable: consume the event; the next poll runs. */
    void onChannelReadable(final long nowNs)
    {
        if (armed && cq.awaitEvent(0))
        {
            transport.ibCounters.cqEvent.incrementOrdered();
            armed = false;
            lastCompletionNs = nowNs;
        }
    }

    /**
     * Handles the completions of one poll as one batch of received frames, ended before anything can post their
     * buffers again (the frames are read in place until then) and also when a handler throws.
     */
    private void onCompletions(final int n)
    {
        try
        {
            for (int i = 0; i < n && state != State.CLOSED; i++)
            {
                onCompletion(i);
            }
        }
        finally
        {
            connection.onBatchEnd();
        }
    }

    private void onCompletion(final int i)
    {
        final long wrId = cq.wrId(i);
        final int status = cq.status(i);
        if (status != VerbsLayout.IBV_WC_SUCCESS)
        {
            fail("completion error: " + CompletionQueue.statusString(status) + " (status " + status + ", vendor error 0x" +
                Integer.toHexString(cq.vendorError(i)) + ")");
            return;
        }
        if (WorkRequestIds.isReceive(wrId))
        {
            onReceive(wrId, cq.byteLength(i));
        }
        else
        {
            final int freed = sendRing.onCompletion(wrId);
            if (freed < 0)
            {
                fail("send completion for an unknown work request 0x" + Long.toHexString(wrId));
                return;
            }
            writer.onCompleted(freed);
        }
    }

    private void onReceive(final long wrId, final int length)
    {
        final int slot = receiveRing.onCompletion(wrId);
        if (slot < 0)
        {
            fail("receive completion for an unknown work request 0x" + Long.toHexString(wrId));
            return;
        }
        final UnsafeBuffer buffer = receiveRing.buffer();
        final int offset = receiveRing.offset(slot);
        transport.ibCounters.fragmentsReceived.incrementOrdered();
        final String bad = Fragments.checkReceived(buffer, offset, length);
        if (bad != null)
        {
            badFrame(bad);
            return;
        }
        if (LOG.isTraceEnabled())
        {
            LOG.trace("{} received {}", this, describe(buffer, offset, length));
        }
        credits.onCreditsReceived(RdsHeader.credit(buffer, offset));
        final int result = reassembler.onFragment(buffer, offset, length);
        if (result == FragmentReassembler.WHOLE)
        {
            connection.onBatchFrame(buffer, offset);
        }
        else if (result == FragmentReassembler.ACK_ONLY)
        {
            connection.onFrame(buffer, offset);
        }
        else if (result == FragmentReassembler.COMPLETE)
        {
            connection.onFrame(reassembler.message(), 0);
        }
        else if (result < 0)
        {
            badFrame(result == FragmentReassembler.HEADER_MISMATCH ?
                "a fragment's header disagrees with the message being reassembled" :
                "a fragment's length does not fit its message");
            return;
        }
        if (state != State.CLOSED)
        {
            receiveRing.release(slot);
        }
    }

    private void repostReceives()
    {
        if (receiveRing.pending() == 0)
        {
            return;
        }
        final int posted = receiveRing.post();
        transport.ibCounters.postRecv.incrementOrdered();
        if (posted < 0)
        {
            fail("ibv_post_recv failed: errno " + -posted);
            return;
        }
        credits.onReceivesPosted(posted);
        if (credits.advertiseSoon())
        {
            connection.requestControlFrame();
        }
    }

    /** One fragment's or frame's header, for trace logs. */
    private static String describe(final org.agrona.DirectBuffer buffer, final int offset, final int length)
    {
        return length + " bytes: seq " + RdsHeader.sequence(buffer, offset) + " ack " + RdsHeader.ack(buffer, offset) +
            " len " + RdsHeader.length(buffer, offset) + " " + RdsHeader.sport(buffer, offset) + "->" +
            RdsHeader.dport(buffer, offset) + " flags 0x" + Integer.toHexString(RdsHeader.flags(buffer, offset)) +
            " credit " + RdsHeader.credit(buffer, offset) + " csum 0x" +
            Integer.toHexString(RdsHeader.checksumField(buffer, offset));
    }

    private void badFrame(final String why)
    {
        counters.connBadFrame().incrementOrdered();
        fail("bad frame: " + why, true);
    }

    /** The path failed (completion error, bad frame, disconnect): report it; the connection reconnects. */
    void fail(final String reason)
    {
        fail(reason, false);
    }

    /** @param misbehaved the peer broke the protocol: the connection logs it as a warning. */
    private void fail(final String reason, final boolean misbehaved)
    {
        if (state == State.CLOSED)
        {
            return;
        }
        if (state == State.ESTABLISHED)
        {
            if (misbehaved)
            {
                connection.onPeerMisbehaved(this, reason); // calls close()
            }
            else
            {
                connection.onPathDown(this, reason); // calls close()
            }
            close();
        }
        else
        {
            close();
            transport.onAttemptFailed(this, reason);
        }
    }

    /** @return receive buffers posted and not advertised, send credits: for tests and logs. */
    String creditState()
    {
        return "credits " + credits.sendCredits() + ", unadvertised " + credits.unadvertised();
    }

    /**
     * Closes the path: disconnects, destroys the QP and the id at once (so nothing more completes) and hands
     * the CQ and rings to the transport, which frees them once the event thread no longer watches the CQ's
     * channel. Idempotent.
     */
    @Override
    public void close()
    {
        if (state == State.CLOSED)
        {
            return;
        }
        final boolean wasEstablished = state == State.ESTABLISHED;
        state = State.CLOSED;
        reassembler.reset();
        if (wasEstablished)
        {
            id.disconnect();
        }
        id.close(); // destroys the QP first: nothing completes any more
        transport.retire(this);
    }

    /** Frees the native resources; the event thread no longer polls the CQ's channel. */
    void free()
    {
        if (receiveRing != null)
        {
            receiveRing.close();
        }
        if (sendRing != null)
        {
            sendRing.close();
        }
        if (cq != null)
        {
            try
            {
                cq.close();
            }
            catch (final RuntimeException ex)
            {
                LOG.debug("destroying a CQ", ex);
            }
        }
        if (verbs != null)
        {
            verbs.close();
        }
    }

    @Override
    public String toString()
    {
        return "IbPath[" + connection + " " + state + (active ? " active" : " passive") + "]";
    }
}
