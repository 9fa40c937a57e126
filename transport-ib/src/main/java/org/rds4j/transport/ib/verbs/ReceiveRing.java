package org.rds4j.transport.ib.verbs;

import org.agrona.concurrent.UnsafeBuffer;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * The receive side of one RC queue pair: {@code slots} registered fragment buffers (defaults 1024 x 4 KiB,
 * as kernel RDS), each with a {@code struct ibv_recv_wr} and a {@code struct ibv_sge} laid out once in
 * native memory. {@link #postAll()} posts every slot as one chain at connection set-up; a receive completion
 * names its slot ({@link #onCompletion}); the consumer reads the fragment, then {@link #release}s the slot,
 * which only links it into the pending chain; {@link #post()} posts that chain with one
 * {@code ibv_post_recv}. Posting patches only the {@code next} links. One thread.
 * <p>
 * Part 2 advertises {@link #posted()} growth as credits in the {@code rds_header}.
 */
public final class ReceiveRing implements AutoCloseable
{
    public static final int DEFAULT_SLOTS = 1024;

    private final QueuePair queuePair;
    private final int slots;
    private final int fragmentSize;
    private final int tag;
    private final NativeBlock fragments;
    private final MemoryRegion region;
    private final NativeBlock requests;
    private final UnsafeBuffer wr;
    private final long wrBase;
    private final boolean[] isPosted;
    private int chainHead = -1;
    private int chainTail = -1;
    private int pending;
    private int posted;

    public ReceiveRing(final QueuePair queuePair, final int slots, final int fragmentSize, final int tag)
    {
        if (slots < 1 || slots > queuePair.maxRecvWr() || fragmentSize < 64)
        {
            throw new IllegalArgumentException("slots " + slots + " (QP receive queue " + queuePair.maxRecvWr() +
                "), fragment " + fragmentSize);
        }
        this.queuePair = queuePair;
        this.slots = slots;
        this.fragmentSize = fragmentSize;
        this.tag = tag;
        isPosted = new boolean[slots];
        fragments = new NativeBlock(slots * fragmentSize);
        region = queuePair.context().register(fragments);
        final int sgeBase = slots * RECV_WR_SIZE;
        requests = new NativeBlock(slots * (RECV_WR_SIZE + SGE_SIZE));
        wr = requests.view();
        wrBase = requests.address();
        for (int slot = 0; slot < slots; slot++)
        {
            final int w = slot * RECV_WR_SIZE;
            final int sge = sgeBase + slot * SGE_SIZE;
            wr.putLong(w + RECV_WR_WR_ID, WorkRequestIds.receive(tag, slot));
            wr.putLong(w + RECV_WR_SG_LIST, wrBase + sge);
            wr.putInt(w + RECV_WR_NUM_SGE, 1);
            wr.putLong(sge + SGE_ADDR, fragments.address() + (long)slot * fragmentSize);
            wr.putInt(sge + SGE_LENGTH, fragmentSize);
            wr.putInt(sge + SGE_LKEY, region.lkey());
        }
    }

    public UnsafeBuffer buffer()
    {
        return fragments.view();
    }

    public int offset(final int slot)
    {
        return slot * fragmentSize;
    }

    public int slots()
    {
        return slots;
    }

    public int tag()
    {
        return tag;
    }

    /** @return receives posted and not yet completed. */
    public int posted()
    {
        return posted;
    }

    /** @return slots released and waiting for {@link #post()}. */
    public int pending()
    {
        return pending;
    }

    /** Releases every slot and posts them: call once, before connecting or accepting. @return as {@link #post()}. */
    public int postAll()
    {
        for (int slot = 0; slot < slots; slot++)
        {
            release(slot);
        }
        return post();
    }

    /**
     * A successful receive completion of this ring's {@code wr_id}.
     *
     * @return the slot (its fragment is at {@link #offset(int)}); -1 if the wr_id is not a posted slot of
     *         this ring.
     */
    public int onCompletion(final long wrId)
    {
        final int slot = WorkRequestIds.slot(wrId);
        if (WorkRequestIds.tag(wrId) != tag || !WorkRequestIds.isReceive(wrId) || slot >= slots || !isPosted[slot])
        {
            return -1;
        }
        isPosted[slot] = false;
        posted--;
        return slot;
    }

    /** Gives a consumed slot back; it is posted again by the next {@link #post()}. */
    public void release(final int slot)
    {
        if (slot < 0 || slot >= slots || isPosted[slot])
        {
            throw new IllegalStateException("slot " + slot + " is posted");
        }
        isPosted[slot] = true; // owned by the pending chain from now on
        wr.putLong(slot * RECV_WR_SIZE + RECV_WR_NEXT, 0);
        if (chainTail >= 0)
        {
            wr.putLong(chainTail * RECV_WR_SIZE + RECV_WR_NEXT, wrBase + (long)slot * RECV_WR_SIZE);
        }
        else
        {
            chainHead = slot;
        }
        chainTail = slot;
        pending++;
    }

    /**
     * Posts the pending chain with one {@code ibv_post_recv}.
     *
     * @return the number posted (0 if none were pending), or -errno (tear the connection down).
     */
    public int post()
    {
        if (pending == 0)
        {
            return 0;
        }
        final int rc = queuePair.postReceive(wrBase + (long)chainHead * RECV_WR_SIZE);
        if (rc != 0)
        {
            return -Math.abs(rc);
        }
        final int count = pending;
        posted += count;
        pending = 0;
        chainHead = -1;
        chainTail = -1;
        return count;
    }

    /** Deregisters the fragments; the QP must be destroyed first. */
    @Override
    public void close()
    {
        region.close();
    }
}
