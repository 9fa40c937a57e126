package org.rds4j.transport.ib.verbs;

import com.sun.jna.Pointer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * An open device ({@code struct ibv_context}) and one protection domain on it. With rdma_cm the context is
 * the one librdmacm opened for the device a {@link CmId} resolved to ({@link CmId#verbs()}), and PDs, CQs and
 * QPs of connections through that device must be created on it; {@link #borrow} wraps it without owning it.
 * <p>
 * Construction reads the four data-path function pointers from {@code context->ops} and checks that each is
 * code in a loaded library (the provider, e.g. librxe); the calls themselves are made by {@link OpsCall}s
 * that each {@link CompletionQueue} and {@link QueuePair} sets up once.
 */
public final class VerbsContext implements AutoCloseable
{
    private final long context;
    private final boolean owned;
    private final long pd;
    private final long postSend;
    private final long postRecv;
    private final long pollCq;
    private final long reqNotifyCq;
    private final String provider;
    private boolean closed;

    private VerbsContext(final long context, final boolean owned)
    {
        AbiCheck.verify();
        this.context = context;
        this.owned = owned;
        final UnsafeBuffer view = new UnsafeBuffer(context, CONTEXT_NUM_COMP_VECTORS + 4);
        pollCq = view.getLong(CONTEXT_OPS_POLL_CQ);
        reqNotifyCq = view.getLong(CONTEXT_OPS_REQ_NOTIFY_CQ);
        postSend = view.getLong(CONTEXT_OPS_POST_SEND);
        postRecv = view.getLong(CONTEXT_OPS_POST_RECV);
        provider = AbiCheck.checkCode(postSend, "ibv_context.ops.post_send");
        AbiCheck.checkCode(postRecv, "ibv_context.ops.post_recv");
        AbiCheck.checkCode(pollCq, "ibv_context.ops.poll_cq");
        AbiCheck.checkCode(reqNotifyCq, "ibv_context.ops.req_notify_cq");
        final int vectors = view.getInt(CONTEXT_NUM_COMP_VECTORS);
        VerbsLayout.expect(vectors > 0 && vectors < 65536, "ibv_context.num_comp_vectors", vectors, 1);
        pd = VerbsException.check(LibIbverbs.ibv_alloc_pd(context), "ibv_alloc_pd");
        final long pdContext = new UnsafeBuffer(pd, 8).getLong(PD_CONTEXT);
        if (pdContext != context)
        {
            LibIbverbs.ibv_dealloc_pd(pd);
            VerbsLayout.expect(false, "ibv_pd.context", pdContext, context);
        }
    }

    /** @return the names of the RDMA devices ({@code ibv_get_device_list}), empty if none. */
    public static List<String> deviceNames()
    {
        AbiCheck.verify();
        final List<String> names = new ArrayList<>();
        final long list = LibIbverbs.ibv_get_device_list(0);
        if (list == 0)
        {
            return names;
        }
        try
        {
            final Pointer devices = new Pointer(list);
            for (int i = 0; devices.getLong(8L * i) != 0; i++)
            {
                names.add(new Pointer(LibIbverbs.ibv_get_device_name(devices.getLong(8L * i))).getString(0));
            }
        }
        finally
        {
            LibIbverbs.ibv_free_device_list(list);
        }
        return names;
    }

    /** Opens a device by name ({@code ibv_open_device}); the context is closed by {@link #close()}. */
    public static VerbsContext open(final String deviceName)
    {
        AbiCheck.verify();
        final long list = VerbsException.check(LibIbverbs.ibv_get_device_list(0), "ibv_get_device_list");
        try
        {
            final Pointer devices = new Pointer(list);
            for (int i = 0; devices.getLong(8L * i) != 0; i++)
            {
                final long device = devices.getLong(8L * i);
                if (new Pointer(LibIbverbs.ibv_get_device_name(device)).getString(0).equals(deviceName))
                {
                    final long context = VerbsException.check(LibIbverbs.ibv_open_device(device), "ibv_open_device");
                    final long back = new UnsafeBuffer(context, 8).getLong(CONTEXT_DEVICE);
                    if (back != device)
                    {
                        LibIbverbs.ibv_close_device(context);
                        VerbsLayout.expect(false, "ibv_context.device", back, device);
                    }
                    try
                    {
                        return new VerbsContext(context, true);
                    }
                    catch (final RuntimeException e)
                    {
                        LibIbverbs.ibv_close_device(context);
                        throw e;
                    }
                }
            }
        }
        finally
        {
            LibIbverbs.ibv_free_device_list(list);
        }
        throw new VerbsException("no RDMA device named " + deviceName);
    }

    /** Wraps a context someone else owns (librdmacm's {@code id->verbs}); {@link #close()} frees only the PD. */
    public static VerbsContext borrow(final long context)
    {
        if (context == 0)
        {
            throw new VerbsException("the rdma_cm id has no device yet (resolve or bind it first)");
        }
        return new VerbsContext(context, false);
    }

    /** @return the {@code struct ibv_context *}. */
    public long context()
    {
        return context;
    }

    /** @return the {@code struct ibv_pd *}. */
    public long pd()
    {
        return pd;
    }

    /** @return the path of the library whose code the ops table points to (the provider). */
    public String provider()
    {
        return provider;
    }

    long postSendFunction()
    {
        return postSend;
    }

    long postRecvFunction()
    {
        return postRecv;
    }

    long pollCqFunction()
    {
        return pollCq;
    }

    long reqNotifyCqFunction()
    {
        return reqNotifyCq;
    }

    /** Registers a block for local access ({@code IBV_ACCESS_LOCAL_WRITE}: the HCA may write received data into it). */
    public MemoryRegion register(final NativeBlock block)
    {
        return new MemoryRegion(this, block);
    }

    /**
     * @param entries   completion entries (at least the WRs of every QP that will use it).
     * @param pollBatch work completions read per poll.
     */
    public CompletionQueue createCompletionQueue(final int entries, final int pollBatch)
    {
        return new CompletionQueue(this, entries, pollBatch);
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        LibIbverbs.ibv_dealloc_pd(pd);
        if (owned)
        {
            LibIbverbs.ibv_close_device(context);
        }
    }
}
