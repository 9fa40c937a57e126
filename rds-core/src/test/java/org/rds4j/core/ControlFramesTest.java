package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ControlFramesTest
{
    private final ControlFrames frames = new ControlFrames(true);
    private final CongestionMap map = new CongestionMap();

    @Test
    void theCongestionMapGoesOnEveryNewPathAndWhenItChanges()
    {
        frames.onPathUp(false);
        assertTrue(frames.hasOutput(map));
        assertTrue(frames.congestionDue(map));
        final ByteBuffer cong = frames.congestion(map);
        assertEquals(RdsHeader.LENGTH + CongestionMap.BYTES, cong.remaining());
        cong.position(10);
        frames.onPartial(cong);
        assertEquals(ControlFrames.Kind.CONGESTION, frames.inProgress());
        assertSame(cong, frames.resume());
        assertFalse(frames.congestionDue(map), "not while it is being written");

        cong.position(cong.limit());
        assertEquals(ControlFrames.Kind.CONGESTION, frames.onWritten(cong));
        frames.onAllWritten();
        assertFalse(frames.hasOutput(map));
        map.set(3);
        assertTrue(frames.congestionDue(map));
        frames.onPathUp(false);
        frames.congestion(map).position(RdsHeader.LENGTH + CongestionMap.BYTES);
        assertTrue(frames.congestionDue(map), "given but not reported written");
    }

    @Test
    void theProbeCarriesTheGenerationOnce()
    {
        frames.onPathUp(true);
        assertTrue(frames.probeDue());
        final ByteBuffer probe = frames.probe(1, 0x42);
        assertFalse(frames.probeDue());
        final UnsafeBuffer header = new UnsafeBuffer(probe);
        assertEquals(0x42, RdsHeader.generation(header, 0));
        assertEquals(RdsHeader.PROBE_PORT, RdsHeader.sport(header, 0));
        assertEquals(0, RdsHeader.sequence(header, 0));
        assertTrue(RdsHeader.isChecksumValid(header, 0));
        assertEquals(ControlFrames.Kind.PROBE, frames.kindOf(probe));
        frames.onNotWritten(probe);
        assertTrue(frames.probeDue(), "a probe given behind a write that stopped goes again");
    }

    @Test
    void aDataFrameNotBegunIsNotInProgress()
    {
        final ByteBuffer data = ByteBuffer.allocate(RdsHeader.LENGTH + 10);
        frames.onPartial(data);
        assertEquals(ControlFrames.Kind.NONE, frames.inProgress());
        data.position(1);
        frames.onPartial(data);
        assertEquals(ControlFrames.Kind.DATA, frames.inProgress());
        assertNull(frames.resume(), "the send queue's head is resumed by the path");
        frames.clear();
        assertEquals(ControlFrames.Kind.NONE, frames.inProgress());
    }

    @Test
    void aRequestedAckGoesOnceUnlessDataCarriesIt()
    {
        frames.requestAck();
        assertTrue(frames.ackWanted());
        frames.dataGiven();
        assertFalse(frames.ackWanted());
        frames.requestAck();
        final ByteBuffer ack = frames.ack(7);
        assertFalse(frames.ackWanted());
        assertEquals(7, frames.ackFilled());
        assertEquals(7, RdsHeader.ack(new UnsafeBuffer(ack), 0));
        ack.position(0);
        frames.onPartial(ack);
        assertEquals(ControlFrames.Kind.ACK, frames.inProgress(), "a control frame given is in progress");
        assertFalse(frames.ackFree());
    }

    @Test
    void aRequestedAckNotWrittenIsWantedAgainAndADueOneIsNot()
    {
        frames.requestAck();
        frames.onNotWritten(frames.ack(3));
        assertTrue(frames.ackWanted(), "a requested ack-only frame given behind a write that stopped goes again");
        frames.ack(3);
        frames.onAllWritten();
        assertFalse(frames.ackWanted());
        frames.onNotWritten(frames.ack(4));
        assertFalse(frames.ackWanted(), "one given because the ack rules made it due comes again by those rules");
    }
}
