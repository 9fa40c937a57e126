package org.rds4j.transport.ib;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

/**
 * Rebuilds the messages of one IB connection from their {@link Fragments}, as the kernel's
 * {@code rds_ib_process_recv}: the first fragment's header starts a message; every later fragment's header must
 * agree with it on sequence, length and ports (acks and credits may differ) and carry exactly the next slice,
 * or the connection is broken and must be dropped. An ack-only frame (ports 0, no payload) is not part of any
 * message and may arrive between two fragments of one.
 * <p>
 * A message of more than one fragment is rebuilt in one buffer as header then payload, the form
 * {@code ConnectionPath.onFrame} takes; a message in one fragment is already in that form where it was received, and
 * is handed on from there, uncopied. Headers must have passed {@link RdsHeader#validate} (the length is at most
 * 1 MiB). Agent thread only.
 */
final class FragmentReassembler
{
    /** {@link #onFragment} result: the fragment is an ack-only frame; hand it on as it is. */
    static final int ACK_ONLY = 1;
    /** {@link #onFragment} result: the fragment is a whole message (one fragment); hand it on from where it is. */
    static final int WHOLE = 4;
    /** {@link #onFragment} result: a message of several fragments is complete in {@link #message()}. */
    static final int COMPLETE = 2;
    /** {@link #onFragment} result: more fragments of the message are due. */
    static final int INCOMPLETE = 3;
    /** {@link #onFragment} result: the fragment's header disagrees with the message being rebuilt. */
    static final int HEADER_MISMATCH = -1;
    /** {@link #onFragment} result: the fragment carries more or fewer bytes than its place in the message. */
    static final int BAD_LENGTH = -2;

    private final UnsafeBuffer message =
        new UnsafeBuffer(ByteBuffer.allocateDirect(RdsHeader.LENGTH + RdsHeader.MAX_PAYLOAD));
    /** Fragments of the current message received so far; 0 when none is being rebuilt. */
    private int fragments;
    private long payloadLength;

    /**
     * Takes one received fragment.
     *
     * @param buffer the receive buffer.
     * @param offset where the fragment's header starts.
     * @param length bytes the completion reported: the header plus the payload slice.
     * @return {@link #ACK_ONLY}, {@link #WHOLE}, {@link #COMPLETE}, {@link #INCOMPLETE}, or a negative error after
     *         which the connection must be dropped (the state is reset).
     */
    int onFragment(final DirectBuffer buffer, final int offset, final int length)
    {
        final int slice = length - RdsHeader.LENGTH;
        if (slice < 0)
        {
            return fail(BAD_LENGTH);
        }
        if (slice == 0 && RdsHeader.sport(buffer, offset) == 0 && RdsHeader.dport(buffer, offset) == 0 &&
            !RdsHeader.isCongestionUpdate(buffer, offset))
        {
            return ACK_ONLY;
        }
        if (fragments == 0)
        {
            payloadLength = RdsHeader.length(buffer, offset);
            if (Fragments.count(payloadLength) == 1)
            {
                return slice == payloadLength ? WHOLE : fail(BAD_LENGTH);
            }
            message.putBytes(0, buffer, offset, RdsHeader.LENGTH);
        }
        else if (!sameMessage(buffer, offset))
        {
            return fail(HEADER_MISMATCH);
        }
        if (slice != Fragments.payloadOf(payloadLength, fragments))
        {
            return fail(BAD_LENGTH);
        }
        message.putBytes(RdsHeader.LENGTH + fragments * Fragments.FRAGMENT_PAYLOAD, buffer,
            offset + RdsHeader.LENGTH, slice);
        fragments++;
        if (fragments < Fragments.count(payloadLength))
        {
            return INCOMPLETE;
        }
        fragments = 0;
        return COMPLETE;
    }

    /** @return the message {@link #COMPLETE} reported: header at 0, payload after it. Valid until the next fragment. */
    DirectBuffer message()
    {
        return message;
    }

    /** Forgets a message in progress: the connection went down; its fragments will be sent again. */
    void reset()
    {
        fragments = 0;
    }

    private boolean sameMessage(final DirectBuffer buffer, final int offset)
    {
        return RdsHeader.sequence(buffer, offset) == RdsHeader.sequence(message, 0) &&
            RdsHeader.length(buffer, offset) == payloadLength &&
            RdsHeader.sport(buffer, offset) == RdsHeader.sport(message, 0) &&
            RdsHeader.dport(buffer, offset) == RdsHeader.dport(message, 0);
    }

    private int fail(final int result)
    {
        fragments = 0;
        return result;
    }
}
