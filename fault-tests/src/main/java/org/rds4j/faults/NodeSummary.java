package org.rds4j.faults;

import org.rds4j.samples.Json;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON summary line a {@link FaultNode} prints at the end:
 * <pre>
 * {"node":IP,"complete":BOOL,"elapsed_ms":N,"send_ms":N,
 *  "pairs":[{"peer":IP,"sent":N,"sent_bytes":N,"sent_sha256":HEX,"end_sent":BOOL,"unacked_bytes":N,
 *            "received":N,"received_bytes":N,"received_sha256":HEX,"end_received":BOOL,"peer_sent":N,
 *            "lost":N,"duplicated":N,"reordered":N,"corrupt":N,"unexpected":N,"after_end":N,"peer_up":N,"peer_down":N}, ...],
 *  "counters":{"send_queued":N, ...}}
 * </pre>
 * A SHA-256 is {@code null} if its thread had not ended; {@code lost} and {@code peer_sent} are -1 without
 * the peer's end-of-stream marker.
 *
 * @param node     the node's address.
 * @param complete every stream completed both ways.
 * @param elapsedMs from start to the summary.
 * @param sendMs   how long the node sent.
 * @param pairs    by peer address.
 * @param counters the stack's counters at the end.
 */
public record NodeSummary(String node, boolean complete, long elapsedMs, long sendMs,
    Map<String, Map<String, Object>> pairs, Map<String, Object> counters)
{
    /**
     * @param line the JSON line.
     * @return the summary.
     * @throws IllegalArgumentException if the line is not a summary.
     */
    @SuppressWarnings("unchecked")
    public static NodeSummary parse(final String line)
    {
        final Map<String, Object> json = Json.object(line);
        final Map<String, Map<String, Object>> pairs = new LinkedHashMap<>();
        for (final Object pair : (List<Object>)json.get("pairs"))
        {
            final Map<String, Object> fields = (Map<String, Object>)pair;
            pairs.put((String)fields.get("peer"), fields);
        }
        return new NodeSummary((String)json.get("node"), (Boolean)json.get("complete"),
            ((Number)json.get("elapsed_ms")).longValue(), ((Number)json.get("send_ms")).longValue(), pairs, (Map<String, Object>)json.get("counters"));
    }

    /**
     * @param peer  the peer's address.
     * @param field a numeric field of that pair.
     * @return its value.
     */
    public long pairLong(final String peer, final String field)
    {
        return ((Number)pair(peer).get(field)).longValue();
    }

    /**
     * @param peer the peer's address.
     * @return every field of that pair.
     */
    public Map<String, Object> pair(final String peer)
    {
        final Map<String, Object> pair = pairs.get(peer);
        if (pair == null)
        {
            throw new IllegalArgumentException(node + " has no pair with " + peer);
        }
        return pair;
    }

    /**
     * @param name a counter name.
     * @return its value at the end.
     */
    public long counter(final String name)
    {
        return ((Number)counters.get(name)).longValue();
    }
}
