package org.rds4j.compare;

import org.agrona.concurrent.IdleStrategy;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsOptions;
import org.rds4j.RdsClaim;
import org.rds4j.RdsResult;
import org.rds4j.RdsSelectionKey;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.DriverServer;
import org.rds4j.RdsStackConfig;
import org.rds4j.Threading;
import org.rds4j.transport.tcp.TcpConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.nio.file.Files;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * rds4j over TCP: one {@link RdsStack} per process (the server/sink stack on {@code --server-ip}, default
 * 127.0.0.2; the client/source stack on {@code --client-ip}, default 127.0.0.1; both on {@code --tcp-port}),
 * one socket per process except the fan-out sink, which binds {@code --receivers} sockets in its one stack
 * on consecutive ports (they all share the one RDS connection from the source's stack). In the scale case
 * ({@code --peers N}) the sink's N sockets are each bound to an address of their own, {@code 127.0.2.1} ...
 * {@code 127.0.2.N} on {@code --port}, so the sink's stack listens on N addresses and the source's stack,
 * sending round robin from its one socket, holds N RDS connections (one per peer address), each on its own TCP
 * connection; the sink serves its N sockets from one thread as in fan-out.
 * <p>
 * Options: {@code --io block} (blocking send and receive: the application thread parks while it waits and
 * the agent unparks it; a sink of several sockets waits on all of them in one {@link RdsSelector} and polls
 * the ones it reports) or {@code --io poll} (non-blocking send and {@link RdsSocket#poll}, the application
 * thread idling with {@code --idle}; a sink of several sockets polls them all in turn, as it did before the
 * selector); {@code --agent-idle} is the stack's idle strategy (backoff, spin,
 * yield, sleep:us); {@code --sndbuf}/{@code --rcvbuf} override the 1 MiB socket buffers;
 * {@code --tcp-send-ring} overrides the 2 MiB zero-copy send ring of each TCP connection (0: copy every write);
 * {@code --claim} makes the source write each message in place with {@link RdsSocket#tryClaim} and commit it
 * (never waiting: a refusal idles with {@code --idle}, as a non-blocking send's does) instead of sending a copy.
 * <p>
 * {@code --threading invoker} opens the stacks with {@link Threading#INVOKER}: no agent thread. Every polling
 * loop then calls {@link RdsStack#invoke()} next to its sends and polls and idles with {@code --idle} only when
 * both did nothing (the source after each burst of up to {@code --invoke-batch} sends, default 256, and
 * whenever a send is refused); blocking calls drive the stack themselves, and {@code --agent-idle} is how they
 * idle between duty cycles.
 */
final class Rds4jBench
{
    private final Bench bench;
    private final Args args;
    private final String io;
    /** {@code --io block}, decided once: the source's loop asked {@code io.equals} per message (2 % of its samples). */
    private final boolean blockingIo;
    private final String agentIdle;
    private final String appIdle;
    private final boolean invoker;
    private final int invokeBatch;
    /** --claim: the source writes each message in place ({@link RdsSocket#tryClaim}) instead of sending a copy. */
    private final boolean claims;
    private final InetSocketAddress server;
    private final InetSocketAddress client;
    /**
     * --driver: the stack is attached to a driver this process starts as a child ({@code rds4j-driver}), on the
     * same TCP port and agent idle strategy; its CPU time counts as this process's.
     */
    private final boolean driver;

    Rds4jBench(final Bench bench)
    {
        this.bench = bench;
        this.args = bench.args;
        this.io = args.str("io", "block");
        this.agentIdle = args.str("agent-idle", "backoff");
        this.appIdle = args.str("idle", "yield");
        final String threading = args.str("threading", "agent");
        if (!threading.equals("agent") && !threading.equals("invoker"))
        {
            throw new IllegalArgumentException("--threading must be agent or invoker: " + threading);
        }
        this.invoker = threading.equals("invoker");
        this.invokeBatch = args.integer("invoke-batch", 256);
        this.claims = args.flag("claim");
        this.driver = args.flag("driver");
        // an embedded stack's agent thread: its share of the CPU tells whether the application's threads ran the
        // stack's duty cycles themselves (a driver's agent is in the driver's process, counted in cpu_s only)
        bench.agentThreads = invoker || driver ? null : "rds4j-agent-";
        final int port = args.integer("port", 5000);
        this.server = new InetSocketAddress(args.str("server-ip", "127.0.0.2"), port);
        this.client = new InetSocketAddress(args.str("client-ip", "127.0.0.1"), port);
        if (!io.equals("block") && !io.equals("poll"))
        {
            throw new IllegalArgumentException("--io must be block or poll: " + io);
        }
        this.blockingIo = io.equals("block");
    }

    private RdsStack openStack(final String name)
    {
        final RdsStackConfig.Builder b = RdsStackConfig.builder()
            .name(name)
            .idleStrategy(agentIdle)
            .threading(invoker ? Threading.INVOKER : Threading.AGENT);
        final int sndbuf = args.size("sndbuf", 0);
        final int rcvbuf = args.size("rcvbuf", 0);
        if (sndbuf > 0)
        {
            b.sendBufferBytes(sndbuf);
        }
        if (rcvbuf > 0)
        {
            b.receiveBufferBytes(rcvbuf);
        }
        final TcpConfig.Builder tcp = TcpConfig.builder().tcpPort(args.integer("tcp-port", 29500));
        final int sendRing = args.size("tcp-send-ring", -1);
        if (sendRing >= 0)
        {
            tcp.tcpSendRingBytes(sendRing);
        }
        b.transportConfig(tcp.build());
        if (driver)
        {
            try
            {
                b.driverDirectory(startDriver(name).toString());
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        }
        final RdsStack stack = RdsStack.open(b.build());
        // passive roles end with SIGTERM from run.sh: close the stack (and its info file) on the way out
        Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "rds4j-close"));
        if (bench.trace)
        {
            traceCounters(name, stack);
        }
        Bench.WATCHDOG_HOOKS.add(() ->
        {
            logCounters(name, stack);
            Bench.log("rds4j " + name + " connections: " + stack.connections());
        });
        return stack;
    }

    /** Starts a driver in a child JVM and waits for its READY line; it is killed when this process exits. */
    private Path startDriver(final String name) throws IOException
    {
        final Path directory = Files.createTempDirectory("rds4j-compare-driver");
        final Process child = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:+UseSerialGC",
            "-cp", System.getProperty("java.class.path"), Main.class.getName(), "rds4j-driver",
            "--dir", directory.toString(), "--tcp-port", String.valueOf(args.integer("tcp-port", 29500)),
            "--agent-idle", agentIdle, "--name", name + "-driver")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stopDriver(child), "rds4j-driver-stop"));
        final java.io.BufferedReader out = new java.io.BufferedReader(
            new java.io.InputStreamReader(child.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
        final String line = out.readLine();
        if (!"READY".equals(line))
        {
            throw new IOException("the driver did not start: " + line);
        }
        Bench.CHILDREN.add(child);
        return directory;
    }

    /**
     * SIGTERM, so that the driver closes its stack and deletes its info file and its directory (killed, it left both
     * behind, every run); SIGKILL if it has not ended within a second.
     */
    private static void stopDriver(final Process child)
    {
        child.destroy();
        try
        {
            if (!child.waitFor(1, TimeUnit.SECONDS))
            {
                child.destroyForcibly();
            }
        }
        catch (final InterruptedException ex)
        {
            child.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** The {@code rds4j-driver} role: a driver in {@code --dir}, serving until killed or its parent ends. */
    static void runDriver(final Args args) throws Exception
    {
        final RdsStackConfig config = RdsStackConfig.builder()
            .name(args.str("name", "driver"))
            .idleStrategy(args.str("agent-idle", "backoff"))
            .transportConfig(TcpConfig.builder().tcpPort(args.integer("tcp-port", 29500)).build())
            .build();
        final Path directory = Path.of(args.str("dir", null));
        final DriverServer server = DriverServer.start(config, directory, false);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            server.close();
            deleteTree(directory); // a temporary directory of the process that started this one
        }, "rds4j-driver-close"));
        Main.ready();
        // the parent holds the other end of stdin: when it ends, even killed, so does this driver (left running, an
        // orphan kept the benchmark's TCP port, and the next run's driver failed with EADDRINUSE)
        final Thread parentWatch = new Thread(() ->
        {
            try
            {
                while (System.in.read() >= 0)
                {
                    // nothing is sent on it
                }
            }
            catch (final IOException ex)
            {
                // ended all the same
            }
            System.exit(0);
        }, "rds4j-driver-parent-watch");
        parentWatch.setDaemon(true);
        parentWatch.start();
        server.awaitStopped();
    }

    private static void deleteTree(final Path directory)
    {
        try (Stream<Path> files = Files.walk(directory))
        {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
        catch (final IOException | UncheckedIOException ex)
        {
            Bench.log("rds4j: could not delete " + directory + ": " + ex);
        }
    }

    private Json extra()
    {
        return new Json().put("io", io).put("agent_idle", agentIdle).put("app_idle", io.equals("poll") ? appIdle : "park")
            .put("threading", invoker ? "invoker" : "agent").put("driver", driver);
    }

    /** In invoker mode, one duty cycle of the stack on this thread; 0 (nothing to do) with an agent thread. */
    private int invoke(final RdsStack stack)
    {
        return invoker ? stack.invoke() : 0;
    }

    /**
     * Sends, retrying a full buffer or congested port until accepted or {@code running} goes false; in invoker
     * mode each retry first runs a duty cycle of {@code stack}, which is what frees the buffer.
     */
    /**
     * --claim: the message written in place with {@link RdsSocket#tryClaim} and committed; refusals idle as
     * {@link #sendNonBlocking} does.
     */
    private int claimAndCommit(final RdsStack stack, final RdsSocket socket, final RdsClaim claim, final long seq,
        final InetSocketAddress dest, final IdleStrategy idle, final Bench.SourceState state) throws IOException
    {
        int r;
        idle.reset();
        while ((r = socket.tryClaim(bench.size, dest, claim)) < 0)
        {
            if (r != RdsResult.EAGAIN && r != RdsResult.ENOBUFS)
            {
                throw new IOException("claim failed: " + RdsResult.name(r));
            }
            if (!state.running)
            {
                return r;
            }
            idle.idle(invoke(stack));
        }
        claim.buffer().putLong(claim.offset(), seq);
        claim.commit();
        return r;
    }

    private int sendNonBlocking(final RdsStack stack, final RdsSocket socket, final ByteBuffer src,
        final InetSocketAddress dest, final IdleStrategy idle, final Bench.SourceState state) throws IOException
    {
        int r;
        idle.reset();
        while ((r = socket.send(src, dest)) < 0)
        {
            if (r != RdsResult.EAGAIN && r != RdsResult.ENOBUFS)
            {
                throw new IOException("send failed: " + RdsResult.name(r));
            }
            if (state != null && !state.running)
            {
                return r;
            }
            idle.idle(invoke(stack));
        }
        return r;
    }

    /** --trace: logs the counters that changed every 100 ms, with the time since the stack opened. */
    private static void traceCounters(final String who, final RdsStack stack)
    {
        final long start = System.nanoTime();
        final Thread t = new Thread(() ->
        {
            Map<String, Long> last = stack.counters();
            while (true)
            {
                Bench.sleepNs(100_000_000L);
                final Map<String, Long> now = stack.counters();
                final StringBuilder sb = new StringBuilder(String.format(java.util.Locale.ROOT, "rds4j %s t=%.1f", who,
                    (System.nanoTime() - start) / 1e9));
                for (final Map.Entry<String, Long> e : now.entrySet())
                {
                    final long delta = e.getValue() - last.getOrDefault(e.getKey(), 0L);
                    if (delta != 0)
                    {
                        sb.append(' ').append(e.getKey()).append("=+").append(delta);
                    }
                }
                Bench.log(sb.toString());
                last = now;
            }
        }, "rds4j-trace");
        t.setDaemon(true);
        t.start();
    }

    private static void logCounters(final String who, final RdsStack stack)
    {
        final Map<String, Long> nonZero = new TreeMap<>();
        stack.counters().forEach((k, v) ->
        {
            if (v != 0)
            {
                nonZero.put(k, v);
            }
        });
        Bench.log("rds4j " + who + " counters: " + nonZero);
    }

    // ------------------------------------------------------------------ RTT

    void rttServer() throws Exception
    {
        final RdsStack stack = openStack("rtt-server");
        final RdsSocket socket = stack.openSocket().bind(server);
        Main.ready();
        if (blockingIo)
        {
            socket.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofSeconds(5));
            final ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(bench.size, 64 * 1024));
            while (true)
            {
                buffer.clear();
                final InetSocketAddress from = socket.receive(buffer);
                if (from == null)
                {
                    continue;
                }
                buffer.flip();
                final int r = socket.send(buffer, from);
                if (r < 0)
                {
                    Bench.log("rds4j rtt-server: echo failed: " + RdsResult.name(r));
                }
            }
        }
        socket.configureBlocking(false);
        final IdleStrategy idle = Bench.idle(appIdle);
        final IdleStrategy sendIdle = Bench.idle(appIdle);
        final RdsMessageHandler echo = (from, payload) ->
        {
            try
            {
                sendNonBlocking(stack, socket, payload, from, sendIdle, null);
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
        };
        while (true)
        {
            idle.idle(invoke(stack) + socket.poll(echo, 64));
        }
    }

    void rttClient() throws Exception
    {
        final RdsStack stack = openStack("rtt-client");
        final RdsSocket socket = stack.openSocket().bind(client);
        final ByteBuffer out = ByteBuffer.allocateDirect(bench.size);
        final ByteBuffer in = ByteBuffer.allocateDirect(Math.max(bench.size, 64 * 1024));
        socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(200));
        // handshake: the server is bound (run.sh waits for READY), but its stack may still be connecting
        final long deadline = System.nanoTime() + bench.startTimeoutNs;
        long hello = 0;
        boolean answered = false;
        while (!answered)
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("no echo from " + server);
            }
            out.clear().putLong(0, --hello);
            socket.send(out, server);
            // wait 200 ms for this hello's echo, skipping late echoes of earlier ones (which are > hello)
            while (true)
            {
                in.clear();
                if (socket.receive(in) == null)
                {
                    break;
                }
                if (in.getLong(0) == hello)
                {
                    answered = true;
                    break;
                }
            }
        }
        socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(5));
        final Bench.RoundTrip rt;
        if (blockingIo)
        {
            rt = seq ->
            {
                out.clear().putLong(0, seq);
                final int r = socket.send(out, server);
                if (r < 0)
                {
                    throw new IOException("send: " + RdsResult.name(r));
                }
                long got;
                do
                {
                    in.clear();
                    if (socket.receive(in) == null)
                    {
                        throw new IOException("no echo within 5 s for " + seq);
                    }
                    got = in.getLong(0);
                }
                while (got < 0); // a late echo of a handshake retry
                Bench.checkEcho(seq, got);
            };
        }
        else
        {
            socket.configureBlocking(false);
            final IdleStrategy idle = Bench.idle(appIdle);
            final long[] got = new long[1];
            final RdsMessageHandler handler = (from, payload) -> got[0] = payload.getLong(payload.position());
            rt = seq ->
            {
                out.clear().putLong(0, seq);
                sendNonBlocking(stack, socket, out, server, idle, null);
                got[0] = 0;
                idle.reset();
                final long limit = System.nanoTime() + 5_000_000_000L;
                while (got[0] <= 0)
                {
                    if (invoke(stack) + socket.poll(handler, 1) == 0)
                    {
                        if (System.nanoTime() > limit)
                        {
                            throw new IOException("no echo within 5 s for " + seq);
                        }
                        idle.idle();
                    }
                }
                Bench.checkEcho(seq, got[0]);
            };
        }
        bench.rttClient(rt, extra());
        logCounters("rtt-client", stack);
        Bench.finish(stack);
    }

    // ------------------------------------------------------------------ throughput

    void sink() throws Exception
    {
        final RdsStack stack = openStack("sink");
        final int n = bench.receivers;
        final RdsSocket[] sockets = new RdsSocket[n];
        for (int i = 0; i < n; i++)
        {
            sockets[i] = stack.openSocket().bind(bench.receiverAddress(server.getAddress(), server.getPort(), i));
        }
        final Bench.Counts counts = new Bench.Counts(n);
        final Thread thread;
        final String sinkIo;
        if (blockingIo && n == 1)
        {
            // one receiving thread, parked while its socket is empty
            thread = new Thread(() -> receiveBlocking(sockets[0], 0, counts), "rds4j-sink");
            sinkIo = "block";
        }
        else if (blockingIo)
        {
            // one thread waits on every socket in a selector (one thread per socket would be 16 threads on 2 cores)
            thread = new Thread(() -> selectAll(stack, sockets, counts), "rds4j-sink");
            sinkIo = "select";
        }
        else
        {
            // one thread polls every socket in turn, idling with --idle when all are empty
            thread = new Thread(() -> pollAll(stack, sockets, counts), "rds4j-sink");
            sinkIo = "poll:" + appIdle;
        }
        thread.setDaemon(true);
        thread.start();
        Main.ready();
        bench.measureSink(counts, extra().put("sink_io", sinkIo));
        logCounters("sink", stack);
        Bench.finish(stack);
    }

    private void receiveBlocking(final RdsSocket socket, final int index, final Bench.Counts counts)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(bench.size, 64 * 1024));
        long expected = -1;
        try
        {
            socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(500));
            while (socket.isOpen())
            {
                buffer.clear();
                if (socket.receive(buffer) == null)
                {
                    continue;
                }
                final long seq = buffer.getLong(0);
                if (expected >= 0 && seq != expected)
                {
                    counts.seqError(index);
                }
                expected = seq + 1;
                counts.add(index, 1);
            }
        }
        catch (final IOException ex)
        {
            if (socket.isOpen())
            {
                Bench.log("rds4j sink: " + ex);
            }
        }
    }

    /** @return for each socket, a handler that checks that the sequence numbers of its messages follow on. */
    private static RdsMessageHandler[] sequenceCheckers(final int n, final Bench.Counts counts)
    {
        final long[] expected = new long[n];
        final RdsMessageHandler[] handlers = new RdsMessageHandler[n];
        for (int i = 0; i < n; i++)
        {
            expected[i] = -1;
            final int index = i;
            handlers[i] = (from, payload) ->
            {
                final long seq = payload.getLong(payload.position());
                if (expected[index] >= 0 && seq != expected[index])
                {
                    counts.seqError(index);
                }
                expected[index] = seq + 1;
            };
        }
        return handlers;
    }

    /**
     * Takes what socket {@code i} holds, in polls of 256 until one returns fewer, so that a duty cycle's deliveries
     * are all taken before the next.
     *
     * @return the messages taken.
     */
    private static int drain(final RdsSocket socket, final RdsMessageHandler handler, final int i,
        final Bench.Counts counts) throws IOException
    {
        int taken = 0;
        int got;
        do
        {
            got = socket.poll(handler, 256);
            if (got > 0)
            {
                counts.add(i, got);
                taken += got;
            }
        }
        while (got == 256);
        return taken;
    }

    /** The sink's one thread waits in a selector (which drives the stack meanwhile) and drains the sockets it reports. */
    private void selectAll(final RdsStack stack, final RdsSocket[] sockets, final Bench.Counts counts)
    {
        final RdsMessageHandler[] handlers = sequenceCheckers(sockets.length, counts);
        try (RdsSelector selector = stack.openSelector())
        {
            for (int i = 0; i < sockets.length; i++)
            {
                sockets[i].configureBlocking(false);
                selector.register(sockets[i], RdsSelector.OP_READ, i);
            }
            while (true)
            {
                selector.select();
                for (final RdsSelectionKey key : selector.selectedKeys())
                {
                    if (key.isError())
                    {
                        return; // the stack is closing
                    }
                    final int i = (Integer)key.attachment();
                    drain(sockets[i], handlers[i], i, counts);
                }
                selector.selectedKeys().clear();
            }
        }
        catch (final IOException ex)
        {
            Bench.log("rds4j sink: " + ex);
        }
    }

    private void pollAll(final RdsStack stack, final RdsSocket[] sockets, final Bench.Counts counts)
    {
        final IdleStrategy idle = Bench.idle(appIdle);
        final int n = sockets.length;
        final RdsMessageHandler[] handlers = sequenceCheckers(n, counts);
        try
        {
            for (final RdsSocket s : sockets)
            {
                s.configureBlocking(false);
            }
            while (true)
            {
                int work = invoke(stack);
                for (int i = 0; i < n; i++)
                {
                    work += drain(sockets[i], handlers[i], i, counts);
                }
                idle.idle(work);
            }
        }
        catch (final IOException ex)
        {
            Bench.log("rds4j sink: " + ex);
        }
    }

    void source() throws Exception
    {
        final RdsStack stack = openStack("source");
        final RdsSocket socket = stack.openSocket().bind(client);
        final int n = bench.receivers;
        final InetSocketAddress[] destinations = new InetSocketAddress[n];
        for (int i = 0; i < n; i++)
        {
            destinations[i] = bench.receiverAddress(server.getAddress(), server.getPort(), i);
        }
        final Bench.SourceState state = new Bench.SourceState();
        final Thread sender = new Thread(() ->
        {
            final ByteBuffer out = ByteBuffer.allocateDirect(bench.size);
            final long[] seq = new long[n];
            final IdleStrategy idle = Bench.idle(appIdle);
            final RdsClaim claim = new RdsClaim();
            try
            {
                if (blockingIo)
                {
                    socket.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofMillis(200));
                }
                else
                {
                    socket.configureBlocking(false);
                }
                int d = 0;
                int burst = 0;
                while (state.running)
                {
                    out.clear().putLong(0, seq[d]);
                    final int r = claims ? claimAndCommit(stack, socket, claim, seq[d], destinations[d], idle, state) :
                        blockingIo ? socket.send(out, destinations[d]) :
                        sendNonBlocking(stack, socket, out, destinations[d], idle, state);
                    if (r >= 0)
                    {
                        if (invoker && ++burst >= invokeBatch)
                        {
                            // a polling sender's loop: a burst of sends, then one duty cycle writes them
                            burst = 0;
                            stack.invoke();
                        }
                        seq[d]++;
                        state.sent(1);
                        if (++d == n)
                        {
                            d = 0;
                        }
                    }
                    else if (r != RdsResult.ETIMEDOUT && r != RdsResult.EAGAIN && r != RdsResult.ENOBUFS)
                    {
                        throw new IOException("send failed: " + RdsResult.name(r));
                    }
                }
            }
            catch (final IOException ex)
            {
                Bench.log("rds4j source: " + ex);
            }
        }, "rds4j-source");
        sender.setDaemon(true);
        sender.start();
        bench.measureSource(state, sender, extra());
        logCounters("source", stack);
        Bench.finish(stack);
    }
}
