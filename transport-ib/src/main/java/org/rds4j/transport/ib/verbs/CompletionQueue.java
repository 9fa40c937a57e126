package org.rds4j.transport.ib.verbs;

import org.agrona.concurrent.UnsafeBuffer;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * A completion queue with its own completion channel, polled in batches into a preallocated
 * {@code struct ibv_wc} array. One CQ can serve the send and receive queues of many QPs (demultiplex by
 * {@link #qpNum} or by the {@code wr_id} tags of the rings).
 * <p>
 * Idle protocol (the agent's): {@link #poll()} until it returns 0, then {@link #arm()}, then {@link #poll()}
 * once more (a completion that arrived between the last poll and the arm raises no event), and only if that
 * is still 0 wait: {@link #awaitEvent(int)} (or select on {@link #channelFd()} with other fds). Poll, arm and
 * wait allocate nothing. Not thread safe.
 */
public final class CompletionQueue implements AutoCloseable
{
    /** Events are acked ({@code ibv_ack_cq_events}, which takes a mutex) in batches of this many. */
    private static final int ACK_BATCH = 16;

    private final VerbsContext context;
    private final long channel;
    private final int channelFd;
    private final long cq;
    private final int capacity;
    private final int batch;
    private final NativeBlock scratch;
    private final UnsafeBuffer wc;
    private final OpsCall pollCall;
    private final OpsCall notifyCall;
    private final long pollFd;
    private final long cqOut;
    private final long contextOut;
    private int unackedEvents;
    private int polled;
    private boolean closed;

    CompletionQueue(final VerbsContext context, final int entries, final int batch)
    {
        if (batch < 1 || batch > 4096 || entries < 1)
        {
            throw new IllegalArgumentException("entries " + entries + ", batch " + batch);
        }
        this.context = context;
        this.batch = batch;
        channel = VerbsException.check(LibIbverbs.ibv_create_comp_channel(context.context()), "ibv_create_comp_channel");
        final UnsafeBuffer channelView = new UnsafeBuffer(channel, COMP_CHANNEL_FD + 4);
        channelFd = channelView.getInt(COMP_CHANNEL_FD);
        long createdCq = 0;
        try
        {
            VerbsLayout.expect(channelView.getLong(COMP_CHANNEL_CONTEXT) == context.context(),
                "ibv_comp_channel.context", channelView.getLong(COMP_CHANNEL_CONTEXT), context.context());
            setNonBlocking(channelFd);
            createdCq = VerbsException.check(
                LibIbverbs.ibv_create_cq(context.context(), entries, 0, channel, 0), "ibv_create_cq");
            final UnsafeBuffer cqView = new UnsafeBuffer(createdCq, CQ_CQE + 4);
            VerbsLayout.expect(cqView.getLong(CQ_CONTEXT) == context.context(), "ibv_cq.context", cqView.getLong(CQ_CONTEXT), context.context());
            VerbsLayout.expect(cqView.getLong(CQ_CHANNEL) == channel, "ibv_cq.channel", cqView.getLong(CQ_CHANNEL), channel);
            VerbsLayout.expect(cqView.getInt(CQ_CQE) >= entries, "ibv_cq.cqe", cqView.getInt(CQ_CQE), entries);
            capacity = cqView.getInt(CQ_CQE);
        }
        catch (final RuntimeException e)
        {
            if (createdCq != 0)
            {
                LibIbverbs.ibv_destroy_cq(createdCq);
            }
            LibIbverbs.ibv_destroy_comp_channel(channel);
            throw e;
        }
        cq = createdCq;
        scratch = new NativeBlock(batch * WC_SIZE + 64);
        wc = new UnsafeBuffer(scratch.address(), batch * WC_SIZE);
        pollFd = scratch.address() + (long)batch * WC_SIZE;
        cqOut = pollFd + 16;
        contextOut = pollFd + 24;
        final UnsafeBuffer view = scratch.view();
        view.putInt(batch * WC_SIZE, channelFd);
        view.putShort(batch * WC_SIZE + 4, (short)LibC.POLLIN);

        pollCall = OpsCall.create(context.pollCqFunction(), OpsCall.Signature.PTR_INT_PTR);
        pollCall.pointer(0, cq);
        pollCall.integer(1, batch);
        pollCall.pointer(2, scratch.address());
        notifyCall = OpsCall.create(context.reqNotifyCqFunction(), OpsCall.Signature.PTR_INT);
        notifyCall.pointer(0, cq);
        notifyCall.integer(1, 0);
    }

    static void setNonBlocking(final int fd)
    {
        final int flags = LibC.fcntl(fd, LibC.F_GETFL, 0);
        if (flags < 0 || LibC.fcntl(fd, LibC.F_SETFL, flags | LibC.O_NONBLOCK) < 0)
        {
            throw VerbsException.lastError("fcntl(O_NONBLOCK)");
        }
    }

    /** @return the {@code struct ibv_cq *}. */
    public long cq()
    {
        return cq;
    }

    public VerbsContext context()
    {
        return context;
    }

    /** @return the number of entries the CQ really has (at least the number asked for). */
    public int capacity()
    {
        return capacity;
    }

    /** @return the completion channel's file descriptor (non-blocking; readable when an armed CQ has an event). */
    public int channelFd()
    {
        return channelFd;
    }

    /** @return the mechanism the data-path calls use ({@code ffi} or {@code jna}). */
    public String callMechanism()
    {
        return pollCall.mechanism();
    }

    /**
     * Reads up to the batch size of completions into the preallocated array.
     *
     * @return how many (0 if none); a negative value is the provider's error.
     */
    public int poll()
    {
        final int n = pollCall.invoke();
        polled = Math.max(n, 0);
        return n;
    }

    /** Requests an event for the next completion ({@code ibv_req_notify_cq(cq, 0)}). @return 0 or an errno. */
    public int arm()
    {
        return notifyCall.invoke();
    }

    /**
     * Waits up to {@code timeoutMs} for the completion channel, then consumes the event. The CQ must have
     * been armed; it is no longer armed afterwards.
     *
     * @return true if an event came, false on timeout.
     */
    public boolean awaitEvent(final int timeoutMs)
    {
        final int ready = LibC.poll(pollFd, 1, timeoutMs);
        if (ready <= 0)
        {
            return false;
        }
        if (LibIbverbs.ibv_get_cq_event(channel, cqOut, contextOut) != 0)
        {
            return false; // EAGAIN: someone else consumed it
        }
        final long eventCq = scratch.view().getLong(batch * WC_SIZE + 16);
        VerbsLayout.expect(eventCq == cq, "ibv_get_cq_event cq", eventCq, cq);
        if (++unackedEvents >= ACK_BATCH)
        {
            LibIbverbs.ibv_ack_cq_events(cq, unackedEvents);
            unackedEvents = 0;
        }
        return true;
    }

    /** @param i an index below the last {@link #poll()}'s result. @return the completion's {@code wr_id}. */
    public long wrId(final int i)
    {
        return wc.getLong(check(i) * WC_SIZE + WC_WR_ID);
    }

    /** @return {@code IBV_WC_SUCCESS} (0) or an error status ({@link #statusString}). */
    public int status(final int i)
    {
        return wc.getInt(check(i) * WC_SIZE + WC_STATUS);
    }

    /** @return {@code IBV_WC_SEND}, {@code IBV_WC_RECV}, ... (valid only when the status is success). */
    public int opcode(final int i)
    {
        return wc.getInt(check(i) * WC_SIZE + WC_OPCODE);
    }

    /** @return the bytes received (receive completions). */
    public int byteLength(final int i)
    {
        return wc.getInt(check(i) * WC_SIZE + WC_BYTE_LEN);
    }

    public int qpNum(final int i)
    {
        return wc.getInt(check(i) * WC_SIZE + WC_QP_NUM);
    }

    public int vendorError(final int i)
    {
        return wc.getInt(check(i) * WC_SIZE + WC_VENDOR_ERR);
    }

    private int check(final int i)
    {
        if (i < 0 || i >= polled)
        {
            throw new IndexOutOfBoundsException("completion " + i + " of " + polled);
        }
        return i;
    }

    /** @return libibverbs' name for a completion status (control path: allocates a String). */
    public static String statusString(final int status)
    {
        return new com.sun.jna.Pointer(LibIbverbs.ibv_wc_status_str(status)).getString(0);
    }

    /** Destroys the CQ (every QP using it must be destroyed first) and its channel. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (unackedEvents > 0)
        {
            LibIbverbs.ibv_ack_cq_events(cq, unackedEvents);
            unackedEvents = 0;
        }
        final int rc = LibIbverbs.ibv_destroy_cq(cq);
        LibIbverbs.ibv_destroy_comp_channel(channel);
        if (rc != 0)
        {
            throw new VerbsException("ibv_destroy_cq", rc);
        }
    }
}
