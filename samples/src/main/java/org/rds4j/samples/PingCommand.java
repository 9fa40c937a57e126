package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.samples.stress.JsonLine;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code rds ping DEST [-c COUNT] [-i INTERVAL] [-w DEADLINE] [-W TIMEOUT] [-s SIZE] [-I LOCAL_IP] [-q] [--json]}:
 * the RDS ping of {@code rds-ping(1)}, with the options of iputils {@code ping} (durations in seconds with
 * decimals, or with a unit). Opens a stack, binds one socket to {@code LOCAL_IP} on an ephemeral port, and
 * sends messages to port 0 of {@code DEST}; the stack serving {@code DEST} answers each one itself with a pong,
 * a zero-length message from {@code DEST:0} (whatever the ping's size: the kernel's pong has no payload either).
 * {@code DEST} is an IP address or a host name, resolved once; never {@code IP:PORT}, since a ping always goes
 * to port 0. {@code DEST} answers only if a socket of its stack is bound to that address (a stack listens on
 * the addresses its sockets are bound to).
 * <p>
 * Output: one line per ping, {@code seq=1 from 127.0.0.2: time=52.3 us} or {@code seq=3 timeout} (or
 * {@code seq=3 send failed: ETIMEDOUT} when the ping could not even be queued within the timeout), none with
 * {@code -q}, then
 * {@code --- 127.0.0.2 rds ping: 5 sent, 5 received, 0% loss; rtt min/avg/max/p50/p90/p99 = ... us} (the rtt part
 * only when a pong came). With {@code --json} each of these is one JSON object on its own line. The round trip
 * is measured from just before the send to the return of the receive, so it includes rds4j's hand-off to its
 * agent thread on both sides.
 * <p>
 * Matching pongs to pings: pongs carry no sequence number, only the port they answer. So pings go one at a
 * time, the next only after the previous one's pong or timeout (and no earlier than {@code INTERVAL}
 * after the previous send), and while every ping is answered they all go from the same socket, where the
 * only pong that can arrive is the current ping's. When a ping times out, its socket is closed, which also
 * drops the ping if it is still queued, and the next ping goes from a fresh socket on another ephemeral
 * port: a late pong of the timed-out ping then finds no socket and is dropped by the local stack (counted in
 * {@code recv_drop_no_sock}), so it can never be taken for the answer of a later ping. ({@code rds-ping}
 * matches by port too, with a ring of 8 sockets.) Matching by rank instead (the n-th pong answers the n-th
 * ping) would rely on exactly-once delivery, which rds4j does not keep towards a peer that restarted.
 * <p>
 * Unlike {@code rds-ping} and iputils, whose default count is 0 (until interrupted), {@code -c} defaults to 5 so
 * that a script cannot hang, unless {@code -w} bounds the run; {@code -c 0} pings until the process is
 * interrupted (Ctrl-C) or the deadline, then prints the summary. A ping interrupted or cut short by the
 * deadline while waiting for its pong is not counted. Exit status, as iputils': 0 if any ping was answered
 * (with both {@code -c} and {@code -w}: if {@code COUNT} were answered before the deadline), 1 otherwise, 2 for
 * a usage error or a name that does not resolve; after Ctrl-C the JVM exits with the signal's status (130)
 * once the summary is printed.
 */
@Command(
    name = "ping",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
        "Pings the RDS stack serving DEST: sends messages to DEST port 0, which that stack answers with a "
            + "zero-length pong, and prints each round-trip time and a summary (min/avg/max exact, percentiles from an "
            + "HdrHistogram).",
        "Durations are seconds (0.2) or a whole number with a unit (500ms, 2s); sizes are bytes or k/m (powers of 1024).",
        "Exit status 0 if any ping was answered (with -c and -w both given: if -c were answered before the deadline), "
            + "1 otherwise, 2 for a usage error or a DEST that does not resolve."})
public final class PingCommand implements Callable<Integer>
{
    /** Exit status when no ping got a pong (or, with -c and -w, fewer than COUNT before the deadline). */
    static final int EXIT_LOST = 1;
    /** Round trips above this (one hour) are recorded as this. */
    private static final long MAX_RTT_NANOS = TimeUnit.HOURS.toNanos(1);

    @Spec
    private CommandSpec spec;

    @Parameters(
        index = "0",
        paramLabel = "DEST",
        description = "IP address or host name to ping (no port: a ping always goes to port 0, the stack's responder).")
    private String destinationText;

    @Option(names = {"-c", "--count"}, paramLabel = "COUNT",
        description = "Pings to send; 0 pings until interrupted (Ctrl-C) or the -w deadline. Default: 5, or 0 with -w.")
    private Long count;

    @Option(names = {"-i", "--interval"}, paramLabel = "INTERVAL", defaultValue = "1", converter = DurationConverter.class,
        description = "Time from one ping to the next, in seconds with decimals (0.2) or with a unit (200ms); the next "
            + "ping waits for the previous pong or timeout anyway. Default: ${DEFAULT-VALUE} s.")
    private Duration interval;

    @Option(names = {"-w", "--deadline"}, paramLabel = "DEADLINE", converter = DurationConverter.class,
        description = "Stop after this long, however many pings were sent (a ping the deadline cuts short is not "
            + "counted). Default: none.")
    private Duration deadline;

    @Option(names = {"-W", "--timeout"}, paramLabel = "TIMEOUT", defaultValue = "1", converter = DurationConverter.class,
        description = "How long to wait for each pong (and for send-buffer room). Default: ${DEFAULT-VALUE} s.")
    private Duration timeout;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "0", converter = SizeConverter.class,
        description = "Payload bytes of each ping, 0 to 1m (the pong is empty whatever the size). Default: ${DEFAULT-VALUE}.")
    private int size;

    @Option(names = {"-I", "--interface"}, paramLabel = "LOCAL_IP", defaultValue = "127.0.0.1",
        converter = IpConverter.class,
        description = "Local address to bind (on an ephemeral port). Default: ${DEFAULT-VALUE}.")
    private InetAddress local;

    @Option(names = {"-q", "--quiet"}, description = "Print only the summary, no line per ping.")
    private boolean quiet;

    @Option(names = "--json", description = "One JSON object per line: one per ping (none with -q), the summary last.")
    private boolean json;

    @Mixin
    private StackOptions stackOptions;

    private InetAddress destination;
    private volatile boolean stopped;

    /** Creates the command; picocli sets its options. */
    public PingCommand()
    {
    }

    @Override
    public Integer call() throws IOException
    {
        validate();
        final PrintWriter out = spec.commandLine().getOut();
        final Thread pinger = Thread.currentThread();
        final CountDownLatch finished = new CountDownLatch(1);
        // Ctrl-C: stop pinging, let the summary be printed, then let the JVM go on exiting
        final Thread hook = new Thread(() ->
        {
            stopped = true;
            pinger.interrupt();
            try
            {
                finished.await(2, TimeUnit.SECONDS);
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
        }, "rds-ping-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try (RdsStack stack = RdsStack.open(stackOptions.config("ping")))
        {
            final Statistics statistics = run(stack, out);
            if (stopped)
            {
                Thread.interrupted(); // our own interrupt, from the hook: the stack must close normally
            }
            out.println(json ? statistics.summaryJson(destinationText, destination.getHostAddress())
                : statistics.summary(name()));
            out.flush();
            return answeredEnough(count, deadline, statistics.received()) ? 0 : EXIT_LOST;
        }
        finally
        {
            finished.countDown();
            try
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (final IllegalStateException e)
            {
                // the JVM is shutting down: the hook is running
            }
        }
    }

    /**
     * @param count    {@code -c}, or null if not given.
     * @param deadline {@code -w}, or null if not given.
     * @param received pings answered.
     * @return whether the run succeeded, as iputils ping decides: any answer will do, unless a count and a
     *         deadline were both given, when the count must have been answered.
     */
    static boolean answeredEnough(final Long count, final Duration deadline, final long received)
    {
        if (count != null && count > 0 && deadline != null)
        {
            return received >= count;
        }
        return received > 0;
    }

    /** @return DEST as typed, with its address when it was a name: {@code localhost (127.0.0.1)}. */
    private String name()
    {
        final String address = destination.getHostAddress();
        return address.equals(destinationText) ? address : destinationText + " (" + address + ")";
    }

    private Statistics run(final RdsStack stack, final PrintWriter out) throws IOException
    {
        final InetSocketAddress target = new InetSocketAddress(destination, 0);
        final ByteBuffer ping = ByteBuffer.allocate(size);
        final ByteBuffer pong = ByteBuffer.allocate(1); // pongs are empty; anything else is ignored
        final Statistics statistics = new Statistics(MAX_RTT_NANOS);
        final long timeoutNs = timeout.toNanos();
        final long intervalNs = interval.toNanos();
        final long pings = count != null ? count : deadline != null ? 0 : 5;
        final long startNs = System.nanoTime();
        final long endNs = deadline == null ? Long.MAX_VALUE : startNs + deadline.toNanos();
        RdsSocket socket = openSocket(stack);
        try
        {
            long nextSendNs = startNs;
            for (long seq = 1; (pings == 0 || seq <= pings) && !stopped; seq++)
            {
                // wait out the interval; a message arriving meanwhile cannot be a pong (every ping of this
                // socket has been answered) and is dropped
                long wait;
                while ((wait = Math.min(nextSendNs, endNs) - System.nanoTime()) > 0 && !stopped)
                {
                    socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofNanos(wait));
                    pong.clear();
                    socket.receive(pong);
                }
                if (stopped || System.nanoTime() - endNs >= 0)
                {
                    break;
                }

                ping.clear();
                final long sentNs = System.nanoTime();
                nextSendNs = sentNs + intervalNs;
                final int result = socket.send(ping, target);
                if (result < 0)
                {
                    if (result == RdsResult.EINTR && stopped)
                    {
                        break;
                    }
                    statistics.recordLost();
                    print(out, json ? new JsonLine().add("type", "send_failed").add("seq", seq)
                        .add("error", RdsResult.name(result)) : "seq=" + seq + " send failed: " + RdsResult.name(result));
                    socket = replace(stack, socket);
                    continue;
                }

                final long pongDeadlineNs = sentNs + timeoutNs;
                final boolean cutShort = endNs - pongDeadlineNs < 0;
                final long waitUntilNs = cutShort ? endNs : pongDeadlineNs;
                boolean answered = false;
                long left;
                while (!answered && !stopped && (left = waitUntilNs - System.nanoTime()) > 0)
                {
                    socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofNanos(left));
                    pong.clear();
                    final InetSocketAddress from = socket.receive(pong);
                    final long receivedNs = System.nanoTime();
                    if (isPong(from, pong))
                    {
                        answered = true;
                        final long nanos = receivedNs - sentNs;
                        statistics.recordReceived(nanos);
                        final double micros = nanos / 1e3;
                        print(out, json ? new JsonLine().add("type", "pong").add("seq", seq)
                            .add("from", destination.getHostAddress()).add("rtt_us", micros)
                            : "seq=" + seq + " from " + destination.getHostAddress() + ": time=" + format(micros) + " us");
                    }
                }
                if (!answered)
                {
                    if (stopped || cutShort)
                    {
                        break; // interrupted or cut short by the deadline while waiting: this ping is not counted
                    }
                    statistics.recordLost();
                    print(out, json ? new JsonLine().add("type", "timeout").add("seq", seq) : "seq=" + seq + " timeout");
                    socket = replace(stack, socket); // a late pong must not answer the next ping
                }
            }
            return statistics;
        }
        finally
        {
            socket.close();
        }
    }

    private void print(final PrintWriter out, final Object line)
    {
        if (!quiet)
        {
            out.println(line);
            out.flush();
        }
    }

    /** @return a socket bound to {@code LOCAL_IP} on an ephemeral port, its sends bounded by the timeout. */
    private RdsSocket openSocket(final RdsStack stack) throws IOException
    {
        final RdsSocket socket = stack.openSocket();
        try
        {
            socket.setOption(RdsOptions.SO_SNDTIMEO, timeout);
            socket.bind(new InetSocketAddress(local, 0));
            return socket;
        }
        catch (final IOException | RuntimeException e)
        {
            socket.close();
            throw e;
        }
    }

    /** Closes a socket whose ping went unanswered (dropping the ping if still queued) and opens the next. */
    private RdsSocket replace(final RdsStack stack, final RdsSocket socket) throws IOException
    {
        socket.close();
        return openSocket(stack);
    }

    private boolean isPong(final InetSocketAddress from, final ByteBuffer payload)
    {
        return from != null && from.getPort() == 0 && destination.equals(from.getAddress()) && payload.position() == 0;
    }

    private void validate()
    {
        if (count != null && count < 0)
        {
            throw new ParameterException(spec.commandLine(), "-c must be 0 (until interrupted) or more: " + count);
        }
        if (size < 0 || size > RdsSocket.MAX_MESSAGE_SIZE)
        {
            throw new ParameterException(spec.commandLine(), "-s must be 0.." + RdsSocket.MAX_MESSAGE_SIZE + ": " + size);
        }
        if (timeout.compareTo(Duration.ofMillis(1)) < 0)
        {
            throw new ParameterException(spec.commandLine(), "-W/--timeout must be at least 1ms: " + DurationConverter.format(timeout));
        }
        if (deadline != null && deadline.isZero())
        {
            throw new ParameterException(spec.commandLine(), "-w must be more than 0");
        }
        destination = resolve(destinationText);
        // binding and sending need the stack: the configuration's own checks (--tcp-port) come first
        stackOptions.config("ping");
    }

    /** @return an IP literal as it is, else the host name's first address. */
    private InetAddress resolve(final String text)
    {
        final boolean literal = text.indexOf(':') >= 0 || text.startsWith("[") || text.matches("[0-9.]+");
        if (literal)
        {
            try
            {
                return IpConverter.parse(text);
            }
            catch (final TypeConversionException e)
            {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        try
        {
            return InetAddress.getByName(text);
        }
        catch (final UnknownHostException e)
        {
            throw new ParameterException(spec.commandLine(), "unknown host: " + text);
        }
    }

    /**
     * @param micros a time in microseconds.
     * @return it with one decimal, e.g. {@code 52.3}.
     */
    static String format(final double micros)
    {
        return String.format(Locale.ROOT, "%.1f", micros);
    }

    /**
     * Counts of one run and its round-trip times: exact count, minimum, maximum and sum, and an HdrHistogram
     * (3 significant digits) for the percentiles, so that the memory is the same however many pings
     * ({@code -c 0}).
     */
    static final class Statistics
    {
        private final Histogram rtts;
        private final long maxNanos;
        private long sent;
        private long lost;
        private long received;
        private long minNanos = Long.MAX_VALUE;
        private long maxSeen;
        private double sumNanos;

        /** @param maxNanos round trips above this are recorded as this. */
        Statistics(final long maxNanos)
        {
            this.maxNanos = maxNanos;
            this.rtts = new Histogram(1, maxNanos, 3);
        }

        /**
         * Records an answered ping.
         *
         * @param nanos its round-trip time.
         */
        void recordReceived(final long nanos)
        {
            final long value = Math.max(1, Math.min(maxNanos, nanos));
            sent++;
            received++;
            rtts.recordValue(value);
            minNanos = Math.min(minNanos, value);
            maxSeen = Math.max(maxSeen, value);
            sumNanos += value;
        }

        /** Records a lost ping. */
        void recordLost()
        {
            sent++;
            lost++;
        }

        /** @return pings answered so far. */
        long received()
        {
            return received;
        }

        /** @return the bytes the histogram takes, the same however many values it holds. */
        int footprint()
        {
            return rtts.getEstimatedFootprintInBytes();
        }

        /**
         * @param destination what was pinged, as printed.
         * @return {@code --- DEST rds ping: S sent, R received, L% loss; rtt min/avg/max/p50/p90/p99 = ... us}, the rtt
         *         part only when a pong came.
         */
        String summary(final String destination)
        {
            final StringBuilder line = new StringBuilder("--- ").append(destination).append(" rds ping: ")
                .append(sent).append(" sent, ").append(received).append(" received, ")
                .append(lossPercent(sent, lost)).append("% loss");
            if (received > 0)
            {
                line.append("; rtt min/avg/max/p50/p90/p99 = ")
                    .append(format(minNanos / 1e3)).append('/')
                    .append(format(sumNanos / received / 1e3)).append('/')
                    .append(format(maxSeen / 1e3)).append('/')
                    .append(format(percentileMicros(50))).append('/')
                    .append(format(percentileMicros(90))).append('/')
                    .append(format(percentileMicros(99))).append(" us");
            }
            return line.toString();
        }

        /**
         * @param destination DEST as given.
         * @param address     its address.
         * @return the summary as one JSON object, {@code rtt_us} null when no pong came.
         */
        JsonLine summaryJson(final String destination, final String address)
        {
            return new JsonLine()
                .add("type", "summary")
                .add("destination", destination)
                .add("address", address)
                .add("sent", sent)
                .add("received", received)
                .add("lost", lost)
                .add("loss_pct", sent == 0 ? 0 : lost * 100.0 / sent)
                .add("rtt_us", received == 0 ? null : new JsonLine()
                    .add("min", minNanos / 1e3)
                    .add("avg", sumNanos / received / 1e3)
                    .add("max", maxSeen / 1e3)
                    .add("p50", percentileMicros(50))
                    .add("p90", percentileMicros(90))
                    .add("p99", percentileMicros(99))
                    .add("p999", percentileMicros(99.9)));
        }

        /** @return a percentile of the round trips in microseconds, never above the exact maximum. */
        private double percentileMicros(final double percent)
        {
            return Math.min(maxSeen, rtts.getValueAtPercentile(percent)) / 1e3;
        }

        /**
         * @param sent pings sent.
         * @param lost pings lost.
         * @return the loss in percent: a whole number when exact ({@code 0}, {@code 100}), else with one decimal
         *         ({@code 33.3}), and never {@code 0} or {@code 100} unless exactly so.
         */
        static String lossPercent(final long sent, final long lost)
        {
            if (sent == 0 || lost == 0)
            {
                return "0";
            }
            if (lost * 100 % sent == 0)
            {
                return Long.toString(lost * 100 / sent);
            }
            final double percent = Math.min(99.9, Math.max(0.1, lost * 100.0 / sent));
            return String.format(Locale.ROOT, "%.1f", percent);
        }
    }
}
