package org.rds4j.transport.ib;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The partial-frame and credit interplay of an IB path's send side, with a fake send ring. */
class FragmentWriterTest
{
    /** A ring of {@code capacity} slots that completes only when told. */
    static final class FakeSlots implements FragmentWriter.Slots
    {
        final int capacity;
        final UnsafeBuffer buffer;
        final int[] lengths;
        final boolean[] solicited;
        long head;
        long tail;

        FakeSlots(final int capacity)
        {
            this.capacity = capacity;
            buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(capacity * Fragments.FRAGMENT_BYTES));
            lengths = new int[capacity];
            solicited = new boolean[capacity];
        }

        @Override
        public int inFlight()
        {
            return (int)(head - tail);
        }

        @Override
        public int capacity()
        {
            return capacity;
        }

        @Override
        public int claim()
        {
            return (int)(head++ % capacity);
        }

        @Override
        public MutableDirectBuffer buffer()
        {
            return buffer;
        }

        @Override
        public int offset(final int slot)
        {
            return slot * Fragments.FRAGMENT_BYTES;
        }

        @Override
        public void commit(final int slot, final int length, final boolean solicited)
        {
            lengths[slot] = length;
            this.solicited[slot] = solicited;
        }

        @Override
        public void solicit(final int slot)
        {
            solicited[slot] = true;
        }

        int complete(final int count)
        {
            tail += count;
            return count;
        }
    }

    private static ByteBuffer frame(final long sequence, final int payload)
    {
        final ByteBuffer frame = ByteBuffer.allocateDirect(RdsHeader.LENGTH + payload);
        final UnsafeBuffer view = new UnsafeBuffer(frame);
        RdsHeader.write(view, 0, sequence, 0, payload, 5, 6, 0, 0);
        for (int i = 0; i < payload; i++)
        {
            view.putByte(RdsHeader.LENGTH + i, (byte)(i * 13));
        }
        RdsHeader.writeChecksum(view, 0);
        return frame;
    }

    private static ByteBuffer ackOnly(final long ack)
    {
        final ByteBuffer frame = ByteBuffer.allocateDirect(RdsHeader.LENGTH);
        final UnsafeBuffer view = new UnsafeBuffer(frame);
        RdsHeader.write(view, 0, 0, ack, 0, 0, 0, 0, 0);
        RdsHeader.writeChecksum(view, 0);
        return frame;
    }

    @Test
    void theLastFragmentOfEveryFrameIsSolicitedAsTheKernelWantsIt()
    {
        // kernel rds_rdma arms its receive CQ with IB_CQ_SOLICITED: unsolicited sends alone never wake it
        final FakeSlots slots = new FakeSlots(16);
        final IbCredits credits = new IbCredits();
        credits.reset(0); // a kernel peer: no flow control
        final FragmentWriter writer = new FragmentWriter(slots, credits);
        assertEquals(FragmentWriter.DONE, writer.write(frame(1, 3 * Fragments.FRAGMENT_PAYLOAD)));
        assertEquals(FragmentWriter.DONE, writer.write(frame(2, 0)));
        assertEquals(FragmentWriter.DONE, writer.write(ackOnly(2)));
        assertEquals(5, slots.inFlight());
        final boolean[] expected = {false, false, true, true, true};
        for (int i = 0; i < expected.length; i++)
        {
            assertEquals(expected[i], slots.solicited[i], "fragment " + i);
        }
    }

    @Test
    void aFrameStoppedByCreditsResumesFromItsFirstUnsentFragment()
    {
        final FakeSlots slots = new FakeSlots(256);
        final IbCredits credits = new IbCredits();
        credits.reset(11); // 10 usable: the last is held back while there is nothing to advertise
        final FragmentWriter writer = new FragmentWriter(slots, credits);
        final ByteBuffer big = frame(1, 1 << 20); // 256 fragments

        assertEquals(FragmentWriter.NO_CREDIT, writer.write(big));
        assertEquals(RdsHeader.LENGTH + 10 * Fragments.FRAGMENT_PAYLOAD, big.position(), "10 fragments went");
        assertEquals(10, slots.inFlight());
        assertTrue(slots.solicited[9], "the last fragment before the stop is solicited: the kernel must look");
        assertFalse(slots.solicited[8]);

        credits.onCreditsReceived(300);
        assertEquals(FragmentWriter.DONE, writer.write(big));
        assertEquals(big.limit(), big.position());
        assertEquals(256, slots.inFlight());
        for (int i = 10; i < 256; i++)
        {
            assertEquals(i == 255, slots.solicited[i], "only the frame's last fragment is solicited, not " + i);
        }

        // every fragment carries the header (with its checksum) and its own slice, and they reassemble
        final FragmentReassembler reassembler = new FragmentReassembler();
        for (int i = 0; i < 256; i++)
        {
            final int offset = slots.offset(i);
            assertEquals(RdsHeader.VALID, RdsHeader.validate(slots.buffer, offset));
            assertTrue(RdsHeader.checksumField(slots.buffer, offset) != 0);
            final int result = reassembler.onFragment(slots.buffer, offset, slots.lengths[i]);
            assertEquals(i < 255 ? FragmentReassembler.INCOMPLETE : FragmentReassembler.COMPLETE, result);
        }
        final UnsafeBuffer original = new UnsafeBuffer(big);
        for (int i = 0; i < 1 << 20; i += 4093)
        {
            assertEquals(original.getByte(RdsHeader.LENGTH + i), reassembler.message().getByte(RdsHeader.LENGTH + i));
        }
    }

    @Test
    void aFullRingStopsAFrameAndCompletionsLetItGoOn()
    {
        final FakeSlots slots = new FakeSlots(16);
        final IbCredits credits = new IbCredits();
        credits.reset(1000);
        final FragmentWriter writer = new FragmentWriter(slots, credits);
        final ByteBuffer frame = frame(7, 20 * Fragments.FRAGMENT_PAYLOAD + 100); // 21 fragments
        assertEquals(FragmentWriter.NO_SLOT, writer.write(frame));
        assertEquals(RdsHeader.LENGTH + 16 * Fragments.FRAGMENT_PAYLOAD, frame.position());
        writer.onCompleted(slots.complete(16));
        assertEquals(FragmentWriter.DONE, writer.write(frame));
        assertEquals(5, slots.inFlight());
        assertEquals(RdsHeader.LENGTH + 100, slots.lengths[(int)((slots.head - 1) % 16)], "the last slice is short");
    }

    @Test
    void creditsAreAdvertisedInTheFirstHeadersAtMost255Each()
    {
        final FakeSlots slots = new FakeSlots(16);
        final IbCredits credits = new IbCredits();
        credits.reset(100);
        credits.onReceivesPosted(300);
        final FragmentWriter writer = new FragmentWriter(slots, credits);
        assertEquals(FragmentWriter.DONE, writer.write(frame(1, 3 * Fragments.FRAGMENT_PAYLOAD)));
        assertEquals(255, RdsHeader.credit(slots.buffer, slots.offset(0)));
        assertEquals(45, RdsHeader.credit(slots.buffer, slots.offset(1)));
        assertEquals(0, RdsHeader.credit(slots.buffer, slots.offset(2)));
        assertEquals(RdsHeader.VALID, RdsHeader.validate(slots.buffer, slots.offset(1)), "checksum redone with the credit");
    }

    @Test
    void oneAckOnlyFrameInFlightAtMost()
    {
        final FakeSlots slots = new FakeSlots(16);
        final IbCredits credits = new IbCredits();
        credits.reset(100);
        final FragmentWriter writer = new FragmentWriter(slots, credits);
        assertEquals(FragmentWriter.DONE, writer.write(ackOnly(3)));
        final ByteBuffer second = ackOnly(4);
        assertEquals(FragmentWriter.ACK_IN_FLIGHT, writer.write(second));
        assertEquals(0, second.position(), "the second waits whole");
        assertEquals(FragmentWriter.DONE, writer.write(frame(9, 10)), "data is not held up by it");
        writer.onCompleted(slots.complete(1));
        assertEquals(FragmentWriter.DONE, writer.write(second));
    }

    @Test
    void theHeldBackCreditGoesOnlyWithAnAdvertisement()
    {
        final FakeSlots slots = new FakeSlots(16);
        final IbCredits credits = new IbCredits();
        credits.reset(1);
        final FragmentWriter writer = new FragmentWriter(slots, credits);
        final ByteBuffer update = ackOnly(0);
        assertEquals(FragmentWriter.NO_CREDIT, writer.write(update), "nothing to advertise: the last credit stays");
        credits.onReceivesPosted(16);
        assertEquals(FragmentWriter.DONE, writer.write(update));
        assertEquals(16, RdsHeader.credit(slots.buffer, slots.offset(0)));
    }
}
