package org.rds4j.faults;

import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client process of the driver scale test: a stack attached to a driver ({@code --driver DIR}) whose few
 * sockets each stream a fixed number of messages to every one of a set of remote nodes and check the stream each
 * remote node sends back. Unlike {@link FaultNode} (all-to-all between nodes, one socket per peer), the remote nodes
 * are not clients: each is one socket ({@code IP:remotePort}) that all clients' sockets talk to.
 * <p>
 * Socket {@code s} of client {@code K} is {@code BIND:basePort+K*sockets+s} and has stream id
 * {@code K*sockets+s}; remote node {@code r} has stream id {@code 1000+r}. Messages are {@link StreamContent}'s,
 * so either side rebuilds and checks every one; a stream is exact when its messages arrive with index 0, 1, ...
 * messages-1, each with the bytes its index implies, and nothing follows.
 * <p>
 * Protocol, in steps the test measures between: prints {@code ATTACHED} once the stack is open; opens and binds its
 * sockets at {@code OPEN} on stdin and prints {@code READY}; streams at {@code GO}, then prints
 * {@code DONE received=N problems=P [first problem]}; closes the stack at {@code STOP} or the end of stdin. Exit
 * status 0 if every stream was exact, 2 if not, 1 on bad arguments.
 */
public final class ScaleClient
{
    /** Stream id of remote node 0; clients' sockets are numbered from 0, well below. */
    public static final int REMOTE_ID_BASE = 1000;
    private static final Duration RECEIVE_POLL = Duration.ofMillis(200);
    private static final long DEADLINE_MS = 120_000;
    /** The largest message of the test (--max-size is at most this). */
    private static final int MAX_MESSAGE = 64 * 1024;

    private ScaleClient()
    {
    }

    /**
     * @param args {@code --bind IP --driver DIR --client K --sockets S --remotes IP,IP,... --remote-port P
     *             --base-port B --messages N --max-size BYTES}
     */
    public static void main(final String[] args) throws Exception
    {
        InetAddress bind = null;
        String driver = null;
        int client = -1;
        int sockets = 0;
        final List<InetAddress> remotes = new ArrayList<>();
        int remotePort = 0;
        int basePort = 0;
        int messages = 0;
        int maxSize = 0;
        try
        {
            for (int i = 0; i < args.length; i += 2)
            {
                if (i + 1 >= args.length)
                {
                    throw new IllegalArgumentException("no value for " + args[i]);
                }
                final String value = args[i + 1];
                switch (args[i])
                {
                    case "--bind" -> bind = InetAddress.getByName(value);
                    case "--driver" -> driver = value;
                    case "--client" -> client = Integer.parseInt(value);
                    case "--sockets" -> sockets = Integer.parseInt(value);
                    case "--remotes" ->
                    {
                        for (final String remote : value.split(","))
                        {
                            remotes.add(InetAddress.getByName(remote.trim()));
                        }
                    }
                    case "--remote-port" -> remotePort = Integer.parseInt(value);
                    case "--base-port" -> basePort = Integer.parseInt(value);
                    case "--messages" -> messages = Integer.parseInt(value);
                    case "--max-size" -> maxSize = Integer.parseInt(value);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (bind == null || driver == null || client < 0 || sockets < 1 || remotes.isEmpty() || remotePort <= 0
                || basePort <= 0 || messages < 1 || maxSize < StreamContent.INDEX_BYTES || maxSize > MAX_MESSAGE)
            {
                throw new IllegalArgumentException("need every option, with positive values");
            }
        }
        catch (final IllegalArgumentException | IOException ex)
        {
            System.err.println("ScaleClient: " + ex.getMessage());
            System.exit(1);
            return;
        }

        final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final StreamContent content = new StreamContent(1, maxSize);
        final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        final AtomicLong received = new AtomicLong();
        try (RdsStack stack = RdsStack.open(RdsStackConfig.builder().name("scale-" + client).driverDirectory(driver)
            .infoFile(false).build()))
        {
            System.out.println("ATTACHED");
            System.out.flush();
            await(stdin, "OPEN");
            final List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < sockets; s++)
            {
                final int id = client * sockets + s;
                final RdsSocket socket = stack.openSocket();
                socket.setOption(RdsOptions.SO_RCVTIMEO, RECEIVE_POLL);
                socket.bind(new InetSocketAddress(bind, basePort + id));
                final List<InetSocketAddress> peers = new ArrayList<>();
                final int[] peerIds = new int[remotes.size()];
                for (int r = 0; r < remotes.size(); r++)
                {
                    peers.add(new InetSocketAddress(remotes.get(r), remotePort));
                    peerIds[r] = REMOTE_ID_BASE + r;
                }
                final int count = messages;
                threads.add(new Thread(() -> send(socket, content, id, peers, peerIds, count, problems), "send " + id));
                threads.add(new Thread(() -> receive(socket, content, id, peers, peerIds, count, received, problems),
                    "receive " + id));
            }
            System.out.println("READY");
            System.out.flush();
            await(stdin, "GO");
            threads.forEach(Thread::start);
            for (final Thread thread : threads)
            {
                thread.join();   // bounded: both loops end at their deadline
            }
            System.out.println("DONE received=" + received.get() + " problems=" + problems.size()
                + (problems.isEmpty() ? "" : " " + problems.peek()));
            System.out.flush();
            await(stdin, "STOP");
        }
        System.exit(problems.isEmpty() ? 0 : 2);
    }

    /** Reads stdin up to the line {@code command}, or to its end (the parent is gone). */
    private static void await(final BufferedReader stdin, final String command) throws IOException
    {
        String line;
        while ((line = stdin.readLine()) != null && !line.trim().equals(command))
        {
            // another step's command: ignored
        }
    }

    /**
     * Sends message 0 to every peer, then message 1, ..., so every stream is under way from the start; a failed send
     * is a problem and ends the streams. The test's remote nodes send with it too.
     *
     * @param peerIds the peers' stream ids, in the order of {@code peers}.
     */
    static void send(final RdsSocket socket, final StreamContent content, final int id,
        final List<InetSocketAddress> peers, final int[] peerIds, final int messages,
        final ConcurrentLinkedQueue<String> problems)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(MAX_MESSAGE);
        try
        {
            for (int index = 0; index < messages; index++)
            {
                for (int r = 0; r < peers.size(); r++)
                {
                    content.fill(buffer, id, peerIds[r], index);
                    final int result = socket.send(buffer, peers.get(r));
                    if (result < 0)
                    {
                        problems.add(id + " -> " + peers.get(r) + " #" + index + ": " + RdsResult.name(result));
                        return;
                    }
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            problems.add(id + " send: " + ex);
        }
    }

    /**
     * Receives until every peer's stream is complete, checking each message's index and bytes, then checks that
     * nothing more is queued; the first wrong message (from a stranger, out of order, again, or with other bytes) is
     * a problem and ends the check. The test's remote nodes check with it too.
     *
     * @param peerIds  the peers' stream ids, in the order of {@code peers}.
     * @param received counts the exact messages, for the caller to watch.
     */
    static void receive(final RdsSocket socket, final StreamContent content, final int id,
        final List<InetSocketAddress> peers, final int[] peerIds, final int messages, final AtomicLong received,
        final ConcurrentLinkedQueue<String> problems)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(MAX_MESSAGE);
        final ByteBuffer expected = ByteBuffer.allocate(MAX_MESSAGE);
        final long[] next = new long[peers.size()];
        int complete = 0;
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DEADLINE_MS);
        try
        {
            while (complete < peers.size())
            {
                if (System.nanoTime() - deadline > 0)
                {
                    problems.add(id + ": streams incomplete after " + DEADLINE_MS + " ms: " + Arrays.toString(next));
                    return;
                }
                final InetSocketAddress from = socket.receive(buffer.clear());
                if (from == null)
                {
                    continue;
                }
                buffer.flip();
                final int r = peers.indexOf(from);
                final long index = buffer.remaining() >= 8 ? buffer.getLong(0) : -1;
                if (r < 0 || index != next[r] || !content.fill(expected, peerIds[r], id, index).equals(buffer))
                {
                    problems.add(id + " <- " + from + ": got #" + index + " (" + buffer.remaining() + " B), expected #"
                        + (r < 0 ? "none" : next[r]));
                    return;
                }
                received.incrementAndGet();
                if (++next[r] == messages)
                {
                    complete++;
                }
            }
            // poll never waits: the socket stays blocking for a sender still using it (the test's remote nodes
            // send and receive on one socket, and their sends must keep waiting for room and congested ports)
            final InetSocketAddress[] extra = new InetSocketAddress[1];
            if (socket.poll((sender, payload) -> extra[0] = sender, 1) > 0)
            {
                problems.add(id + " <- " + extra[0] + ": a message after every stream ended");
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            problems.add(id + " receive: " + ex);
        }
    }
}
