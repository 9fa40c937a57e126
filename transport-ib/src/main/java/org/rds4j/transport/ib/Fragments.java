package org.rds4j.transport.ib;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.rds4j.core.wire.RdsHeader;

/**
 * How RDS over IB cuts a message into fragments, as the kernel's {@code rds_ib_xmit}: a message of {@code len}
 * payload bytes travels as {@code max(1, ceil(len / 4096))} fragments, each a copy of the message's 48-byte
 * header followed by the next at most 4096 payload bytes. Every copy carries the same sequence, length and
 * ports; only the credit byte (and so the checksum) may differ between them.
 */
final class Fragments
{
    /** Payload bytes per fragment, the kernel's {@code RDS_FRAG_SIZE}. */
    static final int FRAGMENT_PAYLOAD = 4096;
    /** Bytes of one fragment buffer: a header and a full payload slice. */
    static final int FRAGMENT_BYTES = RdsHeader.LENGTH + FRAGMENT_PAYLOAD;

    private Fragments()
    {
    }

    /**
     * @param payloadLength a message's payload bytes.
     * @return how many fragments carry it; a message with no payload still takes one.
     */
    static int count(final long payloadLength)
    {
        return payloadLength == 0 ? 1 : (int)((payloadLength + FRAGMENT_PAYLOAD - 1) / FRAGMENT_PAYLOAD);
    }

    /**
     * The checks a received fragment passes before anything in it is used: its size (a header, at most a full
     * slice) and {@link RdsHeader#validate}, which includes the checksum: a non-zero checksum must verify, and 0
     * means "not checksummed", as the kernel's {@code rds_message_verify_checksum} has it. Both the kernel and rds4j
     * checksum every IB header, but a header whose checksum comes out as 0 (one in 65,535) is sent with 0, so 0
     * cannot be refused.
     *
     * @param buffer the receive buffer.
     * @param offset where the fragment's header starts.
     * @param length the bytes the completion reported.
     * @return null if the fragment may be processed, else why not (the connection must be dropped).
     */
    static String checkReceived(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < RdsHeader.LENGTH || length > FRAGMENT_BYTES)
        {
            return "fragment of " + length + " bytes";
        }
        final int verdict = RdsHeader.validate(buffer, offset);
        return verdict == RdsHeader.VALID ? null : RdsHeader.describeValidation(verdict);
    }

    /**
     * @param payloadLength a message's payload bytes.
     * @param index         a fragment's index, 0-based.
     * @return the payload bytes that fragment carries.
     */
    static int payloadOf(final long payloadLength, final int index)
    {
        return (int)Math.min(FRAGMENT_PAYLOAD, payloadLength - (long)index * FRAGMENT_PAYLOAD);
    }

    /**
     * Writes one fragment of a stamped frame into a fragment buffer: the header with {@code credit} in its
     * credit byte and the checksum made again, then that fragment's payload slice.
     *
     * @param frame       the frame: header at {@code frameOffset}, payload right after it.
     * @param frameOffset where the frame's header starts.
     * @param index       which fragment, 0-based.
     * @param credit      receive buffers this fragment advertises, 0..255.
     * @param slot        the fragment buffer.
     * @param slotOffset  where to write in it; {@link #FRAGMENT_BYTES} must fit.
     * @return the bytes written: 48 plus the slice's length.
     */
    static int write(
        final DirectBuffer frame,
        final int frameOffset,
        final int index,
        final int credit,
        final MutableDirectBuffer slot,
        final int slotOffset)
    {
        final long payloadLength = RdsHeader.length(frame, frameOffset);
        final int slice = payloadOf(payloadLength, index);
        slot.putBytes(slotOffset, frame, frameOffset, RdsHeader.LENGTH);
        slot.putByte(slotOffset + RdsHeader.CREDIT_OFFSET, (byte)credit);
        RdsHeader.writeChecksum(slot, slotOffset);
        slot.putBytes(slotOffset + RdsHeader.LENGTH, frame,
            frameOffset + RdsHeader.LENGTH + index * FRAGMENT_PAYLOAD, slice);
        return RdsHeader.LENGTH + slice;
    }
}
