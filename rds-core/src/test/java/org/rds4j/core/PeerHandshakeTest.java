package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PeerHandshakeTest
{
    private final PeerHandshake handshake = new PeerHandshake("test");

    @Test
    void aChangedGenerationIsARestart()
    {
        assertEquals(0, handshake.onGeneration(0x10), "the first generation is news, not a restart");
        assertEquals(0, handshake.onGeneration(0x10));
        assertEquals(0, handshake.onGeneration(0), "a handshake without a generation tells nothing");
        assertEquals(0x10, handshake.onGeneration(0x11));
        assertEquals(0, handshake.onGeneration(0x11));
    }

    @Test
    void aKernelTcpPeerCountsTransportAcksAndIsNotProbedAgain()
    {
        final FakeTransportPath first = reporting(true);
        assertTrue(handshake.onPathUp(first, true));
        assertEquals(PeerKind.RDS_ACKS, handshake.kind());
        handshake.learnAckRule(0, first);
        assertEquals(PeerKind.KERNEL_TRANSPORT_ACKED, handshake.kind());
        assertTrue(first.reportingTransportAcks);

        final FakeTransportPath second = reporting(true);
        assertFalse(handshake.onPathUp(second, true), "no probe: it would move the kernel's next sequence back to 1");
        assertTrue(second.reportingTransportAcks);

        handshake.learnAckRule(0x5, second);
        assertEquals(PeerKind.RDS_ACKS, handshake.kind(), "a generation: a peer that acks");
        assertFalse(second.reportingTransportAcks);
    }

    @Test
    void aPathThatCannotCountTransportAcksKeepsWaitingForRdsAcks()
    {
        final FakeTransportPath first = reporting(true);
        handshake.onPathUp(first, true);
        handshake.learnAckRule(0, first);
        final FakeTransportPath second = reporting(false);
        assertTrue(handshake.onPathUp(second, true));
        assertEquals(PeerKind.RDS_ACKS, handshake.kind());
        handshake.learnAckRule(0, second);
        assertEquals(PeerKind.RDS_ACKS, handshake.kind());
    }

    @Test
    void aPeerTheTransportKnowsAsKernelTakesNoProbesOnThatPathOnly()
    {
        final FakeTransportPath kernel = reporting(true);
        kernel.peerIsKernel = true;
        assertFalse(handshake.onPathUp(kernel, true));
        assertEquals(PeerKind.KERNEL_WITHOUT_PROBES, handshake.kind());
        handshake.learnAckRule(0, kernel);
        assertEquals(PeerKind.KERNEL_WITHOUT_PROBES, handshake.kind(), "the transport's rule stands");
        assertFalse(kernel.reportingTransportAcks);

        assertTrue(handshake.onPathUp(reporting(false), true));
        assertEquals(PeerKind.RDS_ACKS, handshake.kind());
    }

    @Test
    void aTransportWithoutHandshakeNeedsNone()
    {
        assertFalse(handshake.onPathUp(reporting(false), false));
    }

    private static FakeTransportPath reporting(final boolean can)
    {
        final FakeTransportPath path = new FakeTransportPath(null);
        path.canReportTransportAcks = can;
        return path;
    }
}
