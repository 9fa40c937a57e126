package org.rds4j.samples.stress;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * What one {@code rds stress} node does, as checked by {@code StressCommand}; times in nanoseconds.
 *
 * @param bind             the socket's address.
 * @param peers            where the sender tasks send; empty for a passive node.
 * @param tasksPerPeer     sender threads per peer.
 * @param depth            most requests a task has unanswered at a time (not used one-way).
 * @param size             request payload bytes, at least {@link StressMessage#HEADER_BYTES}.
 * @param ackSize          reply payload bytes this node asks for, at least {@link StressMessage#HEADER_BYTES}.
 * @param oneWay           requests ask for no reply.
 * @param durationNanos    how long tasks send (active) or how long to wait for senders (passive).
 * @param verify           requests carry the payload pattern and it is checked; replies to them too.
 * @param rate             total requests per second of this node, spread evenly over its tasks; 0 for as
 *                         fast as possible.
 * @param json             one JSON object per line.
 * @param reportIntervalNanos interval reports; 0 for none.
 * @param graceNanos       how long to wait at the end for outstanding replies and DONE acknowledgements.
 * @param warmupNanos      the first part of the run (from the start, or from a passive node's first request) that
 *                         the summary's steady figures leave out: the JVM's warm-up; 0 for none.
 */
public record StressSettings(
    InetSocketAddress bind,
    List<InetSocketAddress> peers,
    int tasksPerPeer,
    int depth,
    int size,
    int ackSize,
    boolean oneWay,
    long durationNanos,
    boolean verify,
    double rate,
    boolean json,
    long reportIntervalNanos,
    long graceNanos,
    long warmupNanos)
{
    /**
     * Checks the settings.
     *
     * @param bind as described on the record.
     * @param peers as described on the record.
     * @param tasksPerPeer as described on the record.
     * @param depth as described on the record.
     * @param size as described on the record.
     * @param ackSize as described on the record.
     * @param oneWay as described on the record.
     * @param durationNanos as described on the record.
     * @param verify as described on the record.
     * @param rate as described on the record.
     * @param json as described on the record.
     * @param reportIntervalNanos as described on the record.
     * @param graceNanos as described on the record.
     * @param warmupNanos as described on the record.
     * @throws IllegalArgumentException for a value out of range.
     */
    public StressSettings
    {
        // an immutable copy
        peers = List.copyOf(peers);
    }

    /** @return whether this node sends (has peers). */
    public boolean active()
    {
        return !peers.isEmpty();
    }

    /** @return sender tasks of this node: peers times tasks per peer. */
    public int totalTasks()
    {
        return peers.size() * tasksPerPeer;
    }

    /** @return whether this node's requests are answered, so that it measures round trips. */
    public boolean measuresRtt()
    {
        return active() && !oneWay;
    }
}
