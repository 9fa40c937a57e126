package org.rds4j.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Checks the summaries of one run: for every ordered pair (sender, receiver) of the given nodes, the receiver
 * got exactly the sender's stream: its end-of-stream marker, as many messages and bytes as were sent, the same
 * SHA-256, and no lost, duplicated, reordered, corrupt or unexpected message and none after the marker. Used by the tests and, through
 * {@link #main}, by {@code vm/netem-test.sh}, which also sets floors: exact streams of nothing, or a run whose
 * faults never made RDS retransmit, would prove nothing.
 */
public final class FaultCheck
{
    private FaultCheck()
    {
    }

    /**
     * The outcome of a check.
     *
     * @param problems one line per broken rule; empty when the run passed.
     * @param pairs    ordered pairs checked.
     * @param messages data messages sent over all checked pairs.
     * @param bytes    payload bytes sent over all checked pairs.
     * @param connResets sum of the nodes' {@code conn_reset} counters.
     * @param retransmitted sum of the nodes' {@code send_retransmitted} counters.
     */
    public record Result(List<String> problems, int pairs, long messages, long bytes, long connResets, long retransmitted)
    {
        /** @return whether no rule was broken. */
        public boolean passed()
        {
            return problems.isEmpty();
        }
    }

    /**
     * @param nodes the summaries of the nodes whose streams to each other must be exact.
     * @return the problems found and the totals.
     */
    public static Result check(final Collection<NodeSummary> nodes)
    {
        return check(nodes, 0, 0);
    }

    /**
     * @param nodes            the summaries of the nodes whose streams to each other must be exact.
     * @param minMessages      messages each ordered pair must have delivered.
     * @param minRetransmitted messages each node must have retransmitted ({@code send_retransmitted}, over all
     *                         its peers: with two nodes, that is one direction).
     * @return the problems found and the totals.
     */
    public static Result check(final Collection<NodeSummary> nodes, final long minMessages, final long minRetransmitted)
    {
        final List<String> problems = new ArrayList<>();
        int pairs = 0;
        long messages = 0;
        long bytes = 0;
        long resets = 0;
        long retransmitted = 0;
        for (final NodeSummary from : nodes)
        {
            resets += from.counter("conn_reset");
            retransmitted += from.counter("send_retransmitted");
            if (from.counter("send_retransmitted") < minRetransmitted)
            {
                problems.add(from.node() + ": send_retransmitted = " + from.counter("send_retransmitted")
                    + ", expected at least " + minRetransmitted);
            }
            for (final NodeSummary to : nodes)
            {
                if (from == to)
                {
                    continue;
                }
                pairs++;
                final String pair = from.node() + "->" + to.node();
                final var sent = from.pair(to.node());
                final var received = to.pair(from.node());
                messages += ((Number)sent.get("sent")).longValue();
                bytes += ((Number)sent.get("sent_bytes")).longValue();
                expect(problems, pair, "end_sent", sent.get("end_sent"), Boolean.TRUE);
                expect(problems, pair, "end_received", received.get("end_received"), Boolean.TRUE);
                expect(problems, pair, "peer_sent (count in the marker) vs sent", received.get("peer_sent"), sent.get("sent"));
                expect(problems, pair, "received vs sent", received.get("received"), sent.get("sent"));
                if (((Number)received.get("received")).longValue() < minMessages)
                {
                    problems.add(pair + ": received = " + received.get("received") + ", expected at least " + minMessages);
                }
                expect(problems, pair, "received_bytes vs sent_bytes", received.get("received_bytes"), sent.get("sent_bytes"));
                if (sent.get("sent_sha256") == null || !Objects.equals(sent.get("sent_sha256"), received.get("received_sha256")))
                {
                    problems.add(pair + ": SHA-256 sent " + sent.get("sent_sha256") + " != received " + received.get("received_sha256"));
                }
                for (final String zero : List.of("lost", "duplicated", "reordered", "corrupt", "unexpected", "after_end"))
                {
                    expect(problems, pair, zero, received.get(zero), 0L);
                }
                expect(problems, pair, "unacked_bytes at the end", sent.get("unacked_bytes"), 0L);
            }
        }
        return new Result(problems, pairs, messages, bytes, resets, retransmitted);
    }

    private static void expect(final List<String> problems, final String pair, final String what, final Object actual,
        final Object expected)
    {
        // the summaries' counts are whole numbers, read back as Integer or Long: compare their values
        final boolean same = actual instanceof Number a && expected instanceof Number e
            ? a.longValue() == e.longValue()
            : Objects.equals(actual, expected);
        if (!same)
        {
            problems.add(pair + ": " + what + " = " + actual + ", expected " + expected);
        }
    }

    /**
     * Reads the last line starting with '{' of each file, checks them together and prints one line per
     * problem and a PASS or FAIL line.
     *
     * @param args {@code [--min-messages N] [--min-retransmitted N] FILE...}: the floors of
     *             {@link #check(Collection, long, long)} (0 if not given) and the files holding the nodes'
     *             standard output.
     */
    public static void main(final String[] args) throws IOException
    {
        long minMessages = 0;
        long minRetransmitted = 0;
        int first = 0;
        for (; first + 1 < args.length && args[first].startsWith("--"); first += 2)
        {
            switch (args[first])
            {
                case "--min-messages" -> minMessages = Long.parseLong(args[first + 1]);
                case "--min-retransmitted" -> minRetransmitted = Long.parseLong(args[first + 1]);
                default ->
                {
                    System.out.println("FAIL: unknown option " + args[first]);
                    System.exit(1);
                }
            }
        }
        final List<NodeSummary> nodes = new ArrayList<>();
        for (final String file : List.of(args).subList(first, args.length))
        {
            String summary = null;
            final List<String> lines = Files.exists(Path.of(file)) ? Files.readAllLines(Path.of(file), StandardCharsets.UTF_8) : List.of();
            for (final String line : lines)
            {
                if (line.startsWith("{"))
                {
                    summary = line;
                }
            }
            if (summary == null)
            {
                System.out.println("FAIL: no summary line in " + file);
                System.exit(1);
            }
            nodes.add(NodeSummary.parse(summary));
        }
        final Result result = check(nodes, minMessages, minRetransmitted);
        result.problems().forEach(problem -> System.out.println("problem: " + problem));
        // per direction: what the floors apply to
        for (final NodeSummary to : nodes)
        {
            to.pairs().forEach((from, pair) ->
                System.out.printf("%s->%s: %d messages received%n", from, to.node(), ((Number)pair.get("received")).longValue()));
        }
        nodes.forEach(node -> System.out.printf("%s: send_retransmitted %d%n", node.node(), node.counter("send_retransmitted")));
        System.out.printf("%s: %d nodes, %d pairs, %d messages, %d bytes, conn_reset %d, send_retransmitted %d"
                + " (floors: %d messages per pair, %d retransmitted per node)%n",
            result.passed() ? "PASS" : "FAIL", nodes.size(), result.pairs(), result.messages(), result.bytes(),
            result.connResets(), result.retransmitted(), minMessages, minRetransmitted);
        System.exit(result.passed() ? 0 : 1);
    }
}
