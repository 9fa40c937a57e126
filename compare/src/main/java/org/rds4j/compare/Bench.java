package org.rds4j.compare;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.rds4j.samples.DurationConverter;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * What every system's roles share: the options, the measurement windows, CPU time, the result line and the
 * watchdog. A role prints exactly one line {@code RESULT {json}} on stdout (run.sh collects it) and
 * human-readable progress on stderr.
 * <p>
 * Windows. A throughput sink starts its clock at the first message it receives, lets {@code --warmup}
 * seconds pass, then counts for {@code --duration} seconds; a source starts its clock at its first accepted
 * send and reports its CPU time over the same offsets, so both windows cover the same steady state (they are
 * shifted by the first message's one-way latency). An RTT client does at least {@code --warmup-rt} round trips
 * and goes on until {@code --warmup} seconds have passed, then measures {@code --rt} round trips.
 */
final class Bench
{
    /** The RDS header length, also used as the NIO baseline's frame header. */
    static final int HEADER = 48;

    final Args args;
    final String system;
    final String role;
    /** Payload bytes per message. */
    final int size;
    /**
     * Peer addresses of the scale case ({@code --peers N}, 0 otherwise): the sink binds one receiver to each of
     * {@code <peer-net>.1} ... {@code <peer-net>.N} (default peer-net 127.0.2, so N is at most 254), all on
     * {@code --port}, and the source sends round robin to them, so each side holds N connections.
     */
    final int peers;
    /** The first three octets of the scale case's peer addresses ({@code --peer-net}, default 127.0.2). */
    final String peerNet;
    /** Receivers (sink sockets / connections / subscriptions / channels); 1 except in the fan-out and scale cases. */
    final int receivers;
    final long warmupNs;
    final long durationNs;
    /** How long a source keeps sending after its window, so the sink's window never sees a stopped source. */
    final long graceNs;
    final int warmupRoundTrips;
    final int roundTrips;
    /** How long a role waits for its peer (connection, first message) before it gives up. */
    final long startTimeoutNs;
    /** Print the sink's rate every 100 ms (stderr). */
    final boolean trace;
    /**
     * The name prefix of the threads whose CPU time a throughput result also gives on its own ({@code agent_cpu_s}):
     * a stack's agent, whose share says which thread did the stack's work; null for none.
     */
    String agentThreads;

    Bench(final Args args, final String system, final String role)
    {
        this.args = args;
        this.system = system;
        this.role = role;
        this.size = args.size("size", 64);
        this.peers = args.integer("peers", 0);
        this.peerNet = args.str("peer-net", "127.0.2");
        if (peers < 0 || peers > 254)
        {
            throw new IllegalArgumentException("--peers must be 1..254 (one /24 of addresses): " + peers);
        }
        if (peers > 0 && args.has("receivers"))
        {
            throw new IllegalArgumentException("--peers and --receivers exclude each other");
        }
        this.receivers = peers > 0 ? peers : args.integer("receivers", 1);
        this.warmupNs = args.duration("warmup", Duration.ofSeconds(2)).toNanos();
        this.durationNs = args.duration("duration", Duration.ofSeconds(5)).toNanos();
        this.graceNs = args.duration("grace", Duration.ofSeconds(2)).toNanos();
        this.warmupRoundTrips = args.integer("warmup-rt", 20_000);
        this.roundTrips = args.integer("rt", 100_000);
        this.startTimeoutNs = args.duration("start-timeout", Duration.ofSeconds(30)).toNanos();
        this.trace = args.flag("trace");
        if (size < 16)
        {
            throw new IllegalArgumentException("--size must be at least 16 (payloads carry a sequence number)");
        }
        watchdog(args.duration("timeout", Duration.ofSeconds(120)));
    }

    // ------------------------------------------------------------------ process-level helpers

    /** Child processes whose CPU time counts as this process's (an rds4j driver the process attached to). */
    static final java.util.List<Process> CHILDREN = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * @return CPU time of the whole process (every thread: application, agents, drivers, JIT, GC) and of its
     *         {@link #CHILDREN}, in ns.
     */
    static long cpuNs()
    {
        long ns = ((com.sun.management.OperatingSystemMXBean)ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        for (final Process child : CHILDREN)
        {
            ns += childCpuNs(child.pid());
        }
        return ns;
    }

    /** @return CPU time of this process's threads named {@code prefix}..., in ns; -1 without a prefix. */
    static long threadsCpuNs(final String prefix)
    {
        if (prefix == null)
        {
            return -1;
        }
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long ns = 0;
        for (final Thread t : Thread.getAllStackTraces().keySet())
        {
            if (t.getName().startsWith(prefix))
            {
                ns += Math.max(0, threads.getThreadCpuTime(t.getId()));
            }
        }
        return ns;
    }

    /** @return the CPU seconds of the {@link #agentThreads} over a window, null if there are none to count. */
    private static Double agentCpuSeconds(final long before, final long after)
    {
        return before < 0 ? null : (after - before) / 1e9;
    }

    /** utime + stime of /proc/PID/stat, in clock ticks of 10 ms (USER_HZ is 100 on Linux); 0 once it is gone. */
    private static long childCpuNs(final long pid)
    {
        try
        {
            final String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            // the fields after the command name, which is in parentheses and may hold spaces
            final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10_000_000L;
        }
        catch (final IOException | RuntimeException ex)
        {
            return 0;
        }
    }

    /** Run by the watchdog before it halts the process: diagnostics such as a stack's counters. */
    static final java.util.List<Runnable> WATCHDOG_HOOKS = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Ends the process after {@code seconds} whatever it is doing: no role may outlive its run. */
    static void watchdog(final Duration timeout)
    {
        final Thread t = new Thread(() ->
        {
            LockSupport.parkNanos(timeout.toNanos());
            System.err.println("watchdog: still running after " + DurationConverter.format(timeout) + ", halting; threads:");
            try
            {
                for (final Runnable hook : WATCHDOG_HOOKS)
                {
                    hook.run();
                }
                Thread.getAllStackTraces().forEach((thread, stack) ->
                {
                    final StringBuilder sb = new StringBuilder("  " + thread.getName() + " " + thread.getState() + "\n");
                    for (int i = 0; i < Math.min(stack.length, 12); i++)
                    {
                        sb.append("      at ").append(stack[i]).append('\n');
                    }
                    System.err.print(sb);
                });
            }
            catch (final Throwable ex)
            {
                System.err.println("watchdog: " + ex);
            }
            System.err.flush();
            Runtime.getRuntime().halt(3);
        }, "compare-watchdog");
        t.setDaemon(true);
        t.start();
    }

    /** Prints the result line, then exits, halting if an orderly shutdown takes more than 5 s. */
    static void finish(final AutoCloseable... resources)
    {
        watchdog(Duration.ofSeconds(5));
        for (final AutoCloseable r : resources)
        {
            try
            {
                if (r != null)
                {
                    r.close();
                }
            }
            catch (final Exception ex)
            {
                System.err.println("close: " + ex);
            }
        }
        System.out.flush();
        System.exit(0);
    }

    /**
     * @param spec {@code spin}, {@code yield}, {@code backoff} (agrona's defaults: 10 spins, 5 yields, park 1 us
     *             doubling to 1 ms), {@code backoff-fast} (100 spins, 100 yields, park 1 us doubling to 100 us),
     *             {@code noop} or {@code sleep:<us>}.
     * @return the idle strategy.
     */
    static IdleStrategy idle(final String spec)
    {
        switch (spec)
        {
            case "spin": return new BusySpinIdleStrategy();
            case "yield": return new YieldingIdleStrategy();
            case "backoff": return new BackoffIdleStrategy();
            case "backoff-fast": return new BackoffIdleStrategy(100, 100, 1_000, 100_000);
            case "noop": return new NoOpIdleStrategy();
            default:
                if (spec.startsWith("sleep:"))
                {
                    return new SleepingIdleStrategy(TimeUnit.MICROSECONDS.toNanos(Long.parseLong(spec.substring(6))));
                }
                throw new IllegalArgumentException("unknown idle strategy " + spec);
        }
    }

    static void log(final String message)
    {
        System.err.println(message);
        System.err.flush();
    }

    static void sleepNs(final long ns)
    {
        final long end = System.nanoTime() + ns;
        long left;
        while ((left = end - System.nanoTime()) > 0)
        {
            LockSupport.parkNanos(left);
        }
    }

    Json result()
    {
        final Json json = new Json().put("system", system).put("role", role).put("size", size).put("receivers", receivers);
        return peers > 0 ? json.put("peers", peers) : json;
    }

    /**
     * The address of receiver {@code i}: in the scale case {@code <peer-net>.(i+1)} on {@code port}, one address
     * per peer; otherwise {@code server} on {@code port + i} (fan-out: consecutive ports of one address).
     */
    InetSocketAddress receiverAddress(final InetAddress server, final int port, final int i)
    {
        if (peers == 0)
        {
            return new InetSocketAddress(server, port + i);
        }
        try
        {
            return new InetSocketAddress(InetAddress.getByName(peerNet + "." + (i + 1)), port);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException("bad --peer-net " + peerNet, ex);
        }
    }

    /**
     * The process's memory now: {@code rss_kib} and {@code rss_peak_kib} (VmRSS and VmHWM of
     * /proc/self/status, KiB; absent where there is no /proc), {@code direct_bytes} and {@code direct_count}
     * (the "direct" buffer pool: bytes in use and buffers allocated through ByteBuffer.allocateDirect).
     */
    static Json memory()
    {
        final Json json = new Json();
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII))
            {
                if (line.startsWith("VmRSS:"))
                {
                    json.put("rss_kib", kib(line));
                }
                else if (line.startsWith("VmHWM:"))
                {
                    json.put("rss_peak_kib", kib(line));
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            log("memory: cannot read /proc/self/status: " + ex);
        }
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
        {
            if (pool.getName().equals("direct"))
            {
                json.put("direct_bytes", pool.getMemoryUsed()).put("direct_count", pool.getCount());
            }
        }
        return json;
    }

    /** "VmRSS:	  123456 kB" -> 123456. */
    private static long kib(final String statusLine)
    {
        final String[] parts = statusLine.trim().split("\\s+");
        return Long.parseLong(parts[1]);
    }

    static void emit(final Json json)
    {
        System.out.println("RESULT " + json);
        System.out.flush();
    }

    // ------------------------------------------------------------------ RTT client

    /** One round trip: send a message carrying {@code seq}, wait for its echo, check it carries {@code seq}. */
    interface RoundTrip
    {
        void exchange(long seq) throws Exception;
    }

    /** Runs the warm-up and measured round trips and prints the latency result. */
    void rttClient(final RoundTrip rt, final Json extra) throws Exception
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        long seq = 1;
        final long warmStart = System.nanoTime();
        // --warmup-rt round trips and --warmup seconds, whichever ends later: the measured round trips take under
        // a second, so what the JIT compiler still does then (20,000 round trips were over in 1-1.5 s) is their tail
        int warmed = 0;
        while (warmed < warmupRoundTrips || System.nanoTime() - warmStart < warmupNs)
        {
            rt.exchange(seq++);
            warmed++;
        }
        log(system + " rtt: warm-up of " + warmed + " round trips took " +
            fmt((System.nanoTime() - warmStart) / 1e9) + " s");
        final long cpu0 = cpuNs();
        final long t0 = System.nanoTime();
        for (int i = 0; i < roundTrips; i++)
        {
            final long start = System.nanoTime();
            rt.exchange(seq++);
            histogram.recordValue(Math.min(System.nanoTime() - start, histogram.getHighestTrackableValue()));
        }
        final long elapsed = System.nanoTime() - t0;
        final long cpu = cpuNs() - cpu0;
        final Json json = result().put("case", "rtt").put("round_trips", roundTrips)
            .put("p50_us", histogram.getValueAtPercentile(50) / 1e3)
            .put("p90_us", histogram.getValueAtPercentile(90) / 1e3)
            .put("p99_us", histogram.getValueAtPercentile(99) / 1e3)
            .put("p999_us", histogram.getValueAtPercentile(99.9) / 1e3)
            .put("max_us", histogram.getMaxValue() / 1e3)
            .put("mean_us", histogram.getMean() / 1e3)
            .put("secs", elapsed / 1e9)
            .put("cpu_s", cpu / 1e9)
            .putAll(memory())
            .putAll(extra);
        log(system + " rtt: p50 " + fmt(histogram.getValueAtPercentile(50) / 1e3) + " us, p99 " +
            fmt(histogram.getValueAtPercentile(99) / 1e3) + " us over " + roundTrips + " round trips");
        emit(json);
    }

    // ------------------------------------------------------------------ throughput sink

    /**
     * Per-receiver message counts and sequence errors, each on its own cache lines. A receiving thread that is
     * the only writer of a slot uses {@link #add}; slots written by several threads use {@link #addAtomic}.
     */
    static final class Counts
    {
        private static final int STRIDE = 16;
        private final AtomicLongArray values;
        private final int n;

        Counts(final int n)
        {
            this.n = n;
            this.values = new AtomicLongArray((2 * n + 1) * STRIDE);
        }

        void add(final int receiver, final long delta)
        {
            final int i = (receiver + 1) * STRIDE;
            values.lazySet(i, values.get(i) + delta);
        }

        void addAtomic(final int receiver, final long delta)
        {
            values.getAndAdd((receiver + 1) * STRIDE, delta);
        }

        void seqError(final int receiver)
        {
            values.getAndIncrement((n + receiver + 1) * STRIDE);
        }

        long get(final int receiver)
        {
            return values.get((receiver + 1) * STRIDE);
        }

        long total()
        {
            long sum = 0;
            for (int i = 0; i < n; i++)
            {
                sum += get(i);
            }
            return sum;
        }

        long seqErrors()
        {
            long sum = 0;
            for (int i = 0; i < n; i++)
            {
                sum += values.get((n + i + 1) * STRIDE);
            }
            return sum;
        }
    }

    /**
     * The sink's measurement, on the calling (main) thread while receiving threads update {@code counts}: waits
     * for the first message, the warm-up, then measures one window and prints the result.
     *
     * @return whether a message arrived at all.
     */
    boolean measureSink(final Counts counts, final Json extra)
    {
        final long deadline = System.nanoTime() + startTimeoutNs;
        while (counts.total() == 0)
        {
            if (System.nanoTime() > deadline)
            {
                log(system + " sink: no message within the start timeout");
                emit(result().put("case", "tput").put("error", "no message received"));
                return false;
            }
            LockSupport.parkNanos(100_000);
        }
        sleepNs(warmupNs);
        final long[] before = new long[receivers];
        for (int i = 0; i < receivers; i++)
        {
            before[i] = counts.get(i);
        }
        final long cpu0 = cpuNs();
        final long agent0 = threadsCpuNs(agentThreads);
        final long t0 = System.nanoTime();
        // sample every 100 ms: a stall shows as intervals in which nothing (or little) arrived
        final long tick = 100_000_000L;
        long last = counts.total();
        long lastT = t0;
        double minTick = Double.MAX_VALUE;
        int emptyTicks = 0;
        long next = t0 + tick;
        final long end = t0 + durationNs;
        while (next <= end)
        {
            sleepNs(next - System.nanoTime());
            next += tick;
            final long now = System.nanoTime();
            if (now - lastT < tick / 2)
            {
                continue; // this thread woke late for the previous tick: no interval worth judging
            }
            final long c = counts.total();
            final double r = (c - last) * 1e9 / (now - lastT);
            minTick = Math.min(minTick, r);
            if (trace)
            {
                log(String.format(Locale.ROOT, "%s sink: t=%.1f s %,.0f msgs/s", system, (now - t0) / 1e9, r));
            }
            if (c == last)
            {
                emptyTicks++;
            }
            last = c;
            lastT = now;
        }
        sleepNs(end - System.nanoTime());
        final long t1 = System.nanoTime();
        final long cpu1 = cpuNs();
        final long agent1 = threadsCpuNs(agentThreads);
        long total = 0;
        double minRate = Double.MAX_VALUE;
        double maxRate = 0;
        final double secs = (t1 - t0) / 1e9;
        for (int i = 0; i < receivers; i++)
        {
            final long got = counts.get(i) - before[i];
            total += got;
            minRate = Math.min(minRate, got / secs);
            maxRate = Math.max(maxRate, got / secs);
        }
        final double rate = total / secs;
        final Json json = result().put("case", "tput").put("msgs", total).put("secs", secs)
            .put("msgs_per_s", rate)
            .put("mb_per_s", rate * size / 1e6)
            .put("cpu_s", (cpu1 - cpu0) / 1e9)
            .put("rx_min_per_s", minRate)
            .put("rx_max_per_s", maxRate)
            .put("min_100ms_per_s", minTick == Double.MAX_VALUE ? null : minTick)
            .put("empty_100ms", emptyTicks)
            .put("seq_errors", counts.seqErrors())
            .put("agent_cpu_s", agentCpuSeconds(agent0, agent1))
            .putAll(memory())
            .putAll(extra);
        log(system + " sink: " + fmt(rate) + " msgs/s, " + fmt(rate * size / 1e6) + " MB/s over " + fmt(secs) + " s" +
            (receivers > 1 ? " (per receiver " + fmt(minRate) + " .. " + fmt(maxRate) + ")" : ""));
        emit(json);
        return true;
    }

    // ------------------------------------------------------------------ throughput source

    /** The source's sending loop state: the loop runs while {@link #running}, counting into {@link #sent}. */
    static final class SourceState
    {
        volatile boolean running = true;
        private final AtomicLongArray sent = new AtomicLongArray(32);

        void sent(final long n)
        {
            sent.lazySet(16, sent.get(16) + n);
        }

        long sent()
        {
            return sent.get(16);
        }
    }

    /**
     * The source's measurement, on the main thread while the sending thread runs: waits for the first
     * accepted message, measures CPU time over the sink's window offsets, prints the result, keeps sending
     * for {@code --grace} seconds, then stops the loop.
     */
    void measureSource(final SourceState state, final Thread sender, final Json extra)
    {
        final long deadline = System.nanoTime() + startTimeoutNs;
        while (state.sent() == 0)
        {
            if (System.nanoTime() > deadline || !sender.isAlive())
            {
                log(system + " source: nothing sent within the start timeout");
                emit(result().put("case", "tput").put("error", "nothing sent"));
                state.running = false;
                return;
            }
            LockSupport.parkNanos(100_000);
        }
        sleepNs(warmupNs);
        final long sent0 = state.sent();
        final long cpu0 = cpuNs();
        final long agent0 = threadsCpuNs(agentThreads);
        final long t0 = System.nanoTime();
        sleepNs(durationNs);
        final long cpu1 = cpuNs();
        final long agent1 = threadsCpuNs(agentThreads);
        final long t1 = System.nanoTime();
        final long sent = state.sent() - sent0;
        final double secs = (t1 - t0) / 1e9;
        emit(result().put("case", "tput").put("sent", sent).put("secs", secs).put("sent_per_s", sent / secs)
            .put("cpu_s", (cpu1 - cpu0) / 1e9).put("agent_cpu_s", agentCpuSeconds(agent0, agent1))
            .putAll(memory()).putAll(extra));
        log(system + " source: " + fmt(sent / secs) + " msgs/s accepted");
        sleepNs(graceNs);
        state.running = false;
        try
        {
            sender.join(2000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    static String fmt(final double v)
    {
        if (v >= 100)
        {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    // ------------------------------------------------------------------ payload sequence numbers

    /** Throws if an echoed sequence number is not the one sent. */
    static void checkEcho(final long sent, final long got)
    {
        if (sent != got)
        {
            throw new IllegalStateException("echo carried sequence " + got + ", expected " + sent);
        }
    }
}
