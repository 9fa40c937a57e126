package org.rds4j.transport.ib.verbs;

import org.agrona.concurrent.UnsafeBuffer;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * The send side of one RC queue pair: {@code slots} registered fragment buffers of {@code fragmentSize}
 * bytes (defaults 256 x 4 KiB, as kernel RDS), and for each a {@code struct ibv_send_wr} and a
 * {@code struct ibv_sge} laid out once in native memory ({@code wr_id}, {@code sg_list}, {@code num_sge},
 * {@code opcode}, the SGE's address and lkey never change). A send patches only the SGE length, the WR's
 * {@code next} link and its flags (signalled, solicited).
 * <p>
 * Usage, in order, on one thread: {@link #claim()} a slot, write the fragment at
 * {@link #offset(int)} in {@link #buffer()}, {@link #commit(int, int)} it; {@link #post()} posts everything
 * committed since the last post as one chain (one {@code ibv_post_send}). Slots are used in FIFO order.
 * Only every {@code signalInterval}-th WR and the last of each chain are signalled; a send completion frees
 * its slot and every earlier one ({@link #onCompletion}), as an RC send queue completes in order.
 * <p>
 * Part 2 (the RDS transport) writes a 48-byte {@code rds_header} at the start of each fragment.
 */
public final class SendRing implements AutoCloseable
{
    public static final int DEFAULT_SLOTS = 256;
    public static final int DEFAULT_FRAGMENT_SIZE = 4096;

    private final QueuePair queuePair;
    private final int slots;
    private final int fragmentSize;
    private final int tag;
    private final int signalInterval;
    private final NativeBlock fragments;
    private final MemoryRegion region;
    private final NativeBlock requests;
    private final UnsafeBuffer wr;
    private final long wrBase;
    private final int sgeBase;
    private final boolean[] solicited;
    private long head;       // next slot to claim
    private long committed;  // slots up to here are committed
    private long posted;     // slots up to here are posted
    private long tail;       // slots below here are completed (free)
    private long sinceSignal;

    /**
     * @param signalInterval signal at least every this many WRs (1 = every WR), at most the QP's send queue.
     */
    public SendRing(final QueuePair queuePair, final int slots, final int fragmentSize, final int tag, final int signalInterval)
    {
        if (slots < 1 || slots > queuePair.maxSendWr() || fragmentSize < 64 || signalInterval < 1)
        {
            throw new IllegalArgumentException("slots " + slots + " (QP send queue " + queuePair.maxSendWr() +
                "), fragment " + fragmentSize + ", signal interval " + signalInterval);
        }
        this.queuePair = queuePair;
        this.slots = slots;
        this.fragmentSize = fragmentSize;
        this.tag = tag;
        this.signalInterval = Math.min(signalInterval, slots);
        solicited = new boolean[slots];
        fragments = new NativeBlock(slots * fragmentSize);
        region = queuePair.context().register(fragments);
        sgeBase = slots * SEND_WR_SIZE;
        requests = new NativeBlock(slots * (SEND_WR_SIZE + SGE_SIZE));
        wr = requests.view();
        wrBase = requests.address();
        for (int slot = 0; slot < slots; slot++)
        {
            final int w = slot * SEND_WR_SIZE;
            final int sge = sgeBase + slot * SGE_SIZE;
            wr.putLong(w + SEND_WR_WR_ID, WorkRequestIds.send(tag, slot));
            wr.putLong(w + SEND_WR_SG_LIST, wrBase + sge);
            wr.putInt(w + SEND_WR_NUM_SGE, 1);
            wr.putInt(w + SEND_WR_OPCODE, IBV_WR_SEND);
            wr.putLong(sge + SGE_ADDR, fragments.address() + (long)slot * fragmentSize);
            wr.putInt(sge + SGE_LKEY, region.lkey());
        }
    }

    /** @return the buffer holding every fragment; slot {@code s} starts at {@link #offset(int) offset(s)}. */
    public UnsafeBuffer buffer()
    {
        return fragments.view();
    }

    public int offset(final int slot)
    {
        return slot * fragmentSize;
    }

    public int fragmentSize()
    {
        return fragmentSize;
    }

    public int slots()
    {
        return slots;
    }

    public int tag()
    {
        return tag;
    }

    /** @return slots claimed and not yet completed. */
    public int inFlight()
    {
        return (int)(head - tail);
    }

    /** @return the next free slot, or -1 if all are in flight. */
    public int claim()
    {
        if (head - tail >= slots)
        {
            return -1;
        }
        return (int)(head++ % slots);
    }

    /** Marks a claimed slot (in claim order) ready to post with {@code length} bytes, not solicited. */
    public void commit(final int slot, final int length)
    {
        commit(slot, length, false);
    }

    /**
     * Marks a claimed slot (in claim order) ready to post with {@code length} bytes.
     *
     * @param solicited post it with {@code IBV_SEND_SOLICITED} (a receiver that armed its CQ for solicited
     *                  completions only gets an event for it).
     */
    public void commit(final int slot, final int length, final boolean solicited)
    {
        if (committed >= head || slot != (int)(committed % slots) || length < 0 || length > fragmentSize)
        {
            throw new IllegalStateException("commit of slot " + slot + " (" + length + " bytes) out of order");
        }
        wr.putInt(sgeBase + slot * SGE_SIZE + SGE_LENGTH, length);
        this.solicited[slot] = solicited;
        committed++;
    }

    /** A committed slot not yet posted is to be posted solicited. */
    public void solicit(final int slot)
    {
        if (slot < 0 || slot >= slots)
        {
            throw new IllegalArgumentException("slot " + slot);
        }
        solicited[slot] = true;
    }

    /**
     * Posts every committed slot as one chain.
     *
     * @return the number of WRs posted (0 if none were committed), or -errno if the post failed (the QP is
     *         then unusable: tear the connection down).
     */
    public int post()
    {
        final long count = committed - posted;
        if (count == 0)
        {
            return 0;
        }
        for (long i = posted; i < committed; i++)
        {
            final int w = (int)(i % slots) * SEND_WR_SIZE;
            final boolean last = i == committed - 1;
            final boolean signal = last || ++sinceSignal >= signalInterval;
            if (signal)
            {
                sinceSignal = 0;
            }
            wr.putLong(w + SEND_WR_NEXT, last ? 0 : wrBase + (int)((i + 1) % slots) * SEND_WR_SIZE);
            wr.putInt(w + SEND_WR_SEND_FLAGS, (signal ? IBV_SEND_SIGNALED : 0) |
                (solicited[(int)(i % slots)] ? IBV_SEND_SOLICITED : 0));
        }
        final int rc = queuePair.postSend(wrBase + (int)(posted % slots) * SEND_WR_SIZE);
        if (rc != 0)
        {
            return -Math.abs(rc);
        }
        posted = committed;
        return (int)count;
    }

    /**
     * A successful send completion of this ring's {@code wr_id}: frees its slot and all earlier ones.
     *
     * @return the number of slots freed; -1 if the wr_id is not a posted, uncompleted slot of this ring.
     */
    public int onCompletion(final long wrId)
    {
        if (WorkRequestIds.tag(wrId) != tag || WorkRequestIds.isReceive(wrId))
        {
            return -1;
        }
        final int slot = WorkRequestIds.slot(wrId);
        final long position = tail + Math.floorMod(slot - (int)(tail % slots), slots);
        if (slot >= slots || position >= posted)
        {
            return -1;
        }
        final int freed = (int)(position + 1 - tail);
        tail = position + 1;
        return freed;
    }

    /** Deregisters the fragments; the QP must be destroyed (or its send queue flushed) first. */
    @Override
    public void close()
    {
        region.close();
    }
}
