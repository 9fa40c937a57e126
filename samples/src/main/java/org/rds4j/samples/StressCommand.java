package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.Callable;

import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.samples.stress.StressMessage;
import org.rds4j.samples.stress.StressRun;
import org.rds4j.samples.stress.StressSettings;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rds stress}: a two-sided load generator in the manner of the kernel's {@code rds-stress}. Every node
 * binds one socket; a node with {@code --peer} sends requests from {@code --tasks} threads per peer, and every
 * node answers the requests it receives and checks them. It reports messages/s, MB/s, round-trip percentiles
 * (HdrHistogram), CPU and the stack's retransmit, reconnect and congestion counters every interval and at the
 * end, as text or as one JSON object per line. The message format, the roles and the end of a run are
 * described in {@link StressMessage} and {@link StressRun}.
 */
@Command(
    name = "stress",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
        "A two-sided load generator like the kernel's rds-stress.",
        "A node without --peer is passive: it receives, checks and answers requests, and ends once every sender it heard "
            + "from said DONE (or --duration + --grace after the first request). A node with --peer also sends: "
            + "--tasks threads per peer, each with up to --depth requests unanswered, for --duration seconds.",
        "Sender-side options (--tasks, --depth, --size, --ack-size, --one-way, --rate) matter only with --peer; what a "
            + "receiver must know (reply size, one-way, whether the payload holds the --verify pattern) travels in each "
            + "request, so a passive node needs only --bind.",
        "Reports every --report-interval and at the end: messages/s (requests sent + received), MB/s (all payload bytes "
            + "in and out), round trip (request sent -> reply received) p50/p90/p99/p99.9/max in microseconds (none "
            + "one-way or on a passive node: rtt_us is null in JSON), CPU %% of the process (process CPU time / wall time "
            + "/ cores; cpu_cores: CPU time / wall time), and the deltas of the stack counters send_retransmitted "
            + "(retransmits), conn_reset (reconnects) and send_cong_blocked (cong_blocked). The summary gives the rates and "
            + "round trips again without the first --warmup (steady in JSON, null when the run was not longer).",
        "Exit status 0 only if nothing was lost or unconfirmed, duplicated, reordered or corrupted, every send worked and "
            + "every sender heard from said DONE. What a task's DONE_ACK did not count or answer is lost; what is still "
            + "unanswered (one-way: everything sent) when no DONE_ACK came within --grace is unconfirmed: it may have arrived."},
    footer = {
        "",
        "Example, two shells:",
        "  rds stress --bind 127.0.0.2:4000",
        "  rds stress --bind 127.0.0.1:4000 --peer 127.0.0.2:4000 --duration 5 --size 64 --verify"})
public final class StressCommand implements Callable<Integer>
{
    /** Most sender threads of one node. */
    static final int MAX_TASKS = 1024;
    /** Longest --duration, --grace, --warmup and --report-interval: a run's deadlines stay far from overflowing nanoTime. */
    private static final Duration MAX_DURATION = Duration.ofDays(30);

    @Spec
    private CommandSpec spec;

    @Option(names = "--bind", required = true, paramLabel = "IP:PORT", converter = IpPortConverter.class,
        description = "Local address and port of this node's socket, e.g. 127.0.0.1:4000.")
    private InetSocketAddress bind;

    @Option(names = "--peer", paramLabel = "IP:PORT", converter = IpPortConverter.class,
        description = "A node to send requests to; repeat for several. Without any, this node is passive.")
    private List<InetSocketAddress> peers = new ArrayList<>();

    @Option(names = "--tasks", paramLabel = "N", defaultValue = "1",
        description = "Sender threads PER PEER (a node with 2 peers and --tasks 3 runs 6). Default: ${DEFAULT-VALUE}.")
    private int tasks;

    @Option(names = "--depth", paramLabel = "N", defaultValue = "1",
        description = "Most requests a task has unanswered at a time (not used with --one-way). Default: ${DEFAULT-VALUE}.")
    private int depth;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "1024", converter = SizeConverter.class,
        description = "Request payload size, " + StressMessage.HEADER_BYTES + " (the stress header) to 1m (k and m are "
            + "powers of 1024). "
            + "Default: ${DEFAULT-VALUE}.")
    private int size;

    @Option(names = "--ack-size", paramLabel = "BYTES", defaultValue = "" + StressMessage.HEADER_BYTES,
        converter = SizeConverter.class,
        description = "Reply payload size asked for in each request, " + StressMessage.HEADER_BYTES + " to 1m. "
            + "Default: ${DEFAULT-VALUE}, the smallest (a bare header, as rds-stress's minimal ack).")
    private int ackSize;

    @Option(names = "--one-way", description = "Requests get no reply: throughput only, no round trips.")
    private boolean oneWay;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "10", converter = DurationConverter.class,
        description = "How long the tasks send, in seconds or with a unit (500ms, 1m); a passive node waits this long "
            + "after the first request at most. Default: ${DEFAULT-VALUE} s.")
    private Duration duration;

    @Option(names = "--verify",
        description = "Fill each payload with a pattern derived from its task and sequence number and check it on receipt "
            + "(replies too). Sequence numbers are always checked per (sender, task): gaps, duplicates, reordering.")
    private boolean verify;

    @Option(names = "--rate", paramLabel = "MSGS_PER_SEC", defaultValue = "0",
        description = "Fixed-rate mode: this node's total requests per second, spread evenly over its tasks; each request "
            + "is scheduled at a fixed interval and its round trip is measured from its scheduled time, so a stall "
            + "shows as latency (no coordinated omission). 0: as fast as possible. Default: ${DEFAULT-VALUE}.")
    private double rate;

    @Option(names = "--json", description = "One JSON object per line: a start line, one per interval, the summary last.")
    private boolean json;

    @Option(names = "--report-interval", paramLabel = "INTERVAL", defaultValue = "1", converter = DurationConverter.class,
        description = "Time between interval reports; 0 for the summary only. Default: ${DEFAULT-VALUE} s.")
    private Duration reportInterval;

    @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "2", converter = DurationConverter.class,
        description = "At the end, how long to wait for replies still due, DONE acknowledgements and other senders' DONE. "
            + "It starts again whenever the peers acknowledge more of what this node queued while a DONE_ACK is due, so a "
            + "DONE behind a long send queue on a slow link is waited for. Default: ${DEFAULT-VALUE} s.")
    private Duration grace;

    @Option(names = "--warmup", paramLabel = "DURATION", defaultValue = "2", converter = DurationConverter.class,
        description = "The first part of the run (from the start; on a passive node from the first request) that the "
            + "summary's steady figures leave out: a JVM compiles its hot code then, and on a 2-core machine its compiler "
            + "threads take most of a core for about 2 s. The figures over the whole run are given as well. 0: none; "
            + "a run no longer than it has none. Default: ${DEFAULT-VALUE} s.")
    private Duration warmup;

    @Mixin
    private StackOptions stackOptions;

    /** Creates the command; picocli sets its options. */
    public StressCommand()
    {
    }

    @Override
    public Integer call() throws IOException, InterruptedException
    {
        final StressSettings settings = settings();
        final PrintWriter out = spec.commandLine().getOut();
        try (RdsStack stack = RdsStack.open(stackOptions.config("stress-" + IpPortConverter.format(bind)));
             RdsSocket socket = stack.openSocket())
        {
            socket.bind(bind);
            return new StressRun(settings, stack, socket, out).run();
        }
    }

    /**
     * @return the options, checked.
     * @throws ParameterException for a value out of range.
     */
    StressSettings settings()
    {
        if (new HashSet<>(peers).size() != peers.size())
        {
            throw usage("--peer: the same peer is given twice");
        }
        for (final InetSocketAddress peer : peers)
        {
            if (peer.getPort() < 2)
            {
                throw usage("--peer " + IpPortConverter.format(peer) + ": port must be 2..65535 (RDS reserves 0 and 1)");
            }
        }
        if (tasks < 1 || (long)tasks * Math.max(1, peers.size()) > MAX_TASKS)
        {
            throw usage("--tasks must be at least 1 and --tasks times the number of peers at most " + MAX_TASKS + ": " + tasks);
        }
        if (depth < 1)
        {
            throw usage("--depth must be at least 1: " + depth);
        }
        checkSize("--size", size);
        checkSize("--ack-size", ackSize);
        if (duration.isZero() || duration.compareTo(MAX_DURATION) > 0)
        {
            throw usage("--duration must be more than 0 and at most " + DurationConverter.format(MAX_DURATION) + ": "
                + DurationConverter.format(duration));
        }
        if (!(rate >= 0) || Double.isInfinite(rate))
        {
            throw usage("--rate must be 0 (as fast as possible) or a positive number of requests per second: " + rate);
        }
        if (reportInterval.compareTo(MAX_DURATION) > 0
            || (!reportInterval.isZero() && reportInterval.compareTo(Duration.ofMillis(10)) < 0))
        {
            throw usage("--report-interval must be 0 (none) or 10ms.." + DurationConverter.format(MAX_DURATION) + ": "
                + DurationConverter.format(reportInterval));
        }
        if (grace.compareTo(MAX_DURATION) > 0)
        {
            throw usage("--grace must be at most " + DurationConverter.format(MAX_DURATION) + ": " + DurationConverter.format(grace));
        }
        if (warmup.compareTo(MAX_DURATION) > 0)
        {
            throw usage("--warmup must be at most " + DurationConverter.format(MAX_DURATION) + ": " + DurationConverter.format(warmup));
        }
        return new StressSettings(bind, peers, tasks, depth, size, ackSize, oneWay, duration.toNanos(), verify, rate, json,
            reportInterval.toNanos(), grace.toNanos(), warmup.toNanos());
    }

    private void checkSize(final String option, final int bytes)
    {
        if (bytes < StressMessage.HEADER_BYTES || bytes > RdsSocket.MAX_MESSAGE_SIZE)
        {
            throw usage(option + " must be " + StressMessage.HEADER_BYTES + ".." + RdsSocket.MAX_MESSAGE_SIZE +
                " bytes (the stress header takes " + StressMessage.HEADER_BYTES + "): " + bytes);
        }
    }

    private ParameterException usage(final String message)
    {
        return new ParameterException(spec.commandLine(), message);
    }
}
