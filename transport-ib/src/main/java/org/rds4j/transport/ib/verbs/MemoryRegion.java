package org.rds4j.transport.ib.verbs;

import org.agrona.concurrent.UnsafeBuffer;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/** A {@link NativeBlock} registered with {@code ibv_reg_mr} for local write; {@link #close()} deregisters it. */
public final class MemoryRegion implements AutoCloseable
{
    private final NativeBlock block;
    private final long mr;
    private final int lkey;
    private final int rkey;
    private boolean closed;

    MemoryRegion(final VerbsContext context, final NativeBlock block)
    {
        this.block = block;
        mr = VerbsException.check(
            LibIbverbs.ibv_reg_mr(context.pd(), block.address(), block.size(), IBV_ACCESS_LOCAL_WRITE), "ibv_reg_mr");
        final UnsafeBuffer view = new UnsafeBuffer(mr, MR_RKEY + 4);
        try
        {
            VerbsLayout.expect(view.getLong(MR_CONTEXT) == context.context(), "ibv_mr.context", view.getLong(MR_CONTEXT), context.context());
            VerbsLayout.expect(view.getLong(MR_PD) == context.pd(), "ibv_mr.pd", view.getLong(MR_PD), context.pd());
            VerbsLayout.expect(view.getLong(MR_ADDR) == block.address(), "ibv_mr.addr", view.getLong(MR_ADDR), block.address());
            VerbsLayout.expect(view.getLong(MR_LENGTH) == block.size(), "ibv_mr.length", view.getLong(MR_LENGTH), block.size());
        }
        catch (final VerbsLayoutException e)
        {
            LibIbverbs.ibv_dereg_mr(mr);
            throw e;
        }
        lkey = view.getInt(MR_LKEY);
        rkey = view.getInt(MR_RKEY);
    }

    public NativeBlock block()
    {
        return block;
    }

    /** @return the local key an SGE over this region carries. */
    public int lkey()
    {
        return lkey;
    }

    public int rkey()
    {
        return rkey;
    }

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            LibIbverbs.ibv_dereg_mr(mr);
        }
    }
}
