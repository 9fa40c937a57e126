package org.rds4j.faults;

import org.rds4j.RdsException;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.samples.stress.JsonLine;
import org.rds4j.transport.tcp.TcpConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One node of a fault-injection run, as a child process: one rds4j stack (TCP transport) that streams to every
 * other node and checks what every other node streams to it.
 * <p>
 * Every node gets the same {@code --nodes} list; node {@code i} talks to node {@code j} through its socket
 * {@code nodes[i]:basePort+j}, which sends to {@code nodes[j]:basePort+i} and receives from it. One socket per
 * peer gives each peer its own send buffer, so a dead peer (whose messages fill its buffer, as RDS intends)
 * blocks only the stream to that peer; all sockets still share the stack's one connection per node pair.
 * <p>
 * Protocol on stdout/stdin: prints {@code READY} once every socket is bound; starts sending at a {@code GO}
 * line on stdin (so no message reaches a node before its sockets are bound); sends for {@code --duration-ms}
 * or until a {@code STOP} line or the end of stdin; with {@code --progress-ms} prints {@code PROGRESS peer=received ...} lines;
 * then sends an end-of-stream marker to each peer, waits (at most {@code --drain-ms} after sending ended)
 * for every peer's marker and for its own messages to be acked, and prints one JSON summary line (see
 * {@link NodeSummary}). Exit status 0 if every stream completed both ways, 2 if not, 1 on bad arguments, 3 if
 * its driver is gone (driver mode, below).
 * <p>
 * Per pair it keeps: messages and bytes sent and the SHA-256 of the sent stream; messages and bytes received
 * and the SHA-256 of the received stream in arrival order; and, from the index each message carries, lost
 * (announced by the peer's marker but not received), duplicated, reordered (arrived after a higher index)
 * and corrupt (bytes differ from what the index implies) messages, and messages still queued after the
 * peer's marker when the node ends (after_end).
 * <p>
 * Driver mode: with {@code --driver DIR} the node's stack is a client of the driver in DIR (driver mode), and with
 * {@code --clients C} every address holds C such nodes, numbered by {@code --client K} (0..C-1), named
 * {@code IP#K} in the summary and the PROGRESS lines. Node {@code g = K * addresses + index of IP} then talks to
 * node {@code h} through {@code IP:basePort+K*N+h} (N: addresses times C), so the clients of one driver bind
 * different ports; with C = 1 that is the plain scheme above. A client whose driver goes (a call fails with
 * ECONNRESET) prints {@code DRIVER_LOST <message>} and exits with status 3 at once.
 */
public final class FaultNode
{
    private static final Logger LOG = LoggerFactory.getLogger(FaultNode.class);
    private static final Duration SEND_RETRY = Duration.ofMillis(500);
    private static final Duration RECEIVE_POLL = Duration.ofMillis(200);

    private final Settings settings;
    private final PrintStream out;
    private final CountDownLatch go = new CountDownLatch(1);
    /** When sending ends (System.nanoTime); set at GO, moved earlier by STOP. */
    private volatile long sendEnd;
    private boolean sendEndSet;

    private FaultNode(final Settings settings, final PrintStream out)
    {
        this.settings = settings;
        this.out = out;
    }

    /** Command-line settings. */
    static final class Settings
    {
        InetAddress bind;
        List<InetAddress> nodes = new ArrayList<>();
        int self = -1;
        int tcpPort = TcpConfig.DEFAULT_TCP_PORT;
        int basePort = 4000;
        long durationMs = 10_000;
        long drainMs = 30_000;
        long progressMs;
        int maxSize = 4096;
        long seed = 1;
        int sendBuffer = 256 * 1024;
        String driver;
        int client;
        int clients = 1;

        static Settings parse(final String[] args) throws IOException
        {
            final Settings s = new Settings();
            for (int i = 0; i < args.length; i += 2)
            {
                if (i + 1 >= args.length)
                {
                    throw new IllegalArgumentException("no value for " + args[i]);
                }
                final String value = args[i + 1];
                switch (args[i])
                {
                    case "--bind" -> s.bind = InetAddress.getByName(value);
                    case "--nodes" ->
                    {
                        for (final String node : value.split(","))
                        {
                            s.nodes.add(InetAddress.getByName(node.trim()));
                        }
                    }
                    case "--tcp-port" -> s.tcpPort = Integer.parseInt(value);
                    case "--base-port" -> s.basePort = Integer.parseInt(value);
                    case "--duration-ms" -> s.durationMs = Long.parseLong(value);
                    case "--drain-ms" -> s.drainMs = Long.parseLong(value);
                    case "--progress-ms" -> s.progressMs = Long.parseLong(value);
                    case "--max-size" -> s.maxSize = Integer.parseInt(value);
                    case "--seed" -> s.seed = Long.parseLong(value);
                    case "--sndbuf" -> s.sendBuffer = Integer.parseInt(value);
                    case "--driver" -> s.driver = value;
                    case "--client" -> s.client = Integer.parseInt(value);
                    case "--clients" -> s.clients = Integer.parseInt(value);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (s.bind == null || s.nodes.size() < 2)
            {
                throw new IllegalArgumentException("need --bind IP and --nodes IP,IP[,...] (at least two)");
            }
            final int index = s.nodes.indexOf(s.bind);
            if (index < 0)
            {
                throw new IllegalArgumentException("--bind " + s.bind.getHostAddress() + " is not in --nodes");
            }
            if (s.clients < 1 || s.client < 0 || s.client >= s.clients)
            {
                throw new IllegalArgumentException("need 0 <= --client < --clients");
            }
            s.self = s.client * s.nodes.size() + index;
            if (s.maxSize < StreamContent.END_OF_STREAM_BYTES || s.maxSize > 64 * 1024)
            {
                throw new IllegalArgumentException("--max-size must be 16..65536");
            }
            return s;
        }

        /** @return nodes in the run: every address's clients. */
        int count()
        {
            return nodes.size() * clients;
        }

        /** @return node {@code g}'s address. */
        InetAddress address(final int g)
        {
            return nodes.get(g % nodes.size());
        }

        /** @return node {@code g}'s name: its address, with {@code #K} if an address holds several nodes. */
        String name(final int g)
        {
            final String address = address(g).getHostAddress();
            return clients == 1 ? address : address + "#" + g / nodes.size();
        }

        /** @return the port on which node {@code g} talks to node {@code h}. */
        int port(final int g, final int h)
        {
            return basePort + g / nodes.size() * count() + h;
        }
    }

    /**
     * @param args {@code --bind IP --nodes IP,IP,... [--tcp-port N] [--base-port N] [--duration-ms N]
     *             [--drain-ms N] [--progress-ms N] [--max-size BYTES] [--seed N] [--sndbuf BYTES]
     *             [--driver DIR [--clients C --client K]]}
     */
    public static void main(final String[] args) throws Exception
    {
        final Settings settings;
        try
        {
            settings = Settings.parse(args);
        }
        catch (final IllegalArgumentException | IOException ex)
        {
            System.err.println("FaultNode: " + ex.getMessage());
            System.exit(1);
            return;
        }
        final boolean complete = new FaultNode(settings, System.out).run();
        System.out.flush();
        System.exit(complete ? 0 : 2);
    }

    private boolean run() throws Exception
    {
        final long started = System.nanoTime();
        final String self = settings.name(settings.self);
        final RdsStackConfig.Builder builder = RdsStackConfig.builder()
            .name("fault-" + self)
            .transportConfig(TcpConfig.builder().tcpPort(settings.tcpPort).build())
            .transport(TransportType.TCP)
            .sendBufferBytes(settings.sendBuffer)
            .infoFile(false);
        if (settings.driver != null)
        {
            builder.driverDirectory(settings.driver);
        }
        final RdsStackConfig config = builder.build();
        final StreamContent content = new StreamContent(settings.seed, settings.maxSize);
        try (RdsStack stack = RdsStack.open(config))
        {
            final List<Pair> pairs = new ArrayList<>();
            for (int peer = 0; peer < settings.count(); peer++)
            {
                if (peer != settings.self)
                {
                    pairs.add(new Pair(stack, content, peer));
                }
            }
            startStdinReader();
            out.println("READY");
            out.flush();
            go.await();
            final long sendStart = System.nanoTime();
            endSendingAt(sendStart + TimeUnit.MILLISECONDS.toNanos(settings.durationMs));
            for (final Pair pair : pairs)
            {
                pair.sender.start();
                pair.receiver.start();
            }
            final Thread progress = startProgress(pairs);
            for (final Pair pair : pairs)
            {
                pair.sender.join();   // bounded: senders give up at the drain deadline
            }
            final long sendMs = TimeUnit.NANOSECONDS.toMillis(Math.min(System.nanoTime(), sendEnd) - sendStart);
            for (final Pair pair : pairs)
            {
                pair.receiver.join(); // bounded likewise
            }
            // close drops unacked messages: wait until the peers' stacks have ours (our marker included)
            for (final Pair pair : pairs)
            {
                while (pair.socket.sendQueuedBytes() > 0 && System.nanoTime() - drainDeadline() < 0)
                {
                    Thread.sleep(5);
                }
            }
            if (progress != null)
            {
                progress.interrupt();
            }
            // nothing may follow a peer's marker: whatever is still queued now is counted against the stream
            for (final Pair pair : pairs)
            {
                pair.drainAfterEnd();
            }
            boolean complete = true;
            for (final Pair pair : pairs)
            {
                complete &= pair.complete();
            }
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            out.println(summaryJson(self, complete, elapsedMs, sendMs, pairs, stack.counters()));
            out.flush();
            return complete;
        }
    }

    /** Ends sending at {@code nanoTime}, or keeps the earlier end already set. */
    private synchronized void endSendingAt(final long nanoTime)
    {
        if (!sendEndSet || nanoTime - sendEnd < 0)
        {
            sendEnd = nanoTime;
            sendEndSet = true;
        }
    }

    private long drainDeadline()
    {
        return sendEnd + TimeUnit.MILLISECONDS.toNanos(settings.drainMs);
    }

    private boolean sending()
    {
        return System.nanoTime() - sendEnd < 0;
    }

    private boolean draining()
    {
        return System.nanoTime() - drainDeadline() < 0;
    }

    private void startStdinReader()
    {
        final Thread reader = new Thread(() ->
        {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)))
            {
                String line;
                while ((line = in.readLine()) != null)
                {
                    switch (line.trim())
                    {
                        case "GO" -> go.countDown();
                        case "STOP" ->
                        {
                            endSendingAt(System.nanoTime());
                            go.countDown();
                        }
                        default -> LOG.warn("unknown command on stdin: {}", line);
                    }
                }
            }
            catch (final IOException ex)
            {
                LOG.warn("stdin: {}", ex.toString());
            }
            // stdin closed: the parent is gone or done; end as on STOP, so no node outlives it by more than the drain
            endSendingAt(System.nanoTime());
            go.countDown();
        }, "stdin");
        reader.setDaemon(true);
        reader.start();
    }

    private Thread startProgress(final List<Pair> pairs)
    {
        if (settings.progressMs <= 0)
        {
            return null;
        }
        final Thread thread = new Thread(() ->
        {
            final StringBuilder line = new StringBuilder();
            while (!Thread.currentThread().isInterrupted())
            {
                line.setLength(0);
                line.append("PROGRESS");
                for (final Pair pair : pairs)
                {
                    line.append(' ').append(pair.peerName).append('=').append(pair.received);
                }
                out.println(line);
                out.flush();
                try
                {
                    Thread.sleep(settings.progressMs);
                }
                catch (final InterruptedException ex)
                {
                    return;
                }
            }
        }, "progress");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** The stream to one peer and the stream from it, on this node's socket for that peer. */
    private final class Pair
    {
        final int peer;
        final String peerName;
        final InetSocketAddress peerAddress;
        final RdsSocket socket;
        final StreamContent content;
        final Thread sender;
        final Thread receiver;

        // written by the sender thread, read after it ended
        final MessageDigest sentDigest = sha256();
        long sent;
        long sentBytes;
        boolean endSent;

        // written by the receiver thread; received is volatile for the progress lines
        final MessageDigest receivedDigest = sha256();
        final BitSet seen = new BitSet();
        long highest = -1;
        volatile long received;
        long receivedBytes;
        long duplicated;
        long reordered;
        long corrupt;
        long unexpected;
        long peerSent = -1;
        long afterEnd;
        volatile long peerDown;
        volatile long peerUp;

        Pair(final RdsStack stack, final StreamContent content, final int peer) throws IOException
        {
            this.peer = peer;
            this.content = content;
            this.peerName = settings.name(peer);
            this.peerAddress = new InetSocketAddress(settings.address(peer), settings.port(peer, settings.self));
            socket = stack.openSocket();
            socket.setOption(RdsOptions.SO_SNDBUF, settings.sendBuffer);
            socket.setOption(RdsOptions.SO_SNDTIMEO, SEND_RETRY);
            socket.setOption(RdsOptions.SO_RCVTIMEO, RECEIVE_POLL);
            socket.setNotificationListener(new RdsNotificationListener()
            {
                @Override
                public void onPeerUp(final InetAddress address)
                {
                    if (address.equals(peerAddress.getAddress()))
                    {
                        peerUp++;
                    }
                }

                @Override
                public void onPeerDown(final InetAddress address)
                {
                    if (address.equals(peerAddress.getAddress()))
                    {
                        peerDown++;
                    }
                }
            });
            socket.bind(new InetSocketAddress(settings.bind, settings.port(settings.self, peer)));
            final String name = settings.name(settings.self) + "->" + peerName;
            sender = new Thread(this::send, "send " + name);
            receiver = new Thread(this::receive, "receive " + name);
        }

        boolean complete()
        {
            return !sender.isAlive() && !receiver.isAlive() && endSent && peerSent >= 0
                && socket.sendQueuedBytes() == 0;
        }

        private void send()
        {
            final ByteBuffer buffer = ByteBuffer.allocate(settings.maxSize);
            try
            {
                long index = 0;
                sending:
                while (sending())
                {
                    content.fill(buffer, settings.self, peer, index);
                    final int size = buffer.remaining();
                    int result;
                    while ((result = socket.send(buffer, peerAddress)) == RdsResult.ETIMEDOUT)
                    {
                        if (!sending())
                        {
                            break sending;   // the message was not queued: the stream ends before it
                        }
                    }
                    if (result < 0)
                    {
                        throw new IllegalStateException("send " + index + ": " + RdsResult.name(result));
                    }
                    sentDigest.update(buffer.flip());
                    sent++;
                    sentBytes += size;
                    index++;
                }
                // the marker: retried until the drain deadline (a dead peer's buffer stays full)
                StreamContent.endOfStream(buffer, sent);
                while (true)
                {
                    final int result = socket.send(buffer, peerAddress);
                    if (result >= 0)
                    {
                        endSent = true;
                        break;
                    }
                    if (result != RdsResult.ETIMEDOUT)
                    {
                        throw new IllegalStateException("send end of stream: " + RdsResult.name(result));
                    }
                    if (!draining())
                    {
                        break;
                    }
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                exitIfDriverLost(ex);
                LOG.error("sender to {} failed", peerAddress, ex);
            }
        }

        /** Counts the messages queued on the socket after the peer's marker (or after giving up on it). */
        void drainAfterEnd() throws IOException
        {
            socket.configureBlocking(false);
            final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024 + 16);
            while (socket.receive(buffer.clear()) != null)
            {
                afterEnd++;
            }
        }

        private void receive()
        {
            final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024 + 16);
            final ByteBuffer expected = ByteBuffer.allocate(settings.maxSize);
            try
            {
                while (peerSent < 0 && draining())
                {
                    buffer.clear();
                    final InetSocketAddress from = socket.receive(buffer);
                    if (from == null)
                    {
                        continue;
                    }
                    buffer.flip();
                    if (!from.equals(peerAddress))
                    {
                        unexpected++;
                        continue;
                    }
                    final long index = buffer.remaining() >= 8 ? buffer.getLong(0) : Long.MIN_VALUE;
                    if (index == StreamContent.END_OF_STREAM && buffer.remaining() == StreamContent.END_OF_STREAM_BYTES)
                    {
                        peerSent = buffer.getLong(8);
                        continue;
                    }
                    receivedDigest.update(buffer.duplicate());
                    receivedBytes += buffer.remaining();
                    received++;
                    if (index < 0 || !content.fill(expected, peer, settings.self, index).equals(buffer))
                    {
                        corrupt++;
                        continue;
                    }
                    if (index > Integer.MAX_VALUE - 1 || seen.get((int)index))
                    {
                        duplicated++;
                        continue;
                    }
                    seen.set((int)index);
                    if (index < highest)
                    {
                        reordered++;
                    }
                    highest = Math.max(highest, index);
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                exitIfDriverLost(ex);
                LOG.error("receiver from {} failed", peerAddress, ex);
            }
        }
    }

    /**
     * A driver client whose driver is gone ends at once: its streams cannot complete, and waiting out the drain
     * would only hide how promptly the loss was reported. Synchronized: one line, even if several threads fail.
     */
    private synchronized void exitIfDriverLost(final Exception ex)
    {
        if (settings.driver != null && ex instanceof RdsException rds && rds.code() == RdsResult.ECONNRESET)
        {
            out.println("DRIVER_LOST " + ex.getMessage());
            out.flush();
            System.exit(3);
        }
    }

    private static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    private static String hex(final MessageDigest digest)
    {
        try
        {
            return HexFormat.of().formatHex(((MessageDigest)digest.clone()).digest());
        }
        catch (final CloneNotSupportedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    private static String summaryJson(final String self, final boolean complete, final long elapsedMs,
        final long sendMs, final List<Pair> pairs, final Map<String, Long> counters)
    {
        final List<JsonLine> pairLines = new ArrayList<>(pairs.size());
        for (final Pair p : pairs)
        {
            final boolean senderDone = !p.sender.isAlive();
            final boolean receiverDone = !p.receiver.isAlive();
            pairLines.add(new JsonLine()
                .add("peer", p.peerName)
                .add("sent", p.sent)
                .add("sent_bytes", p.sentBytes)
                .add("sent_sha256", senderDone ? hex(p.sentDigest) : null)
                .add("end_sent", p.endSent)
                .add("unacked_bytes", p.socket.sendQueuedBytes())
                .add("received", p.received)
                .add("received_bytes", p.receivedBytes)
                .add("received_sha256", receiverDone ? hex(p.receivedDigest) : null)
                .add("end_received", p.peerSent >= 0)
                .add("peer_sent", p.peerSent)
                .add("lost", p.peerSent >= 0 ? p.peerSent - p.seen.cardinality() : -1)
                .add("duplicated", p.duplicated)
                .add("reordered", p.reordered)
                .add("corrupt", p.corrupt)
                .add("unexpected", p.unexpected)
                .add("after_end", p.afterEnd)
                .add("peer_up", p.peerUp)
                .add("peer_down", p.peerDown));
        }
        final JsonLine counterLine = new JsonLine();
        counters.forEach(counterLine::add);
        return new JsonLine()
            .add("node", self)
            .add("complete", complete)
            .add("elapsed_ms", elapsedMs)
            .add("send_ms", sendMs)
            .addObjects("pairs", pairLines)
            .add("counters", counterLine)
            .toString();
    }
}
