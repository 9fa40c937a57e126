package org.rds4j.transport.ib;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

/**
 * The send half of an IB path without the verbs: cuts frames (as {@code Connection.fillTransmit} gives them)
 * into fragments in send slots, one send credit per fragment, and records how far a frame got in its position
 * ({@code 48 + fragments * 4096}), so that the connection resumes it from the first fragment not sent. At most
 * one ack-only frame is in flight: another waits (position unchanged) until the first one's slot completes.
 * <p>
 * The last fragment of every frame is sent solicited ({@code IBV_SEND_SOLICITED}), and so is the last fragment
 * posted before a frame stops part way, as the kernel's {@code rds_ib_xmit} and {@code rds_ib_send_ack} do: the
 * kernel arms its receive CQ for solicited completions only ({@code IB_CQ_SOLICITED}), so it does not look at
 * what it received until a solicited one arrives. Agent thread only; allocation free.
 */
final class FragmentWriter
{
    /** Where fragments go: the {@code SendRing} in a path, a fake in tests. */
    interface Slots
    {
        /** @return slots claimed and not completed. */
        int inFlight();

        /** @return the ring's size. */
        int capacity();

        /** @return the next slot (in order); only called when {@link #inFlight()} is below {@link #capacity()}. */
        int claim();

        MutableDirectBuffer buffer();

        int offset(int slot);

        /**
         * The slot holds a fragment of {@code length} bytes, ready to post.
         *
         * @param solicited post it with {@code IBV_SEND_SOLICITED}: the receiver's CQ event fires for it.
         */
        void commit(int slot, int length, boolean solicited);

        /** A committed, not yet posted slot is to be posted solicited after all. */
        void solicit(int slot);
    }

    /** Why {@link #write} stopped short of the end of a frame, for counters. */
    static final int DONE = 0;
    static final int NO_SLOT = 1;
    static final int NO_CREDIT = 2;
    static final int ACK_IN_FLIGHT = 3;

    private final Slots slots;
    private final IbCredits credits;
    private final UnsafeBuffer frameView = new UnsafeBuffer(0, 0);
    private long claimed;
    private long completed;
    private long ackIndex = -1;

    FragmentWriter(final Slots slots, final IbCredits credits)
    {
        this.slots = slots;
        this.credits = credits;
    }

    /** {@code count} more send slots completed (in order). */
    void onCompleted(final int count)
    {
        completed += count;
    }

    /** @return true while an ack-only frame's fragment has not completed. */
    boolean ackInFlight()
    {
        return ackIndex >= completed;
    }

    /**
     * Copies as many of a frame's remaining fragments as slots and credits allow.
     *
     * @param frame header at 0, then the payload; position 0 or where a previous call stopped.
     * @return {@link #DONE} (the frame's position is at its limit) or why it stopped.
     */
    int write(final ByteBuffer frame)
    {
        frameView.wrap(frame);
        final int position = frame.position();
        final long payloadLength = RdsHeader.length(frameView, 0);
        final int fragmentCount = Fragments.count(payloadLength);
        int next = position <= RdsHeader.LENGTH ? 0 : (position - RdsHeader.LENGTH) / Fragments.FRAGMENT_PAYLOAD;
        final boolean ackOnly = fragmentCount == 1 && RdsHeader.isAckOnly(frameView, 0);
        if (ackOnly && ackInFlight())
        {
            return ACK_IN_FLIGHT;
        }
        int stop = DONE;
        final int first = next;
        int lastSlot = -1;
        while (next < fragmentCount)
        {
            if (slots.inFlight() >= slots.capacity())
            {
                stop = NO_SLOT;
                break;
            }
            if (credits.grab(1) == 0)
            {
                stop = NO_CREDIT;
                break;
            }
            final int slot = slots.claim();
            final int length = Fragments.write(frameView, 0, next, credits.takeAdvertisement(), slots.buffer(),
                slots.offset(slot));
            slots.commit(slot, length, next == fragmentCount - 1);
            lastSlot = slot;
            if (ackOnly)
            {
                ackIndex = claimed;
            }
            claimed++;
            next++;
        }
        if (next >= fragmentCount)
        {
            frame.position(frame.limit());
            return DONE;
        }
        if (next > first)
        {
            slots.solicit(lastSlot); // the receiver must see what came so far (and may answer with credits)
        }
        if (next > 0)
        {
            frame.position(Math.min(frame.limit(), RdsHeader.LENGTH + next * Fragments.FRAGMENT_PAYLOAD));
        }
        return stop;
    }
}
