package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rds demo}: three nodes in one JVM, each its own stack with one socket on 127.0.0.1, 127.0.0.2 and
 * 127.0.0.3; every node sends {@code --messages} messages to each of the two others and every receiver checks
 * that each sender's messages arrive complete, intact and in order. Exit status 0 only if all six pairs did.
 * <p>
 * Each payload is {@code --size} bytes: the sender's index (int), the sequence number 0..N-1 (int), then
 * filler bytes that depend on both, so a mixed-up or damaged message is noticed.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
        "Three nodes in one JVM send messages to each other and check what arrives.",
        "Stacks node1..node3 bind one socket each at 127.0.0.1:P, 127.0.0.2:P and 127.0.0.3:P; every node sends N "
            + "messages to each of the others and the receivers check count, order and content per sender.",
        "Exit status 0 only if every pair received exactly N messages, in order and intact."})
public final class DemoCommand implements Callable<Integer>
{
    /** Nodes of the demo. */
    static final int NODES = 3;

    /** Bytes of a payload that are not filler: sender index and sequence number. */
    static final int HEADER_BYTES = 8;

    private static final int EXIT_FAILED = 1;

    @Spec
    private CommandSpec spec;

    @Mixin
    private StackOptions stackOptions;

    @Option(names = "--messages", paramLabel = "N", defaultValue = "1000",
        description = "Messages each node sends to each other node. Default: ${DEFAULT-VALUE}.")
    private int messages;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "64", converter = SizeConverter.class,
        description = "Payload size, " + HEADER_BYTES + " to 1048576 bytes. Default: ${DEFAULT-VALUE}.")
    private int size;

    @Option(names = "--port", paramLabel = "P", defaultValue = "4000",
        description = "RDS port every node binds (on its own address). Default: ${DEFAULT-VALUE}.")
    private int port;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10", converter = DurationConverter.class,
        description = "SO_RCVTIMEO and SO_SNDTIMEO of the sockets, in seconds or with a unit (500ms); the demo gives up "
            + "after this long without progress. Default: ${DEFAULT-VALUE} s.")
    private Duration timeout;

    /** Creates the command; picocli sets its options. */
    public DemoCommand()
    {
    }

    @Override
    public Integer call() throws IOException, InterruptedException
    {
        validate();
        final PrintWriter out = spec.commandLine().getOut();
        final InetSocketAddress[] nodes = new InetSocketAddress[NODES];
        for (int i = 0; i < NODES; i++)
        {
            nodes[i] = new InetSocketAddress(loopback(i + 1), port);
        }

        final RdsStack[] stacks = new RdsStack[NODES];
        final RdsSocket[] sockets = new RdsSocket[NODES];
        try
        {
            for (int i = 0; i < NODES; i++)
            {
                stacks[i] = RdsStack.open(stackOptions.config(name(i)));
            }
            for (int i = 0; i < NODES; i++)
            {
                sockets[i] = stacks[i].openSocket();
                sockets[i].setOption(RdsOptions.SO_RCVTIMEO, timeout);
                sockets[i].setOption(RdsOptions.SO_SNDTIMEO, timeout);
                sockets[i].bind(nodes[i]);
            }
            out.printf("demo: %d nodes, %d messages of %d bytes per pair, tcp port %d%n",
                NODES, messages, size, TcpConfig.of(stacks[0].config()).tcpPort());
            out.flush();
            return run(out, stacks, sockets, nodes, timeout);
        }
        finally
        {
            for (final RdsSocket socket : sockets)
            {
                if (socket != null)
                {
                    socket.close();
                }
            }
            for (final RdsStack stack : stacks)
            {
                if (stack != null)
                {
                    stack.close();
                }
            }
        }
    }

    private int run(
        final PrintWriter out,
        final RdsStack[] stacks,
        final RdsSocket[] sockets,
        final InetSocketAddress[] nodes,
        final Duration timeout) throws InterruptedException
    {
        final AtomicLong progress = new AtomicLong();
        final Receiver[] receivers = new Receiver[NODES];
        final Sender[] senders = new Sender[NODES];
        final List<Thread> threads = new ArrayList<>();
        final long start = System.nanoTime();
        for (int i = 0; i < NODES; i++)
        {
            receivers[i] = new Receiver(i, sockets[i], nodes, size, messages, progress);
            threads.add(start(receivers[i], "demo-receive-" + name(i)));
        }
        for (int i = 0; i < NODES; i++)
        {
            senders[i] = new Sender(i, sockets[i], nodes, size, messages, progress);
            threads.add(start(senders[i], "demo-send-" + name(i)));
        }

        // receivers stop by themselves after SO_RCVTIMEO without a message; the margin covers a slow shutdown
        final boolean finished = awaitWithProgress(threads, progress, timeout.plusSeconds(5));
        final double seconds = (System.nanoTime() - start) / 1e9;
        if (!finished)
        {
            out.printf("demo: no progress for %d s, giving up%n", timeout.plusSeconds(5).toSeconds());
            for (final RdsSocket socket : sockets)
            {
                socket.close(); // blocked calls return
            }
            awaitAll(threads, Duration.ofSeconds(5));
        }

        boolean ok = finished;
        for (int from = 0; from < NODES; from++)
        {
            for (int to = 0; to < NODES; to++)
            {
                if (from != to)
                {
                    ok &= receivers[to].report(out, from);
                }
            }
        }
        for (int i = 0; i < NODES; i++)
        {
            final String failure = senders[i].failure();
            if (failure != null)
            {
                out.println(name(i) + " send failed: " + failure);
                ok = false;
            }
            ok &= receivers[i].reportProblems(out);
        }
        for (int i = 0; i < NODES; i++)
        {
            printCounters(out, name(i), stacks[i]);
        }
        long delivered = 0;
        for (final Receiver receiver : receivers)
        {
            delivered += receiver.counted();
        }
        out.printf("demo: %s, %d of %d messages delivered in %.2f s (%.0f msg/s)%n", ok ? "OK" : "FAILED",
            delivered, (long)NODES * (NODES - 1) * messages, seconds, delivered / Math.max(seconds, 1e-9));
        out.flush();
        return ok ? 0 : EXIT_FAILED;
    }

    private void validate()
    {
        if (messages < 1)
        {
            throw new ParameterException(spec.commandLine(), "--messages must be at least 1: " + messages);
        }
        if (size < HEADER_BYTES || size > RdsSocket.MAX_MESSAGE_SIZE)
        {
            throw new ParameterException(spec.commandLine(),
                "--size must be " + HEADER_BYTES + ".." + RdsSocket.MAX_MESSAGE_SIZE + ": " + size);
        }
        if (port < 2 || port > 65535)
        {
            throw new ParameterException(spec.commandLine(), "--port must be 2..65535 (RDS reserves 0 and 1): " + port);
        }
        if (timeout.compareTo(Duration.ofMillis(1)) < 0)
        {
            throw new ParameterException(spec.commandLine(), "--timeout must be at least 1ms: " + DurationConverter.format(timeout));
        }
    }

    private static void printCounters(final PrintWriter out, final String node, final RdsStack stack)
    {
        final Map<String, Long> counters = new TreeMap<>(stack.counters());
        counters.values().removeIf(v -> v == null || v == 0L);
        out.println("counters of " + node + ":" + (counters.isEmpty() ? " all zero" : ""));
        final int width = counters.keySet().stream().mapToInt(String::length).max().orElse(0);
        counters.forEach((name, value) -> out.printf("  %-" + width + "s %d%n", name, value));
    }

    /** Waits for every thread; gives up when {@code progress} has not moved for {@code idleLimit}. */
    private static boolean awaitWithProgress(final List<Thread> threads, final AtomicLong progress, final Duration idleLimit)
        throws InterruptedException
    {
        long seen = progress.get();
        long idleSince = System.nanoTime();
        for (final Thread thread : threads)
        {
            while (thread.isAlive())
            {
                thread.join(100);
                final long now = progress.get();
                if (now != seen)
                {
                    seen = now;
                    idleSince = System.nanoTime();
                }
                else if (System.nanoTime() - idleSince > idleLimit.toNanos())
                {
                    return false;
                }
            }
        }
        return true;
    }

    private static void awaitAll(final List<Thread> threads, final Duration limit) throws InterruptedException
    {
        final long deadline = System.nanoTime() + limit.toNanos();
        for (final Thread thread : threads)
        {
            final long left = deadline - System.nanoTime();
            if (left > 0)
            {
                TimeUnit.NANOSECONDS.timedJoin(thread, left);
            }
        }
    }

    private static Thread start(final Runnable task, final String name)
    {
        final Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    static String name(final int index)
    {
        return "node" + (index + 1);
    }

    private static InetAddress loopback(final int lastOctet)
    {
        try
        {
            return InetAddress.getByAddress(new byte[] {127, 0, 0, (byte)lastOctet});
        }
        catch (final UnknownHostException e)
        {
            throw new IllegalStateException(e);
        }
    }

    /** The filler byte at {@code offset} of message {@code sequence} from node {@code sender}. */
    static byte filler(final int sender, final int sequence, final int offset)
    {
        return (byte)(offset + 31 * sequence + 101 * sender);
    }

    /** Sends {@code messages} messages to each other node, alternating destinations, with blocking sends. */
    private static final class Sender implements Runnable
    {
        private final int self;
        private final RdsSocket socket;
        private final InetSocketAddress[] nodes;
        private final int size;
        private final int messages;
        private final AtomicLong progress;
        private volatile String failure;

        Sender(final int self, final RdsSocket socket, final InetSocketAddress[] nodes, final int size, final int messages,
            final AtomicLong progress)
        {
            this.self = self;
            this.socket = socket;
            this.nodes = nodes;
            this.size = size;
            this.messages = messages;
            this.progress = progress;
        }

        String failure()
        {
            return failure;
        }

        @Override
        public void run()
        {
            final ByteBuffer buffer = ByteBuffer.allocate(size);
            try
            {
                for (int sequence = 0; sequence < messages; sequence++)
                {
                    buffer.clear();
                    buffer.putInt(self).putInt(sequence);
                    for (int offset = HEADER_BYTES; offset < size; offset++)
                    {
                        buffer.put(filler(self, sequence, offset));
                    }
                    for (int to = 0; to < nodes.length; to++)
                    {
                        if (to == self)
                        {
                            continue;
                        }
                        buffer.clear(); // the whole payload: the buffer's capacity is exactly size
                        final int result = socket.send(buffer, nodes[to]);
                        if (result < 0)
                        {
                            failure = "to " + name(to) + ", message " + sequence + ": " + RdsResult.name(result);
                            return;
                        }
                        progress.incrementAndGet();
                    }
                }
            }
            catch (final IOException | RuntimeException e)
            {
                failure = e.toString();
            }
        }
    }

    /** Receives until every other node's messages are in, checking each pair's count, order and content. */
    private static final class Receiver implements Runnable
    {
        private final int self;
        private final RdsSocket socket;
        private final InetSocketAddress[] nodes;
        private final int size;
        private final int messages;
        private final AtomicLong progress;
        private final int[] received = new int[NODES];
        private final int[] nextSequence = new int[NODES];
        private final boolean[] outOfOrder = new boolean[NODES];
        private final int[] damaged = new int[NODES];
        private long unexpected;
        private String lastUnexpected;
        private String failure;

        Receiver(final int self, final RdsSocket socket, final InetSocketAddress[] nodes, final int size, final int messages,
            final AtomicLong progress)
        {
            this.self = self;
            this.socket = socket;
            this.nodes = nodes;
            this.size = size;
            this.messages = messages;
            this.progress = progress;
        }

        @Override
        public void run()
        {
            // one byte more than a payload, so that a longer message shows as too long rather than truncated
            final ByteBuffer buffer = ByteBuffer.allocate(size + 1);
            final long expected = (long)(NODES - 1) * messages;
            long counted = 0;
            try
            {
                while (counted < expected)
                {
                    buffer.clear();
                    final InetSocketAddress from = socket.receive(buffer);
                    if (from == null)
                    {
                        fail(Thread.currentThread().isInterrupted() ? "interrupted" :
                            "no message within SO_RCVTIMEO after " + counted + " of " + expected);
                        return;
                    }
                    progress.incrementAndGet();
                    buffer.flip();
                    if (record(from, buffer))
                    {
                        counted++;
                    }
                }
            }
            catch (final IOException | RuntimeException e)
            {
                if (socket.isOpen())
                {
                    fail(e.toString());
                }
                else
                {
                    fail("socket closed after " + counted + " of " + expected);
                }
            }
        }

        /** @return whether the message came from another node of the demo (and so counts toward the total). */
        private synchronized boolean record(final InetSocketAddress from, final ByteBuffer payload)
        {
            final int sender = payload.remaining() >= HEADER_BYTES ? payload.getInt(0) : -1;
            if (sender < 0 || sender >= NODES || sender == self || !nodes[sender].equals(from))
            {
                unexpected++;
                lastUnexpected = payload.remaining() + " bytes from " + IpPortConverter.format(from);
                return false;
            }
            final int sequence = payload.getInt(4);
            received[sender]++;
            if (sequence != nextSequence[sender])
            {
                outOfOrder[sender] = true;
            }
            nextSequence[sender] = sequence + 1;
            if (payload.remaining() != size)
            {
                damaged[sender]++;
            }
            else
            {
                for (int offset = HEADER_BYTES; offset < size; offset++)
                {
                    if (payload.get(offset) != filler(sender, sequence, offset))
                    {
                        damaged[sender]++;
                        break;
                    }
                }
            }
            return true;
        }

        /** @return the messages received from the other nodes of the demo. */
        synchronized long counted()
        {
            long total = 0;
            for (final int count : received)
            {
                total += count;
            }
            return total;
        }

        private synchronized void fail(final String why)
        {
            failure = why;
        }

        /**
         * Prints the line of pair {@code from -> self}.
         *
         * @return whether the pair got exactly all messages, in order and intact.
         */
        synchronized boolean report(final PrintWriter out, final int from)
        {
            final boolean inOrder = !outOfOrder[from];
            out.printf("%s -> %s: received %d of %d, in order: %s%s%n",
                name(from), name(self), received[from], messages, inOrder ? "yes" : "no",
                damaged[from] == 0 ? "" : ", damaged: " + damaged[from]);
            return received[from] == messages && inOrder && damaged[from] == 0;
        }

        /** Prints what else went wrong at this receiver. @return whether nothing did. */
        synchronized boolean reportProblems(final PrintWriter out)
        {
            boolean ok = true;
            if (unexpected > 0)
            {
                out.println(name(self) + " received " + unexpected + " unexpected messages, the last " + lastUnexpected);
                ok = false;
            }
            if (failure != null)
            {
                out.println(name(self) + " receive stopped: " + failure);
                ok = false;
            }
            return ok;
        }
    }
}
