package org.rds4j.samples.stress;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.HdrHistogram.Histogram;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.samples.IpPortConverter;
import org.rds4j.transport.tcp.TcpConfig;

/**
 * One run of {@code rds stress} on a bound socket: starts the receive thread and the sender tasks, prints a
 * report every interval and a summary at the end, and decides the exit status.
 * <p>
 * <b>End of a run.</b> An active node's tasks send requests for the duration, then each sends DONE with its
 * count and the node waits up to the grace period for what is still due: the replies to requests in flight,
 * a DONE_ACK for every task, and DONE from every node that sent to this one. The grace period starts when
 * the sending ends, and starts again at every look (every {@value #POLL_MILLIS} ms) that finds the peers'
 * stacks acknowledged more of this node's messages while a DONE_ACK is still due: a DONE queued behind a
 * full send queue on a slow link gets its whole grace once it has been acknowledged, while a peer that
 * acknowledges nothing still ends the run one grace period after the last acknowledgement. What a DONE_ACK
 * settles is counted: requests its peer did not get, and requests unanswered when it came, are lost. What
 * no DONE_ACK settled is <em>unconfirmed</em>, not lost: requests unanswered (one-way: all requests) of a
 * task whose DONE_ACK did not come may have arrived. Either fails the run. A passive node ends once every
 * sender it heard from said DONE for all its tasks, or {@code duration + grace} after its first request (after
 * its start if none comes). Before closing, a node waits up to {@value #LINGER_MILLIS} ms for its answers to be
 * acknowledged, so that a DONE_ACK is not dropped with the socket. The summary's counters (retransmits,
 * reconnects) are read at the moment the run is complete, before a peer that finished first closes its
 * connection.
 */
public final class StressRun
{
    /** SO_SNDTIMEO and SO_RCVTIMEO of the socket: how often blocked threads look at the clock. */
    static final Duration SOCKET_TIMEOUT = Duration.ofMillis(50);
    private static final long LINGER_MILLIS = 1000;
    private static final long POLL_MILLIS = 20;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS);
    private static final double MB = 1e6;

    private final StressSettings settings;
    private final RdsStack stack;
    private final RdsSocket socket;
    private final PrintWriter out;
    private final SenderTask[] tasks;
    private final Receiver receiver;
    private final int processors = Runtime.getRuntime().availableProcessors();
    private volatile Totals completeTotals;
    /** What was counted when the warm-up ended (null before, or with none), and the round trips since. */
    private Totals warm;
    private Histogram steadyRtt;
    /** Round trips taken from the receiver's recorder: all of them, and those since the last interval report. */
    private final Histogram rtt = new Histogram(1, Receiver.MAX_RTT_NANOS, 3);
    private final Histogram sinceReport = new Histogram(1, Receiver.MAX_RTT_NANOS, 3);
    private Histogram recorded;
    private volatile Thread main;
    private long graceStart;
    private long acknowledged;

    /**
     * @param settings the run.
     * @param stack    the stack the socket belongs to (for its counters).
     * @param socket   the socket, bound to {@link StressSettings#bind()}; the run sets its timeouts.
     * @param out      where reports go.
     */
    public StressRun(final StressSettings settings, final RdsStack stack, final RdsSocket socket, final PrintWriter out)
    {
        this.settings = settings;
        this.stack = stack;
        this.socket = socket;
        this.out = out;
        final List<InetSocketAddress> peers = settings.peers();
        this.tasks = new SenderTask[settings.totalTasks()];
        for (int p = 0; p < peers.size(); p++)
        {
            for (int t = 0; t < settings.tasksPerPeer(); t++)
            {
                final int id = p * settings.tasksPerPeer() + t;
                tasks[id] = new SenderTask(id, t * peers.size() + p, peers.get(p), socket, settings);
            }
        }
        this.receiver = new Receiver(socket, settings, tasks, this::onComplete);
    }

    /**
     * @return whether the node's one task reads the replies itself ({@link Receiver#readOn}): it waits for each
     *         reply (not one-way) as soon as it has sent (no {@code --rate}, whose schedule it waits for instead).
     */
    private boolean singleReader()
    {
        return tasks.length == 1 && !settings.oneWay() && settings.rate() == 0;
    }

    /**
     * Runs to the end and prints the summary.
     *
     * @return the exit status: 0 if nothing was lost, duplicated, reordered or corrupted, every send worked and
     *         every sender heard from said DONE; 1 otherwise.
     * @throws IOException          if the socket's options cannot be set.
     * @throws InterruptedException if interrupted.
     */
    public int run() throws IOException, InterruptedException
    {
        main = Thread.currentThread();
        socket.configureBlocking(true);
        socket.setOption(RdsOptions.SO_SNDTIMEO, SOCKET_TIMEOUT);
        socket.setOption(RdsOptions.SO_RCVTIMEO, SOCKET_TIMEOUT);

        final long start = System.nanoTime();
        final Totals base = totals(start);
        printStart();
        final String node = IpPortConverter.format(settings.bind());
        if (singleReader())
        {
            tasks[0].readWith(receiver);
        }
        else
        {
            receiver.start("stress-receive-" + node);
        }
        final long end = start + settings.durationNanos();
        graceStart = end;
        for (final SenderTask task : tasks)
        {
            task.start(start, end, end + settings.graceNanos(), "stress-task-" + task.id() + "-" + node);
        }

        final long interval = settings.reportIntervalNanos();
        long nextReport = start + interval;
        Totals previous = base;
        while (true)
        {
            final long now = System.nanoTime();
            final long warmEnd = warmupEnd(start);
            if (warm == null && warmEnd != 0 && now - warmEnd >= 0)
            {
                warm = totals(now);
                takeRtt();
                steadyRtt = new Histogram(1, Receiver.MAX_RTT_NANOS, 3);
            }
            if (interval > 0 && now - nextReport >= 0)
            {
                final Totals current = totals(now);
                takeRtt();
                printInterval(start, previous, current, sinceReport);
                sinceReport.reset();
                previous = current;
                nextReport += interval;
                if (nextReport - now < interval / 2)
                {
                    nextReport = now + interval; // fell behind: skip, do not catch up
                }
            }
            if (settings.active() && now - end >= 0)
            {
                moveGraceStart(now);
            }
            if (finished(now, start, end))
            {
                break;
            }
            long parkNanos = interval > 0 ? Math.min(nextReport - now, POLL_NANOS) : POLL_NANOS;
            if (warm == null && warmEnd != 0)
            {
                parkNanos = Math.min(parkNanos, warmEnd - now);
            }
            LockSupport.parkNanos(this, Math.max(1, parkNanos));
        }

        Totals last = completeTotals;
        if (last == null)
        {
            last = totals(System.nanoTime());
        }
        linger();
        receiver.stop(2000);
        for (final SenderTask task : tasks)
        {
            if (!task.finished())
            {
                task.interrupt();
            }
            task.join(2000);
        }
        takeRtt();
        return printSummary(start, base, last);
    }

    /**
     * @return when the warm-up ends: {@code --warmup} after the start (a passive node: after its first request), or 0
     *         if there is none, or no request yet.
     */
    private long warmupEnd(final long start)
    {
        if (settings.warmupNanos() == 0)
        {
            return 0;
        }
        final long from = settings.active() ? start : receiver.firstRequestNanos();
        return from == 0 ? 0 : from + settings.warmupNanos();
    }

    /** Moves the round trips recorded since the last call into the run's histograms. */
    private void takeRtt()
    {
        recorded = receiver.rttRecorder().getIntervalHistogram(recorded);
        rtt.add(recorded);
        sinceReport.add(recorded);
        if (steadyRtt != null)
        {
            steadyRtt.add(recorded);
        }
    }

    private boolean finished(final long now, final long start, final long end)
    {
        if (receiver.completeNanos() != 0)
        {
            return true;
        }
        if (settings.active())
        {
            return now - (graceStart + settings.graceNanos()) >= 0;
        }
        final long first = receiver.firstRequestNanos();
        final long from = first != 0 && first - start > 0 ? first : start;
        return now - (from + settings.durationNanos() + settings.graceNanos()) >= 0;
    }

    /**
     * Starts the grace period again if a DONE_ACK is still due and the stack's count of messages the peers
     * acknowledged moved since the last look, and tells the tasks, whose DONE may still wait for room.
     */
    private void moveGraceStart(final long now)
    {
        final long acked = stack.counters().getOrDefault("send_drop_acked", 0L);
        if (acked != acknowledged && receiver.completeNanos() == 0 && !allDoneAcked())
        {
            graceStart = now;
            for (final SenderTask task : tasks)
            {
                task.giveUpAt(now + settings.graceNanos());
            }
        }
        acknowledged = acked;
    }

    private boolean allDoneAcked()
    {
        for (final SenderTask task : tasks)
        {
            if (!task.doneAcked())
            {
                return false;
            }
        }
        return true;
    }

    /** Receive thread, once: every sender and every task is done; the counters are read now. */
    private void onComplete()
    {
        completeTotals = totals(System.nanoTime());
        final Thread waiting = main;
        if (waiting != null)
        {
            LockSupport.unpark(waiting);
        }
    }

    /** Waits (bounded) until the answers are sent and acknowledged, so that closing drops none. */
    private void linger()
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS);
        while ((receiver.pendingReplies() > 0 || socket.sendQueuedBytes() > 0) && System.nanoTime() - deadline < 0)
        {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    // ------------------------------------------------------------ measurement

    /** What is counted at one moment. */
    private record Totals(
        long nanos, long cpuNanos, long sent, long received, long replies, long bytes, long retransmits, long reconnects,
        long congestion)
    {
    }

    private Totals totals(final long now)
    {
        long sent = 0;
        for (final SenderTask task : tasks)
        {
            sent += task.sent();
        }
        final long bytes = sent * settings.size() + receiver.requestBytes() + receiver.replyBytes() + receiver.replyBytesSent();
        final Map<String, Long> counters = stack.counters();
        return new Totals(now, processCpuNanos(), sent, receiver.requests(), receiver.replies(), bytes,
            counters.getOrDefault("send_retransmitted", 0L), counters.getOrDefault("conn_reset", 0L),
            counters.getOrDefault("send_cong_blocked", 0L));
    }

    /** @return CPU time of the whole process (every thread, the stack's agent included), -1 if unknown. */
    static long processCpuNanos()
    {
        final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun)
        {
            return sun.getProcessCpuTime();
        }
        return -1;
    }

    /** @return the process's CPU use between two moments in percent of all cores (100 = every core busy). */
    private double cpuPercent(final Totals from, final Totals to)
    {
        return 100.0 * cpuCores(from, to) / processors;
    }

    /** @return the process's CPU use between two moments in cores (1.0 = one core busy). */
    private static double cpuCores(final Totals from, final Totals to)
    {
        if (from.cpuNanos < 0 || to.cpuNanos < 0 || to.nanos <= from.nanos)
        {
            return 0;
        }
        return (double)(to.cpuNanos - from.cpuNanos) / (to.nanos - from.nanos);
    }

    private static JsonLine rttJson(final Histogram h)
    {
        return new JsonLine()
            .add("p50", micros(h.getValueAtPercentile(50)))
            .add("p90", micros(h.getValueAtPercentile(90)))
            .add("p99", micros(h.getValueAtPercentile(99)))
            .add("p999", micros(h.getValueAtPercentile(99.9)))
            .add("max", micros(h.getMaxValue()))
            .add("mean", h.getTotalCount() == 0 ? 0 : micros(h.getMean()))
            .add("count", h.getTotalCount());
    }

    private static double micros(final double nanos)
    {
        return nanos / 1000.0;
    }

    private static double perSecond(final double count, final long nanos)
    {
        return nanos <= 0 ? 0 : count * 1e9 / nanos;
    }

    // ------------------------------------------------------------ output

    private String role()
    {
        return settings.active() ? "active" : "passive";
    }

    private void printStart()
    {
        final List<String> peers = new ArrayList<>();
        for (final InetSocketAddress peer : settings.peers())
        {
            peers.add(IpPortConverter.format(peer));
        }
        if (settings.json())
        {
            out.println(new JsonLine()
                .add("type", "start")
                .add("role", role())
                .add("bind", IpPortConverter.format(socket.localAddress()))
                .add("peers", peers)
                .add("tasks_per_peer", settings.tasksPerPeer())
                .add("depth", settings.depth())
                .add("size", settings.size())
                .add("ack_size", settings.ackSize())
                .add("one_way", settings.oneWay())
                .add("verify", settings.verify())
                .add("rate", settings.rate())
                .add("duration_s", settings.durationNanos() / 1e9)
                .add("warmup_s", settings.warmupNanos() / 1e9)
                .add("tcp_port", TcpConfig.of(stack.config()).tcpPort())
                .add("transport", stack.config().transport().name().toLowerCase(Locale.ROOT)));
        }
        else
        {
            final String what = settings.active()
                ? String.format(Locale.ROOT, "%s to %s, %d task(s) per peer, %s, %d B requests%s%s, %s%s",
                    settings.oneWay() ? "one-way" : "request/reply", String.join(" ", peers), settings.tasksPerPeer(),
                    settings.oneWay() ? "no replies" : "depth " + settings.depth(), settings.size(),
                    settings.oneWay() ? "" : ", " + settings.ackSize() + " B replies",
                    settings.rate() > 0 ? ", " + JsonLine.number(settings.rate()) + " requests/s" : "",
                    seconds(settings.durationNanos()), settings.verify() ? ", verify" : "")
                : "answering requests for up to " + seconds(settings.durationNanos()) + " after the first";
            out.printf("stress: %s node on %s (tcp port %d, transport %s): %s%n", role(),
                IpPortConverter.format(socket.localAddress()), TcpConfig.of(stack.config()).tcpPort(),
                stack.config().transport().name().toLowerCase(Locale.ROOT), what);
            if (settings.reportIntervalNanos() > 0)
            {
                out.printf("%8s %10s %10s %9s %10s %10s %10s %7s %7s %7s %7s%n", "time s", "sent/s", "recv/s", "MB/s",
                    "rtt p50us", "rtt p99us", "rtt maxus", "cpu %", "retrans", "reconn", "cong");
            }
        }
        out.flush();
    }

    private static String seconds(final long nanos)
    {
        return JsonLine.number(nanos / 1e9) + " s";
    }

    private void printInterval(final long start, final Totals from, final Totals to, final Histogram rtt)
    {
        final long nanos = to.nanos - from.nanos;
        final double sentPerSecond = perSecond(to.sent - from.sent, nanos);
        final double receivedPerSecond = perSecond(to.received - from.received, nanos);
        final double mbPerSecond = perSecond(to.bytes - from.bytes, nanos) / MB;
        if (settings.json())
        {
            out.println(new JsonLine()
                .add("type", "interval")
                .add("t_s", (to.nanos - start) / 1e9)
                .add("sent", to.sent - from.sent)
                .add("received", to.received - from.received)
                .add("replies", to.replies - from.replies)
                .add("msgs_per_s", sentPerSecond + receivedPerSecond)
                .add("mb_per_s", mbPerSecond)
                .add("rtt_us", settings.measuresRtt() ? rttJson(rtt) : null)
                .add("cpu_pct", cpuPercent(from, to))
                .add("retransmits", to.retransmits - from.retransmits)
                .add("reconnects", to.reconnects - from.reconnects)
                .add("cong_blocked", to.congestion - from.congestion));
        }
        else
        {
            final boolean hasRtt = settings.measuresRtt() && rtt.getTotalCount() > 0;
            out.printf(Locale.ROOT, "%8.1f %10.0f %10.0f %9.2f %10s %10s %10s %7.1f %7d %7d %7d%n",
                (to.nanos - start) / 1e9, sentPerSecond, receivedPerSecond, mbPerSecond,
                hasRtt ? fixed(micros(rtt.getValueAtPercentile(50))) : "-",
                hasRtt ? fixed(micros(rtt.getValueAtPercentile(99))) : "-",
                hasRtt ? fixed(micros(rtt.getMaxValue())) : "-",
                cpuPercent(from, to), to.retransmits - from.retransmits, to.reconnects - from.reconnects,
                to.congestion - from.congestion);
        }
        out.flush();
    }

    private static String fixed(final double value)
    {
        return String.format(Locale.ROOT, "%.1f", value);
    }

    private int printSummary(final long start, final Totals base, final Totals last)
    {
        long sent = 0;
        long unanswered = 0;
        long settledLost = 0;
        long unconfirmed = 0;
        long sendErrors = receiver.sendErrors();
        long stop = start;
        int doneAcked = 0;
        final List<String> problems = new ArrayList<>();
        for (final SenderTask task : tasks)
        {
            sent += task.sent();
            sendErrors += task.sendErrors();
            if (task.stopNanos() != 0 && task.stopNanos() - stop > 0)
            {
                stop = task.stopNanos();
            }
            if (task.doneAcked())
            {
                doneAcked++;
            }
            // a DONE_ACK follows every reply to the task's requests on one connection: what it did not bring is lost
            final long taskUnanswered = settings.oneWay() ? 0 : Math.max(0, task.sent() - task.replies());
            final long missing = settings.oneWay() ? Math.max(0, task.sent() - task.peerReceived()) : taskUnanswered;
            unanswered += taskUnanswered;
            if (task.doneAcked())
            {
                settledLost += missing;
            }
            else
            {
                unconfirmed += settings.oneWay() ? task.sent() : taskUnanswered;
            }
            if (task.failure() != null && problems.size() < 5)
            {
                problems.add("task " + task.id() + ": " + task.failure());
            }
        }
        final long received = receiver.requests();
        final long lost = receiver.lostRequests() + settledLost;
        final long duplicated = receiver.duplicated();
        final long reordered = receiver.reordered();
        final long verifyErrors = receiver.verifyErrors();

        // the window rates are taken over: sending (active) and receiving requests (from the first to the last)
        final long begin = settings.active() ? start : receiver.firstRequestNanos();
        long finish = settings.active() ? stop : begin;
        if (receiver.lastRequestNanos() != 0 && receiver.lastRequestNanos() - finish > 0)
        {
            finish = receiver.lastRequestNanos();
        }
        final long window = begin != 0 && finish - begin > 0 ? finish - begin : 0;
        final long bytes = sent * settings.size() + receiver.requestBytes() + receiver.replyBytes() + receiver.replyBytesSent();
        final double msgsPerSecond = perSecond(sent + received, window);
        final double mbPerSecond = perSecond(bytes, window) / MB;
        // the steady window: from the end of the warm-up to the end of the whole run's window
        final long steadyWindow = warm != null && finish - warm.nanos > 0 ? finish - warm.nanos : 0;
        final double steadyMsgsPerSecond = steadyWindow == 0 ? 0 : perSecond(sent + received - warm.sent - warm.received, steadyWindow);
        final double steadyMbPerSecond = steadyWindow == 0 ? 0 : perSecond(bytes - warm.bytes, steadyWindow) / MB;
        final long retransmits = last.retransmits - base.retransmits;
        final long reconnects = last.reconnects - base.reconnects;
        final long congestion = last.congestion - base.congestion;
        // a sender that never said DONE leaves its tail unknown: not a clean run either
        final boolean ok = lost == 0 && unconfirmed == 0 && duplicated == 0 && reordered == 0 && verifyErrors == 0 && sendErrors == 0
            && receiver.sendersDone() == receiver.senders();

        if (lost > 0)
        {
            problems.add(lost + " lost: " + receiver.lostRequests() + " requests missing here, " + settledLost +
                (settings.oneWay() ? " requests the peers' DONE_ACK did not count" : " requests unanswered by their DONE_ACK"));
        }
        if (unconfirmed > 0)
        {
            problems.add(unconfirmed + " unconfirmed: " + (settings.oneWay() ? "requests" : "requests unanswered") +
                " of tasks whose DONE_ACK did not come, which may have arrived");
        }
        if (receiver.lastError() != null)
        {
            problems.add("first problem seen: " + receiver.lastError());
        }
        if (settings.active() && doneAcked < tasks.length)
        {
            problems.add((tasks.length - doneAcked) + " of " + tasks.length + " tasks got no DONE_ACK within the grace period");
        }
        if (receiver.sendersDone() < receiver.senders())
        {
            problems.add((receiver.senders() - receiver.sendersDone()) + " of " + receiver.senders() +
                " senders did not say DONE in time");
        }
        if (!settings.active() && receiver.senders() == 0)
        {
            problems.add("no sender was heard from");
        }

        if (settings.json())
        {
            out.println(new JsonLine()
                .add("type", "summary")
                .add("role", role())
                .add("ok", ok)
                .add("elapsed_s", window / 1e9)
                .add("sent", sent)
                .add("received", received)
                .add("replies", receiver.replies())
                .add("replies_sent", receiver.repliesSent())
                .add("lost", lost)
                .add("unconfirmed", unconfirmed)
                .add("unanswered", unanswered)
                .add("duplicated", duplicated)
                .add("reordered", reordered)
                .add("verify_errors", verifyErrors)
                .add("send_errors", sendErrors)
                .add("msgs_per_s", msgsPerSecond)
                .add("mb_per_s", mbPerSecond)
                .add("rtt_us", settings.measuresRtt() ? rttJson(rtt) : null)
                .add("steady", steadyWindow == 0 ? null : new JsonLine()
                    .add("warmup_s", settings.warmupNanos() / 1e9)
                    .add("elapsed_s", steadyWindow / 1e9)
                    .add("msgs_per_s", steadyMsgsPerSecond)
                    .add("mb_per_s", steadyMbPerSecond)
                    .add("rtt_us", settings.measuresRtt() ? rttJson(steadyRtt) : null))
                .add("retransmits", retransmits)
                .add("reconnects", reconnects)
                .add("cong_blocked", congestion)
                .add("cpu_pct", cpuPercent(base, last))
                .add("cpu_cores", cpuCores(base, last))
                .add("senders", receiver.senders())
                .add("senders_done", receiver.sendersDone())
                .add("tasks", tasks.length)
                .add("tasks_done_acked", doneAcked)
                .add("problems", problems));
        }
        else
        {
            out.printf(Locale.ROOT, "stress: summary of the %s node over %.2f s%n", role(), window / 1e9);
            out.printf(Locale.ROOT, "  sent %d, received %d, replies %d (sent %d)%n", sent, received, receiver.replies(),
                receiver.repliesSent());
            out.printf(Locale.ROOT, "  lost %d, unconfirmed %d, duplicated %d, reordered %d, verify errors %d, send errors %d%n",
                lost, unconfirmed, duplicated, reordered, verifyErrors, sendErrors);
            out.printf(Locale.ROOT, "  %.0f msgs/s, %.2f MB/s (1 MB = 10^6 bytes), cpu %.1f%% of %d cores (%.2f cores busy)%n", msgsPerSecond,
                mbPerSecond, cpuPercent(base, last), processors, cpuCores(base, last));
            if (settings.measuresRtt())
            {
                out.printf(Locale.ROOT, "  rtt us: p50 %.1f, p90 %.1f, p99 %.1f, p99.9 %.1f, max %.1f (%d replies)%n",
                    micros(rtt.getValueAtPercentile(50)), micros(rtt.getValueAtPercentile(90)),
                    micros(rtt.getValueAtPercentile(99)), micros(rtt.getValueAtPercentile(99.9)), micros(rtt.getMaxValue()),
                    rtt.getTotalCount());
            }
            if (steadyWindow > 0)
            {
                out.printf(Locale.ROOT, "  after the first %s (warm-up): %.0f msgs/s, %.2f MB/s over %.2f s%s%n",
                    seconds(settings.warmupNanos()), steadyMsgsPerSecond, steadyMbPerSecond, steadyWindow / 1e9,
                    settings.measuresRtt() ? String.format(Locale.ROOT, ", rtt us p50 %.1f, p99 %.1f",
                        micros(steadyRtt.getValueAtPercentile(50)), micros(steadyRtt.getValueAtPercentile(99))) : "");
            }
            out.printf("  retransmits %d, reconnects %d, congestion refusals %d%n", retransmits, reconnects, congestion);
            for (final String problem : problems)
            {
                out.println("  " + problem);
            }
            out.println("stress: " + (ok ? "OK" : "FAILED"));
        }
        out.flush();
        return ok ? 0 : 1;
    }
}
