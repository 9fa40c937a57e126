package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rds ping DEST [-c COUNT] [-i INTERVAL_MS] [-I LOCAL_IP] [-s SIZE] [--timeout MS]}: the RDS ping of
 * {@code rds-ping(1)}. Opens a stack, binds one socket to {@code LOCAL_IP} on an ephemeral port, and sends
 * messages to port 0 of {@code DEST}; the stack serving {@code DEST} answers each one itself with a pong, a
 * zero-length message from {@code DEST:0} (whatever the ping's size: the kernel's pong has no payload
 * either). {@code DEST} is an IP address only: a ping always goes to port 0, so {@code IP:PORT} is a usage
 * error. {@code DEST} answers only if a socket of its stack is bound to that address (a stack listens on the
 * addresses its sockets are bound to).
 * <p>
 * Output: one line per ping, {@code seq=1 from 127.0.0.2: time=52.3 us} or {@code seq=3 timeout} (or
 * {@code seq=3 send failed: ETIMEDOUT} when the ping could not even be queued within the timeout), then
 * {@code --- 127.0.0.2 rds ping: 5 sent, 5 received, 0% loss; rtt min/avg/max/p50/p99 = .../.../.../.../... us}
 * (the rtt part only when a pong came). The round trip is measured from just before the send to the return
 * of the receive, so it includes rds4j's hand-off to its agent thread on both sides.
 * <p>
 * Matching pongs to pings: pongs carry no sequence number, only the port they answer. So pings go one at a
 * time, the next only after the previous one's pong or timeout (and no earlier than {@code INTERVAL_MS}
 * after the previous send), and while every ping is answered they all go from the same socket, where the
 * only pong that can arrive is the current ping's. When a ping times out, its socket is closed, which also
 * drops the ping if it is still queued, and the next ping goes from a fresh socket on another ephemeral
 * port: a late pong of the timed-out ping then finds no socket and is dropped by the local stack (counted in
 * {@code recv_drop_no_sock}), so it can never be taken for the answer of a later ping. ({@code rds-ping}
 * matches by port too, with a ring of 8 sockets.) Matching by rank instead (the n-th pong answers the n-th
 * ping) would rely on exactly-once delivery, which rds4j does not keep towards a peer that restarted.
 * <p>
 * Unlike {@code rds-ping}, whose default count is 0 (until interrupted), {@code -c} defaults to 5 so that a
 * script cannot hang; {@code -c 0} pings until the process is interrupted (Ctrl-C), then prints the summary.
 * A ping interrupted while waiting for its pong is not counted. Exit status: 0 if every ping was answered,
 * 1 if any was lost, 2 for a usage error; after Ctrl-C the JVM exits with the signal's status (130) once the
 * summary is printed.
 */
@Command(
    name = "ping",
    mixinStandardHelpOptions = true,
    description = {
        "Pings the RDS stack serving DEST: sends messages to DEST port 0, which that stack answers with a "
            + "zero-length pong, and prints each round-trip time and a summary.",
        "Exit status 0 if every ping was answered, 1 if any was lost, 2 for a usage error."})
public final class PingCommand implements Callable<Integer>
{
    /** Exit status when at least one ping got no pong. */
    static final int EXIT_LOST = 1;

    @Spec
    private CommandSpec spec;

    @Mixin
    private StackOptions stackOptions;

    @Parameters(
        index = "0",
        paramLabel = "DEST",
        converter = IpConverter.class,
        description = "IP address to ping (no port: a ping always goes to port 0, the stack's responder).")
    private InetAddress destination;

    @Option(names = {"-c", "--count"}, paramLabel = "COUNT", defaultValue = "5",
        description = "Pings to send; 0 pings until interrupted (Ctrl-C). Default: ${DEFAULT-VALUE}.")
    private long count;

    @Option(names = {"-i", "--interval"}, paramLabel = "INTERVAL_MS", defaultValue = "1000",
        description = "Milliseconds from one ping to the next (the next waits for the previous pong or timeout "
            + "anyway). Default: ${DEFAULT-VALUE}.")
    private long intervalMs;

    @Option(names = {"-I", "--interface"}, paramLabel = "LOCAL_IP", defaultValue = "127.0.0.1",
        converter = IpConverter.class,
        description = "Local address to bind (on an ephemeral port). Default: ${DEFAULT-VALUE}.")
    private InetAddress local;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "0",
        description = "Payload bytes of each ping, 0 to 1048576 (the pong is empty whatever the size). "
            + "Default: ${DEFAULT-VALUE}.")
    private int size;

    @Option(names = "--timeout", paramLabel = "MS", defaultValue = "1000",
        description = "Milliseconds to wait for each pong (and for send-buffer room). Default: ${DEFAULT-VALUE}.")
    private long timeoutMs;

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
            out.println(statistics.summary(destination.getHostAddress()));
            out.flush();
            return statistics.lost() == 0 ? 0 : EXIT_LOST;
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

    private Statistics run(final RdsStack stack, final PrintWriter out) throws IOException
    {
        final InetSocketAddress target = new InetSocketAddress(destination, 0);
        final ByteBuffer ping = ByteBuffer.allocate(size);
        final ByteBuffer pong = ByteBuffer.allocate(1); // pongs are empty; anything else is ignored
        final Statistics statistics = new Statistics();
        final long timeoutNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        final long intervalNs = TimeUnit.MILLISECONDS.toNanos(intervalMs);
        RdsSocket socket = openSocket(stack);
        try
        {
            long nextSendNs = System.nanoTime();
            for (long seq = 1; (count == 0 || seq <= count) && !stopped; seq++)
            {
                // wait out the interval; a message arriving meanwhile cannot be a pong (every ping of this
                // socket has been answered) and is dropped
                long wait;
                while ((wait = nextSendNs - System.nanoTime()) > 0 && !stopped)
                {
                    socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofNanos(wait));
                    pong.clear();
                    socket.receive(pong);
                }
                if (stopped)
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
                    out.println("seq=" + seq + " send failed: " + RdsResult.name(result));
                    out.flush();
                    socket = replace(stack, socket);
                    continue;
                }

                final long deadlineNs = sentNs + timeoutNs;
                boolean answered = false;
                long left;
                while (!answered && !stopped && (left = deadlineNs - System.nanoTime()) > 0)
                {
                    socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofNanos(left));
                    pong.clear();
                    final InetSocketAddress from = socket.receive(pong);
                    final long receivedNs = System.nanoTime();
                    if (isPong(from, pong))
                    {
                        answered = true;
                        final double micros = (receivedNs - sentNs) / 1e3;
                        statistics.recordReceived(micros);
                        out.println("seq=" + seq + " from " + destination.getHostAddress() + ": time=" + format(micros) + " us");
                    }
                }
                if (!answered)
                {
                    if (stopped)
                    {
                        break; // interrupted while waiting: this ping is not counted
                    }
                    statistics.recordLost();
                    out.println("seq=" + seq + " timeout");
                    socket = replace(stack, socket); // a late pong must not answer the next ping
                }
                out.flush();
            }
            return statistics;
        }
        finally
        {
            socket.close();
        }
    }

    /** @return a socket bound to {@code LOCAL_IP} on an ephemeral port, its sends bounded by the timeout. */
    private RdsSocket openSocket(final RdsStack stack) throws IOException
    {
        final RdsSocket socket = stack.openSocket();
        try
        {
            socket.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofMillis(timeoutMs));
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
        if (count < 0)
        {
            throw new ParameterException(spec.commandLine(), "-c must be 0 (until interrupted) or more: " + count);
        }
        if (intervalMs < 0)
        {
            throw new ParameterException(spec.commandLine(), "-i must not be negative: " + intervalMs);
        }
        if (size < 0 || size > RdsSocket.MAX_MESSAGE_SIZE)
        {
            throw new ParameterException(spec.commandLine(), "-s must be 0.." + RdsSocket.MAX_MESSAGE_SIZE + ": " + size);
        }
        if (timeoutMs < 1)
        {
            throw new ParameterException(spec.commandLine(), "--timeout must be at least 1 ms: " + timeoutMs);
        }
        // binding and sending need the stack: the configuration's own checks (--tcp-port) come first
        stackOptions.config("ping");
    }

    /**
     * @param micros a time in microseconds.
     * @return it with one decimal, e.g. {@code 52.3}.
     */
    static String format(final double micros)
    {
        return String.format(Locale.ROOT, "%.1f", micros);
    }

    /** Counts of one run and its round-trip times; the summary line. */
    static final class Statistics
    {
        private long sent;
        private long lost;
        private double[] rtts = new double[16];
        private int received;

        /**
         * Records an answered ping.
         *
         * @param micros its round-trip time.
         */
        void recordReceived(final double micros)
        {
            sent++;
            if (received == rtts.length)
            {
                rtts = Arrays.copyOf(rtts, received * 2);
            }
            rtts[received++] = micros;
        }

        /** Records a lost ping. */
        void recordLost()
        {
            sent++;
            lost++;
        }

        /** @return pings lost so far. */
        long lost()
        {
            return lost;
        }

        /**
         * @param destination what was pinged, as printed.
         * @return {@code --- DEST rds ping: S sent, R received, L% loss; rtt min/avg/max/p50/p99 = ... us}, the rtt
         *         part only when a pong came.
         */
        String summary(final String destination)
        {
            final StringBuilder line = new StringBuilder("--- ").append(destination).append(" rds ping: ")
                .append(sent).append(" sent, ").append(received).append(" received, ")
                .append(lossPercent(sent, lost)).append("% loss");
            if (received > 0)
            {
                final double[] sorted = Arrays.copyOf(rtts, received);
                Arrays.sort(sorted);
                double sum = 0;
                for (final double rtt : sorted)
                {
                    sum += rtt;
                }
                line.append("; rtt min/avg/max/p50/p99 = ")
                    .append(format(sorted[0])).append('/')
                    .append(format(sum / received)).append('/')
                    .append(format(sorted[received - 1])).append('/')
                    .append(format(percentile(sorted, 50))).append('/')
                    .append(format(percentile(sorted, 99))).append(" us");
            }
            return line.toString();
        }

        /**
         * @param sorted  values in ascending order, at least one.
         * @param percent 1..100.
         * @return the nearest-rank percentile.
         */
        static double percentile(final double[] sorted, final int percent)
        {
            final int rank = (int)Math.ceil(percent / 100.0 * sorted.length);
            return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
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
