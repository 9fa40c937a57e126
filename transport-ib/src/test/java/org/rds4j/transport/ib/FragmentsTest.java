package org.rds4j.transport.ib;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FragmentsTest
{
    private final UnsafeBuffer frame = new UnsafeBuffer(ByteBuffer.allocateDirect(RdsHeader.LENGTH + RdsHeader.MAX_PAYLOAD));
    private final UnsafeBuffer slots = new UnsafeBuffer(ByteBuffer.allocateDirect(256 * Fragments.FRAGMENT_BYTES));
    private final FragmentReassembler reassembler = new FragmentReassembler();

    @Test
    void fragmentCounts()
    {
        assertEquals(1, Fragments.count(0), "an empty message still takes a fragment");
        assertEquals(1, Fragments.count(1));
        assertEquals(1, Fragments.count(4096));
        assertEquals(2, Fragments.count(4097));
        assertEquals(2, Fragments.count(8192), "a congestion map is two fragments");
        assertEquals(256, Fragments.count(RdsHeader.MAX_PAYLOAD));
        assertEquals(4096, Fragments.payloadOf(4097, 0));
        assertEquals(1, Fragments.payloadOf(4097, 1));
    }

    @Test
    void aOneMebibyteMessageSpans256FragmentsAndComesBackWhole()
    {
        final int length = RdsHeader.MAX_PAYLOAD;
        stamp(77, length, 5000, 7000);
        final int count = Fragments.count(length);
        assertEquals(256, count);
        for (int i = 0; i < count; i++)
        {
            final int written = Fragments.write(frame, 0, i, i == 0 ? 200 : 0, slots, i * Fragments.FRAGMENT_BYTES);
            assertEquals(RdsHeader.LENGTH + 4096, written);
            assertEquals(RdsHeader.VALID, RdsHeader.validate(slots, i * Fragments.FRAGMENT_BYTES), "fragment " + i);
        }
        assertEquals(200, RdsHeader.credit(slots, 0), "the first fragment advertises");
        assertTrue(RdsHeader.checksumField(slots, 0) != 0, "and its checksum covers the credit");
        for (int i = 0; i < count - 1; i++)
        {
            assertEquals(FragmentReassembler.INCOMPLETE,
                reassembler.onFragment(slots, i * Fragments.FRAGMENT_BYTES, Fragments.FRAGMENT_BYTES));
        }
        assertEquals(FragmentReassembler.COMPLETE,
            reassembler.onFragment(slots, (count - 1) * Fragments.FRAGMENT_BYTES, Fragments.FRAGMENT_BYTES));
        assertEquals(77, RdsHeader.sequence(reassembler.message(), 0));
        for (int i = 0; i < length; i += 997)
        {
            assertEquals(frame.getByte(RdsHeader.LENGTH + i), reassembler.message().getByte(RdsHeader.LENGTH + i), "byte " + i);
        }
        assertEquals(frame.getByte(RdsHeader.LENGTH + length - 1), reassembler.message().getByte(RdsHeader.LENGTH + length - 1));
    }

    @Test
    void emptyAndShortMessagesAreOneFragmentHandedOnWhereTheyAre()
    {
        stamp(3, 0, 5000, 7000);
        assertEquals(RdsHeader.LENGTH, Fragments.write(frame, 0, 0, 0, slots, 0));
        assertEquals(FragmentReassembler.WHOLE, reassembler.onFragment(slots, 0, RdsHeader.LENGTH));
        stamp(4, 10, 5000, 7000);
        assertEquals(RdsHeader.LENGTH + 10, Fragments.write(frame, 0, 0, 0, slots, 0));
        assertEquals(FragmentReassembler.WHOLE, reassembler.onFragment(slots, 0, RdsHeader.LENGTH + 10));
        stamp(5, Fragments.FRAGMENT_PAYLOAD, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, Fragments.FRAGMENT_BYTES);
        assertEquals(FragmentReassembler.WHOLE,
            reassembler.onFragment(slots, Fragments.FRAGMENT_BYTES, Fragments.FRAGMENT_BYTES), "a full fragment");
        for (int i = 0; i < RdsHeader.LENGTH + 10; i++)
        {
            assertEquals(0, reassembler.message().getByte(i), "nothing copied, byte " + i);
        }

        // the next message of several fragments is rebuilt as before
        stamp(6, 5000, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, 0);
        Fragments.write(frame, 0, 1, 0, slots, Fragments.FRAGMENT_BYTES);
        assertEquals(FragmentReassembler.INCOMPLETE, reassembler.onFragment(slots, 0, Fragments.FRAGMENT_BYTES));
        assertEquals(FragmentReassembler.COMPLETE,
            reassembler.onFragment(slots, Fragments.FRAGMENT_BYTES, RdsHeader.LENGTH + 5000 - 4096));
        assertEquals(6, RdsHeader.sequence(reassembler.message(), 0));
        assertEquals(frame.getByte(RdsHeader.LENGTH + 4999), reassembler.message().getByte(RdsHeader.LENGTH + 4999));
    }

    @Test
    void aMessageOfOneFragmentMustCarryItsWholeLength()
    {
        stamp(3, 10, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, 0);
        assertEquals(FragmentReassembler.BAD_LENGTH, reassembler.onFragment(slots, 0, RdsHeader.LENGTH + 9), "short");
        assertEquals(FragmentReassembler.BAD_LENGTH, reassembler.onFragment(slots, 0, RdsHeader.LENGTH + 11), "long");
        assertEquals(FragmentReassembler.WHOLE, reassembler.onFragment(slots, 0, RdsHeader.LENGTH + 10));
    }

    @Test
    void anAckOnlyFrameMayArriveBetweenTwoFragments()
    {
        stamp(9, 5000, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, 0);
        Fragments.write(frame, 0, 1, 0, slots, Fragments.FRAGMENT_BYTES);
        final int ackAt = 2 * Fragments.FRAGMENT_BYTES;
        RdsHeader.write(slots, ackAt, 0, 41, 0, 0, 0, 0, 12);
        assertEquals(FragmentReassembler.INCOMPLETE, reassembler.onFragment(slots, 0, Fragments.FRAGMENT_BYTES));
        assertEquals(FragmentReassembler.ACK_ONLY, reassembler.onFragment(slots, ackAt, RdsHeader.LENGTH));
        assertEquals(FragmentReassembler.COMPLETE,
            reassembler.onFragment(slots, Fragments.FRAGMENT_BYTES, RdsHeader.LENGTH + 5000 - 4096));
    }

    @Test
    void aFragmentThatDisagreesWithItsMessageBreaksTheConnection()
    {
        stamp(9, 5000, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, 0);
        stamp(10, 5000, 5000, 7000);
        Fragments.write(frame, 0, 1, 0, slots, Fragments.FRAGMENT_BYTES);
        assertEquals(FragmentReassembler.INCOMPLETE, reassembler.onFragment(slots, 0, Fragments.FRAGMENT_BYTES));
        assertEquals(FragmentReassembler.HEADER_MISMATCH,
            reassembler.onFragment(slots, Fragments.FRAGMENT_BYTES, RdsHeader.LENGTH + 904), "another sequence");

        stamp(9, 5000, 5000, 7001);
        Fragments.write(frame, 0, 1, 0, slots, Fragments.FRAGMENT_BYTES);
        stamp(9, 5000, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, 0);
        assertEquals(FragmentReassembler.INCOMPLETE, reassembler.onFragment(slots, 0, Fragments.FRAGMENT_BYTES),
            "the failure reset the state: a new message starts");
        assertEquals(FragmentReassembler.HEADER_MISMATCH,
            reassembler.onFragment(slots, Fragments.FRAGMENT_BYTES, RdsHeader.LENGTH + 904), "another port");

        stamp(10, 10, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, Fragments.FRAGMENT_BYTES);
        assertEquals(FragmentReassembler.INCOMPLETE, reassembler.onFragment(slots, 0, Fragments.FRAGMENT_BYTES));
        assertEquals(FragmentReassembler.HEADER_MISMATCH,
            reassembler.onFragment(slots, Fragments.FRAGMENT_BYTES, RdsHeader.LENGTH + 10), "a message of one fragment");
        assertEquals(FragmentReassembler.WHOLE,
            reassembler.onFragment(slots, Fragments.FRAGMENT_BYTES, RdsHeader.LENGTH + 10), "the state was reset");
    }

    @Test
    void aFragmentOfTheWrongSizeBreaksTheConnection()
    {
        stamp(9, 5000, 5000, 7000);
        Fragments.write(frame, 0, 0, 0, slots, 0);
        assertEquals(FragmentReassembler.BAD_LENGTH, reassembler.onFragment(slots, 0, RdsHeader.LENGTH + 100),
            "a first fragment must be full when more follow");
        assertEquals(FragmentReassembler.BAD_LENGTH, reassembler.onFragment(slots, 0, 20), "shorter than a header");
        Fragments.write(frame, 0, 1, 0, slots, 0);
        assertEquals(FragmentReassembler.INCOMPLETE, reassembler.onFragment(slots, 0, Fragments.FRAGMENT_BYTES),
            "taken as a first fragment: same header");
        assertEquals(FragmentReassembler.BAD_LENGTH, reassembler.onFragment(slots, 0, RdsHeader.LENGTH + 905),
            "the last slice is 904 bytes");
    }

    @Test
    void aHeaderWhoseChecksumComesOutAsZeroIsAccepted()
    {
        // a ping from port 65535: the header's 16-bit words add up to 0xFFFF, so its checksum is 0 (the kernel's
        // ip_fast_csum gives 0 too); 0 reads as "not checksummed", and such a header must not break the connection
        RdsHeader.write(frame, 0, 0, 0, 0, 0xFFFF, 0, 0, 0);
        RdsHeader.writeChecksum(frame, 0);
        assertEquals(0, RdsHeader.checksumField(frame, 0));
        assertNull(Fragments.checkReceived(frame, 0, RdsHeader.LENGTH));

        stamp(5, 100, 4000, 5000);
        RdsHeader.writeChecksum(frame, 0);
        assertNull(Fragments.checkReceived(frame, 0, RdsHeader.LENGTH + 100));
        frame.putByte(RdsHeader.CREDIT_OFFSET, (byte)3); // changed after the checksum was made
        assertNotNull(Fragments.checkReceived(frame, 0, RdsHeader.LENGTH + 100), "a checksum that does not verify");
        frame.putByte(RdsHeader.CREDIT_OFFSET, (byte)0);
        assertNotNull(Fragments.checkReceived(frame, 0, RdsHeader.LENGTH - 1), "shorter than a header");
        assertNotNull(Fragments.checkReceived(frame, 0, Fragments.FRAGMENT_BYTES + 1), "longer than a fragment");
    }

    private void stamp(final long sequence, final int length, final int sport, final int dport)
    {
        RdsHeader.write(frame, 0, sequence, 5, length, sport, dport, 0, 0);
        for (int i = 0; i < length; i++)
        {
            frame.putByte(RdsHeader.LENGTH + i, (byte)(i * 31 + sequence));
        }
    }
}
