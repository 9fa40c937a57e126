package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

/**
 * The frames a path makes itself (the congestion map, the handshake probe, the ack-only frame) and which frame,
 * control or data, a transport is part way through writing, to be resumed by the next fill. A control frame
 * given to a transport is in progress once any of it is written or not: giving it consumed what it carries. A
 * data frame not begun counts as not sent: it can still be cancelled, and is not marked RETRANSMITTED if the
 * path drops. Agent thread only; allocates only when made.
 */
final class ControlFrames
{
    /** The frame a transport is part way through. */
    enum Kind
    {
        /** None: the next fill starts afresh. */
        NONE,
        /** The congestion map. */
        CONGESTION,
        /** The handshake probe. */
        PROBE,
        /** An ack-only frame. */
        ACK,
        /** The first unsent message of the send queue. */
        DATA
    }

    private final boolean checksums;
    private final ByteBuffer congFrame = ByteBuffer.allocateDirect(RdsHeader.LENGTH + CongestionMap.BYTES);
    private final UnsafeBuffer congBuffer = new UnsafeBuffer(congFrame);
    private final ByteBuffer probeFrame = ByteBuffer.allocateDirect(RdsHeader.LENGTH);
    private final UnsafeBuffer probeBuffer = new UnsafeBuffer(probeFrame);
    private final ByteBuffer ackFrame = ByteBuffer.allocateDirect(RdsHeader.LENGTH);
    private final UnsafeBuffer ackBuffer = new UnsafeBuffer(ackFrame);
    private Kind inProgress = Kind.NONE;
    private long congVersionSent = -1;
    private long congVersionFilled;
    private long ackFilled;
    private boolean probeDue;
    /** A transport asked for an ack-only frame whatever the ack state (IB: to carry a credit update). */
    private boolean ackWanted;
    /** The ack-only frame last given answers such a request: if it is not written, the request stands again. */
    private boolean ackGivenForRequest;

    /** @param checksums the transport wants header checksums. */
    ControlFrames(final boolean checksums)
    {
        this.checksums = checksums;
        clear();
    }

    /**
     * A transport connection came up: the congestion map goes first whatever was sent before.
     *
     * @param handshake a handshake probe follows it.
     */
    void onPathUp(final boolean handshake)
    {
        inProgress = Kind.NONE;
        congVersionSent = -1;
        probeDue = handshake;
        ackWanted = false;
    }

    /** The transport connection went: nothing is in progress. */
    void clear()
    {
        inProgress = Kind.NONE;
        congFrame.limit(0);
        probeFrame.limit(0);
        ackFrame.limit(0);
    }

    /** @return the frame a transport is part way through. */
    Kind inProgress()
    {
        return inProgress;
    }

    /** @return the control frame in progress, to give first; null if none is (or a data frame is). */
    ByteBuffer resume()
    {
        switch (inProgress)
        {
            case CONGESTION: return congFrame;
            case PROBE: return probeFrame;
            case ACK: return ackFrame;
            default: return null;
        }
    }

    /**
     * @param map the local congestion map.
     * @return true if it changed since it was last sent and is not being written.
     */
    boolean congestionDue(final CongestionMap map)
    {
        return inProgress != Kind.CONGESTION && congVersionSent != map.version();
    }

    /**
     * @param map the local congestion map.
     * @return it as a frame.
     */
    ByteBuffer congestion(final CongestionMap map)
    {
        congVersionFilled = map.version();
        RdsHeader.write(congBuffer, 0, 0, 0, CongestionMap.BYTES, 0, 0, RdsHeader.FLAG_CONG_BITMAP, 0);
        stampChecksum(congBuffer);
        map.copyTo(congBuffer, RdsHeader.LENGTH);
        congFrame.limit(congFrame.capacity()).position(0);
        return congFrame;
    }

    /** @return true if the handshake probe is still to be given. */
    boolean probeDue()
    {
        return probeDue;
    }

    /**
     * @param paths      the paths offered in the handshake.
     * @param generation this stack's generation.
     * @return the handshake probe: port 1 to port 0, unsequenced.
     */
    ByteBuffer probe(final int paths, final int generation)
    {
        probeDue = false;
        RdsHeader.write(probeBuffer, 0, 0, 0, 0, RdsHeader.PROBE_PORT, 0, 0, 0);
        RdsHeader.writeHandshakeExtensions(probeBuffer, 0, paths, generation);
        stampChecksum(probeBuffer);
        probeFrame.limit(RdsHeader.LENGTH).position(0);
        return probeFrame;
    }

    /** A transport wants an ack-only frame sent, once, unless a data frame goes first. */
    void requestAck()
    {
        ackWanted = true;
    }

    /** @return true if a transport asked for an ack-only frame. */
    boolean ackWanted()
    {
        return ackWanted;
    }

    /** A data frame was given: its header carries what a requested ack-only frame would. */
    void dataGiven()
    {
        ackWanted = false;
    }

    /** @return true if an ack-only frame may be given now: none is being written. */
    boolean ackFree()
    {
        return inProgress != Kind.ACK;
    }

    /**
     * @param ack the cumulative ack.
     * @return an ack-only frame carrying it.
     */
    ByteBuffer ack(final long ack)
    {
        ackGivenForRequest = ackWanted;
        ackWanted = false;
        ackFilled = ack;
        RdsHeader.write(ackBuffer, 0, 0, ack, 0, 0, 0, 0, 0);
        stampChecksum(ackBuffer);
        ackFrame.limit(RdsHeader.LENGTH).position(0);
        return ackFrame;
    }

    /** @return the ack the last ack-only frame carries. */
    long ackFilled()
    {
        return ackFilled;
    }

    /**
     * @param frame a frame given to a transport.
     * @return what it is: one of these control frames, or else a data frame.
     */
    Kind kindOf(final ByteBuffer frame)
    {
        return frame == congFrame ? Kind.CONGESTION : frame == ackFrame ? Kind.ACK : frame == probeFrame ? Kind.PROBE : Kind.DATA;
    }

    /**
     * A frame given was fully written.
     *
     * @param frame the frame.
     * @return what it was.
     */
    Kind onWritten(final ByteBuffer frame)
    {
        final Kind kind = kindOf(frame);
        if (kind == Kind.CONGESTION)
        {
            congVersionSent = congVersionFilled;
        }
        return kind;
    }

    /**
     * A write stopped part way: this frame is resumed by the next fill (a data frame not begun is simply given
     * again).
     *
     * @param frame the first frame with bytes remaining.
     */
    void onPartial(final ByteBuffer frame)
    {
        final Kind kind = kindOf(frame);
        inProgress = kind == Kind.DATA && frame.position() == 0 ? Kind.NONE : kind;
    }

    /**
     * A frame given after the one a write stopped in was not written at all: the probe, and an ack-only frame a
     * transport asked for, are given again (giving them cleared their flags); the others come again by themselves
     * (the congestion map's version and the ack state did not move).
     *
     * @param frame the frame not written.
     */
    void onNotWritten(final ByteBuffer frame)
    {
        if (frame == probeFrame)
        {
            probeDue = true;
        }
        else if (frame == ackFrame && ackGivenForRequest)
        {
            ackWanted = true;
        }
    }

    /** Every frame given was written. */
    void onAllWritten()
    {
        inProgress = Kind.NONE;
    }

    /**
     * @param map the local congestion map.
     * @return true if a control frame is in progress or due before anything else.
     */
    boolean hasOutput(final CongestionMap map)
    {
        return inProgress != Kind.NONE || congVersionSent != map.version() || probeDue;
    }

    private void stampChecksum(final UnsafeBuffer header)
    {
        if (checksums)
        {
            RdsHeader.writeChecksum(header, 0);
        }
    }
}
