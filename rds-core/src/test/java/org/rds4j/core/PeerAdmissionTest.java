package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.Admission;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The admission policy with fake time: exact verdicts and counts for the allow-list, the per-pair rate and its
 * block, the cap on node pairs, and the bound on what it remembers.
 */
class PeerAdmissionTest
{
    private static final long MS = 1_000_000L;
    private static final long T0 = 5_000 * MS;
    private static final InetAddress LOCAL = ip("10.0.0.1");
    private static final InetAddress REMOTE = ip("10.0.0.2");

    private final StackCounters counters = new StackCounters();

    private PeerAdmission admission(final RdsStackConfig.Builder config)
    {
        return new PeerAdmission(config.build(), counters);
    }

    @Test
    void theConnectionOverTheRateWithinOneSecondIsRefused()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder());
        for (int i = 0; i < 20; i++)
        {
            assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, T0 + i * 49 * MS), "connection " + i);
        }
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, T0 + 999 * MS), "the 21st");
        assertEquals(1, counters.connRefusedRate.get());
        assertEquals(0, counters.connRefusedLimit.get() + counters.connRefusedNotAllowed.get());
    }

    @Test
    void aNewWindowStartsOneSecondAfterTheFirstConnection()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder().peerConnectRate(3));
        for (int i = 0; i < 3; i++)
        {
            assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, T0 + i * MS));
        }
        for (int i = 0; i < 3; i++)
        {
            assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, T0 + 1000 * MS + i * MS));
        }
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, T0 + 1999 * MS));
        assertEquals(1, counters.connRefusedRate.get());
    }

    @Test
    void aPairOverTheRateIsRefusedForExactlyTheBlockTime()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder().peerConnectRate(2));
        admission.admitIncoming(LOCAL, REMOTE, T0);
        admission.admitIncoming(LOCAL, REMOTE, T0);
        final long blockedAt = T0 + 10 * MS;
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, blockedAt));
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, blockedAt + 5_000 * MS));
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, blockedAt + PeerAdmission.BLOCK_NS - 1));
        assertEquals(3, counters.connRefusedRate.get(), "every refusal in the block is counted");
        assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, blockedAt + PeerAdmission.BLOCK_NS));
        assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, blockedAt + PeerAdmission.BLOCK_NS + MS));
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, blockedAt + PeerAdmission.BLOCK_NS + 2 * MS),
            "after the block the rate counts afresh");
        assertEquals(4, counters.connRefusedRate.get());
    }

    @Test
    void theBlockIsPerPairNotPerAddress()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder().peerConnectRate(1));
        admission.admitIncoming(LOCAL, REMOTE, T0);
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, T0 + MS));
        assertEquals(Admission.ADMITTED, admission.admitIncoming(ip("10.0.0.3"), REMOTE, T0 + 2 * MS),
            "the same remote address to another local address is another pair");
        assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, ip("10.0.0.4"), T0 + 3 * MS));
        assertEquals(1, counters.connRefusedRate.get());
    }

    @Test
    void sixtyFourPairsFromOneRemoteAddressInOneSecondAreAllAdmitted()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder());
        final InetAddress sender = ip("127.0.0.1");
        for (int i = 1; i <= 64; i++)
        {
            final InetAddress local = ip("127.0.1." + i);
            assertEquals(Admission.ADMITTED, admission.admitIncoming(local, sender, T0 + i * MS), "pair " + i);
            admission.onConnection(local, sender);
        }
        assertEquals(0, counters.connRefusedRate.get() + counters.connRefusedLimit.get());
        assertEquals(64, admission.knownPairs());
    }

    @Test
    void theCapCountsPairsAndKnownPairsPassIt()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder().maxPeers(3));
        assertTrue(admission.admitOutgoing(LOCAL, REMOTE), "a connect the stack makes counts toward the cap");
        final InetAddress other = ip("10.0.0.9");
        assertEquals(Admission.ADMITTED, admission.admitIncoming(other, REMOTE, T0));
        admission.onConnection(other, REMOTE);
        assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, ip("10.0.0.3"), T0));
        assertEquals(2, admission.knownPairs(), "admitted, but no connection made for it yet");
        admission.onConnection(LOCAL, ip("10.0.0.3"));
        assertEquals(3, admission.knownPairs());

        assertEquals(Admission.PEER_LIMIT, admission.admitIncoming(LOCAL, ip("10.0.0.4"), T0 + MS));
        assertEquals(Admission.PEER_LIMIT, admission.admitIncoming(ip("10.0.0.8"), REMOTE, T0 + MS),
            "a known remote address to another local address is a new pair");
        assertEquals(2, counters.connRefusedLimit.get());
        for (int i = 0; i < 5; i++)
        {
            assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, T0 + (2 + i) * MS), "known pair " + i);
            assertEquals(Admission.ADMITTED, admission.admitIncoming(other, REMOTE, T0 + (2 + i) * MS), "known pair " + i);
        }
        admission.onConnection(LOCAL, REMOTE);
        assertEquals(3, admission.knownPairs(), "a pair is counted once");
        assertTrue(admission.admitOutgoing(LOCAL, ip("10.0.0.5")), "the stack's own connects are never capped");
        assertEquals(4, admission.knownPairs());
        assertEquals(2, counters.connRefusedLimit.get());
        assertEquals(0, counters.connRefusedRate.get());
    }

    @Test
    void theRateIsCheckedBeforeTheCapAndCountsWhatTheCapRefuses()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder().maxPeers(1).peerConnectRate(2));
        admission.onConnection(LOCAL, REMOTE);
        final InetAddress stranger = ip("10.0.0.7");
        assertEquals(Admission.PEER_LIMIT, admission.admitIncoming(LOCAL, stranger, T0));
        assertEquals(Admission.PEER_LIMIT, admission.admitIncoming(LOCAL, stranger, T0));
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, stranger, T0));
        assertEquals(2, counters.connRefusedLimit.get());
        assertEquals(1, counters.connRefusedRate.get());
    }

    @Test
    void theAllowListRefusesBothWaysBeforeAnythingElse()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder().allowedPeers("10.0.0.0/30").peerConnectRate(1)
            .maxPeers(1));
        final InetAddress outside = ip("10.0.0.4");
        for (int i = 0; i < 3; i++)
        {
            assertEquals(Admission.NOT_ALLOWED, admission.admitIncoming(LOCAL, outside, T0));
        }
        assertFalse(admission.admitOutgoing(LOCAL, outside));
        assertEquals(4, counters.connRefusedNotAllowed.get());
        assertEquals(0, counters.connRefusedRate.get() + counters.connRefusedLimit.get(),
            "a refused address uses neither the rate nor the cap");
        assertEquals(0, admission.knownPairs());
        assertEquals(0, admission.trackedPairs());
        assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, T0));
        assertTrue(admission.admitOutgoing(LOCAL, ip("10.0.0.3")));
    }

    @Test
    void memoryIsBoundedAndTheLeastRecentlySeenForgotten()
    {
        final PeerAdmission admission = admission(RdsStackConfig.builder().peerConnectRate(1).allowedPeers("10.0.0.0/8"));
        admission.admitIncoming(LOCAL, REMOTE, T0);
        assertEquals(Admission.RATE_LIMITED, admission.admitIncoming(LOCAL, REMOTE, T0), "blocked");
        for (int i = 0; i < PeerAdmission.TRACKED + 100; i++)
        {
            final InetAddress address = ip("11." + (i >> 16 & 0xFF) + "." + (i >> 8 & 0xFF) + "." + (i & 0xFF));
            assertEquals(Admission.NOT_ALLOWED, admission.admitIncoming(LOCAL, address, T0));
            admission.admitIncoming(address, REMOTE, T0);
        }
        assertEquals(PeerAdmission.TRACKED, admission.trackedPairs());
        assertEquals(PeerAdmission.TRACKED, admission.trackedNotAllowed());
        assertEquals(Admission.ADMITTED, admission.admitIncoming(LOCAL, REMOTE, T0 + MS),
            "the least recently seen pair, and its block, were forgotten");
    }
}
