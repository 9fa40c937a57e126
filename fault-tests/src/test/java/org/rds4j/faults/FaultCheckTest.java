package org.rds4j.faults;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** FaultCheck finds each kind of broken stream in summary lines; StreamContent is deterministic. */
class FaultCheckTest
{
    private static String pair(final String peer, final long sent, final String sentSha, final long received,
        final String receivedSha, final long peerSent, final long lost, final long duplicated, final long reordered)
    {
        return "{\"peer\":\"" + peer + "\",\"sent\":" + sent + ",\"sent_bytes\":" + sent * 10 + ",\"sent_sha256\":\"" + sentSha
            + "\",\"end_sent\":true,\"unacked_bytes\":0,\"received\":" + received + ",\"received_bytes\":" + received * 10
            + ",\"received_sha256\":\"" + receivedSha + "\",\"end_received\":true,\"peer_sent\":" + peerSent
            + ",\"lost\":" + lost + ",\"duplicated\":" + duplicated + ",\"reordered\":" + reordered
            + ",\"corrupt\":0,\"unexpected\":0,\"after_end\":0,\"peer_up\":1,\"peer_down\":0}";
    }

    private static NodeSummary node(final String node, final String pair)
    {
        return NodeSummary.parse("{\"node\":\"" + node + "\",\"complete\":true,\"elapsed_ms\":5,\"send_ms\":4,\"pairs\":["
            + pair + "],\"counters\":{\"conn_reset\":3,\"send_retransmitted\":7}}");
    }

    @Test
    void exactStreamsPass()
    {
        final FaultCheck.Result result = FaultCheck.check(List.of(
            node("a", pair("b", 5, "s1", 6, "s2", 6, 0, 0, 0)),
            node("b", pair("a", 6, "s2", 5, "s1", 5, 0, 0, 0))));
        assertTrue(result.passed(), result.problems().toString());
        assertEquals(2, result.pairs());
        assertEquals(11, result.messages());
        assertEquals(110, result.bytes());
        assertEquals(6, result.connResets());
        assertEquals(14, result.retransmitted());
    }

    @Test
    void eachBrokenRuleIsReported()
    {
        // b got 4 of a's 5 (one lost), one duplicate and one reordered, and a different SHA-256
        final FaultCheck.Result result = FaultCheck.check(List.of(
            node("a", pair("b", 5, "s1", 6, "s2", 6, 0, 0, 0)),
            node("b", pair("a", 6, "s2", 4, "other", 5, 1, 1, 1))));
        assertFalse(result.passed());
        final String problems = String.join("\n", result.problems());
        for (final String expected : List.of("a->b: received vs sent = 4, expected 5", "a->b: SHA-256", "a->b: lost = 1",
            "a->b: duplicated = 1", "a->b: reordered = 1"))
        {
            assertTrue(problems.contains(expected), expected + " missing in:\n" + problems);
        }
        assertFalse(problems.contains("b->a"), problems);
    }

    @Test
    void floorsFailExactStreamsThatProveTooLittle()
    {
        // a->b delivered 5, b->a 6; each node retransmitted 7
        final List<NodeSummary> nodes = List.of(
            node("a", pair("b", 5, "s1", 6, "s2", 6, 0, 0, 0)),
            node("b", pair("a", 6, "s2", 5, "s1", 5, 0, 0, 0)));
        assertTrue(FaultCheck.check(nodes, 5, 7).passed());
        final FaultCheck.Result result = FaultCheck.check(nodes, 6, 8);
        assertEquals(List.of("a: send_retransmitted = 7, expected at least 8", "a->b: received = 5, expected at least 6",
            "b: send_retransmitted = 7, expected at least 8"), result.problems());
    }

    @Test
    void streamContentDependsOnlyOnSeedPairAndIndex()
    {
        final StreamContent content = new StreamContent(42, 4096);
        final ByteBuffer one = content.fill(ByteBuffer.allocate(4096), 0, 1, 17);
        assertEquals(one, content.fill(ByteBuffer.allocate(4096), 0, 1, 17));
        assertEquals(17, one.getLong(0));
        assertTrue(one.remaining() >= StreamContent.INDEX_BYTES && one.remaining() <= 4096);
        assertNotEquals(one, content.fill(ByteBuffer.allocate(4096), 1, 0, 17));
        assertNotEquals(one, content.fill(ByteBuffer.allocate(4096), 0, 1, 18));
        assertNotEquals(one, new StreamContent(43, 4096).fill(ByteBuffer.allocate(4096), 0, 1, 17));
    }
}
