package org.rds4j.compare;

import io.aeron.Aeron;
import io.aeron.AeronCounters;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import org.agrona.BitUtil;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Aeron UDP unicast, each process with its own embedded media driver ({@link MediaDriver#launchEmbedded})
 * in its own directory ({@code --aeron-dir}, default {@code /dev/shm/rds4j-compare-aeron-<role>-<pid>}).
 * <p>
 * Driver: {@code --threading shared} (default: one driver thread does conductor, sender and receiver work;
 * the only sensible choice on a 2-core machine), {@code dedicated} or {@code invoker}; {@code --driver-idle} is
 * the driver thread's idle strategy (default {@code backoff}: agrona's 10 spins, 5 yields, park 1 us doubling to
 * 1 ms). {@code --threading invoker} starts no driver thread and no client conductor thread
 * ({@link ThreadingMode#INVOKER}, {@link Aeron.Context#useConductorAgentInvoker}): the polling application
 * thread runs a duty cycle of both ({@link AgentInvoker#invoke}) in its loop and idles with {@code --idle} only
 * when that and its polls found nothing; the source after each burst of {@code --invoke-batch} publishes and
 * whenever back-pressured, as rds4j's INVOKER mode does. The default burst is what one duty cycle of the
 * driver's sender sends, one datagram per publication: MTU / aligned frame length messages per receiver (682
 * of 64 B with a 64 KiB MTU). Term length
 * {@code --term-length} (default 16 MiB, 4 MiB with several receivers: 16 streams x 3 terms on each side),
 * UDP socket buffers {@code --so-buf} (default 2 MiB, the {@code aeron.socket.so_sndbuf}/{@code so_rcvbuf}
 * settings) and the receiver window {@code --rcv-window} (default: the socket buffer divided among the
 * streams, at most 2 MiB; {@link #receiverWindow}), MTU {@code --mtu} (default 1408, Aeron's; at most
 * 65504, a multiple of 32, at most the term length / 8, the receiver window and the socket buffers, else the
 * driver refuses it).
 * <p>
 * Application: {@link ExclusivePublication#tryClaim} (the payload is copied into the claimed term buffer
 * space) and {@link Subscription#poll} with a {@link FragmentHandler}; the application thread idles with
 * {@code --idle} between empty polls and back-pressured claims. The fan-out case uses {@code --receivers}
 * streams (1001, 1002, ...) of one channel: one UDP endpoint on the sink, one publication per stream on the
 * source, one subscription per stream on the sink, all polled by one thread.
 */
final class AeronBench
{
    private static final int PING_STREAM = 1001;
    private static final int PONG_STREAM = 2001;

    private final Bench bench;
    private final Args args;
    private final String appIdle;
    private final String driverIdle;
    private final String threading;
    private final String serverIp;
    private final String clientIp;
    private final int port;
    private final boolean invoker;
    private final int invokeBatch;
    private MediaDriver driver;
    private Aeron aeron;
    /** INVOKER mode only: the driver's and the client conductor's duty cycles, run by the polling thread. */
    private AgentInvoker driverInvoker;
    private AgentInvoker clientInvoker;
    /** Set when the process closes: the polling loop ends, so that driver and client never close under it. */
    private volatile boolean closing;
    private boolean closed;
    /** The thread of this role's polling loop, which {@link #close} waits for. */
    private volatile Thread loop;

    AeronBench(final Bench bench)
    {
        this.bench = bench;
        this.args = bench.args;
        this.appIdle = args.str("idle", "yield");
        this.driverIdle = args.str("driver-idle", "backoff");
        this.threading = args.str("threading", "shared");
        this.invoker = threading.equals("invoker");
        final int perDatagram = mtu() / BitUtil.align(bench.size + DataHeaderFlyweight.HEADER_LENGTH,
            FrameDescriptor.FRAME_ALIGNMENT);
        this.invokeBatch = args.integer("invoke-batch", bench.receivers * Math.max(1, perDatagram));
        this.serverIp = args.str("server-ip", "127.0.0.2");
        this.clientIp = args.str("client-ip", "127.0.0.1");
        this.port = args.integer("port", 5000);
    }

    private Json extra()
    {
        return new Json().put("threading", threading).put("driver_idle", invoker ? "n/a" : driverIdle)
            .put("invoke_batch", invoker ? invokeBatch : null).put("app_idle", appIdle).put("mtu", mtu())
            .put("term_length", termLength()).put("rcv_window", receiverWindow());
    }

    private int mtu()
    {
        return args.size("mtu", 1408);
    }

    private int termLength()
    {
        return args.size("term-length", bench.receivers > 1 ? 4 << 20 : 16 << 20);
    }

    /**
     * The receiver window of each stream: at most the UDP receive buffer divided among the streams that share
     * the sink's one endpoint, so that a sender never has more in flight than the socket can hold (more means
     * drops, NAKs and retransmissions on loopback): 2 MiB for one stream, 128 KiB for 16.
     */
    private int receiverWindow()
    {
        return args.size("rcv-window", Math.min(2 << 20, args.size("so-buf", 2 << 20) / bench.receivers));
    }

    private static String channel(final String ip, final int port)
    {
        return "aeron:udp?endpoint=" + ip + ":" + port;
    }

    private void start()
    {
        final String dir = args.str("aeron-dir", "/dev/shm/rds4j-compare-aeron") + "-" + bench.role + "-" +
            ProcessHandle.current().pid();
        final MediaDriver.Context ctx = new MediaDriver.Context()
            .aeronDirectoryName(dir)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .publicationTermBufferLength(termLength())
            .socketSndbufLength(args.size("so-buf", 2 << 20))
            .socketRcvbufLength(args.size("so-buf", 2 << 20))
            .initialWindowLength(receiverWindow())
            .mtuLength(mtu());
        switch (threading)
        {
            case "shared":
                ctx.threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(Bench.idle(driverIdle));
                break;
            case "dedicated":
                ctx.threadingMode(ThreadingMode.DEDICATED)
                    .senderIdleStrategy(Bench.idle(driverIdle))
                    .receiverIdleStrategy(Bench.idle(driverIdle))
                    .conductorIdleStrategy(Bench.idle("backoff"));
                break;
            case "invoker":
                ctx.threadingMode(ThreadingMode.INVOKER);
                break;
            default:
                throw new IllegalArgumentException("--threading must be shared, dedicated or invoker: " + threading);
        }
        driver = MediaDriver.launchEmbedded(ctx);
        final Aeron.Context clientCtx = new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName());
        if (invoker)
        {
            // while the client awaits the driver's replies (adding publications...), it runs the driver itself
            clientCtx.useConductorAgentInvoker(true).driverAgentInvoker(driver.sharedAgentInvoker());
        }
        aeron = Aeron.connect(clientCtx);
        if (invoker)
        {
            driverInvoker = driver.sharedAgentInvoker();
            clientInvoker = aeron.conductorAgentInvoker();
        }
        // passive roles end with SIGTERM from run.sh: remove the driver's files on the way out
        Runtime.getRuntime().addShutdownHook(new Thread(this::close, "aeron-close"));
        Bench.WATCHDOG_HOOKS.add(this::logCounters);
    }

    /** In INVOKER mode, one duty cycle of the driver and one of the client conductor on this thread; else 0. */
    private int invoke()
    {
        return invoker ? driverInvoker.invoke() + clientInvoker.invoke() : 0;
    }

    /**
     * Ends the polling loop and waits for it, then logs the counters and closes client and driver: in INVOKER
     * mode the loop's thread runs the driver, which must not be closed under it. Idempotent.
     */
    private synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        closing = true;
        final Thread t = loop;
        if (t != null && t != Thread.currentThread())
        {
            try
            {
                t.join(2000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        logCounters();
        CloseHelper.quietCloseAll(aeron, driver);
    }

    /** Logs the driver's non-zero system counters (bytes, NAKs, retransmits, loss, errors...) to stderr. */
    private void logCounters()
    {
        try
        {
            final CountersReader counters = aeron.countersReader();
            final StringBuilder sb = new StringBuilder("aeron " + bench.role + " counters: {");
            counters.forEach((counterId, typeId, keyBuffer, label) ->
            {
                final long value = counters.getCounterValue(counterId);
                if (typeId == AeronCounters.DRIVER_SYSTEM_COUNTER_TYPE_ID && value != 0)
                {
                    sb.append(label).append('=').append(value).append(", ");
                }
            });
            Bench.log(sb.append('}').toString());
        }
        catch (final RuntimeException ex)
        {
            Bench.log("aeron counters: " + ex);
        }
    }

    private void awaitConnected(final Publication[] pubs, final Subscription sub) throws IOException
    {
        final long deadline = System.nanoTime() + bench.startTimeoutNs;
        while (true)
        {
            boolean all = sub == null || sub.isConnected();
            for (final Publication p : pubs)
            {
                all &= p.isConnected();
            }
            if (all)
            {
                return;
            }
            if (System.nanoTime() > deadline)
            {
                throw new IOException("aeron: not connected within the start timeout");
            }
            if (invoke() == 0)
            {
                Bench.sleepNs(1_000_000);
            }
        }
    }

    /**
     * Publishes {@code length} bytes of {@code src}, idling while back-pressured (in INVOKER mode running the
     * driver, which is what drains the publication).
     *
     * @return false if {@code state} stopped running or the process is closing first.
     */
    private boolean publish(final ExclusivePublication pub, final BufferClaim claim, final DirectBuffer src,
        final int from, final int length, final IdleStrategy idle, final Bench.SourceState state) throws IOException
    {
        idle.reset();
        while (true)
        {
            final long r = length <= pub.maxPayloadLength() ? pub.tryClaim(length, claim) : pub.offer(src, from, length);
            if (r > 0)
            {
                if (length <= pub.maxPayloadLength())
                {
                    claim.buffer().putBytes(claim.offset(), src, from, length);
                    claim.commit();
                }
                return true;
            }
            if (r == Publication.CLOSED || r == Publication.MAX_POSITION_EXCEEDED)
            {
                throw new IOException("aeron publication: " + Publication.errorString(r));
            }
            if (closing || state != null && !state.running)
            {
                return false;
            }
            idle.idle(invoke());
        }
    }

    private static UnsafeBuffer payload(final int size)
    {
        return new UnsafeBuffer(ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN));
    }

    // ------------------------------------------------------------------ RTT

    void rttServer() throws Exception
    {
        start();
        final Subscription sub = aeron.addSubscription(channel(serverIp, port), PING_STREAM);
        final ExclusivePublication pub = aeron.addExclusivePublication(channel(clientIp, port), PONG_STREAM);
        final BufferClaim claim = new BufferClaim();
        final IdleStrategy sendIdle = Bench.idle(appIdle);
        final FragmentHandler echo = (buffer, offset, length, header) ->
        {
            try
            {
                publish(pub, claim, buffer, offset, length, sendIdle, null);
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
        };
        Main.ready();
        final IdleStrategy idle = Bench.idle(appIdle);
        loop = Thread.currentThread();
        while (!closing)
        {
            // the driver runs after the poll, so that an echo published in it goes out in this iteration
            final int work = sub.poll(echo, 16);
            idle.idle(work + invoke());
        }
    }

    void rttClient() throws Exception
    {
        start();
        final ExclusivePublication pub = aeron.addExclusivePublication(channel(serverIp, port), PING_STREAM);
        final Subscription sub = aeron.addSubscription(channel(clientIp, port), PONG_STREAM);
        awaitConnected(new Publication[] {pub}, sub);
        final BufferClaim claim = new BufferClaim();
        final UnsafeBuffer out = payload(bench.size);
        final IdleStrategy idle = Bench.idle(appIdle);
        final long[] got = new long[1];
        final FragmentHandler handler = (buffer, offset, length, header) -> got[0] = buffer.getLong(offset);
        bench.rttClient(seq ->
        {
            out.putLong(0, seq);
            publish(pub, claim, out, 0, bench.size, idle, null);
            got[0] = 0;
            idle.reset();
            final long limit = System.nanoTime() + 5_000_000_000L;
            while (got[0] == 0)
            {
                // the driver runs first: it sends the ping, then receives the echo that the poll takes
                if (invoke() + sub.poll(handler, 1) == 0)
                {
                    if (System.nanoTime() > limit)
                    {
                        throw new IOException("no echo within 5 s for " + seq);
                    }
                    idle.idle();
                }
            }
            Bench.checkEcho(seq, got[0]);
        }, extra());
        Bench.finish(this::close);
    }

    // ------------------------------------------------------------------ throughput

    void sink() throws Exception
    {
        start();
        final int n = bench.receivers;
        final Subscription[] subs = new Subscription[n];
        for (int i = 0; i < n; i++)
        {
            subs[i] = aeron.addSubscription(channel(serverIp, port), PING_STREAM + i);
        }
        final Bench.Counts counts = new Bench.Counts(n);
        final Thread poller = new Thread(() ->
        {
            final long[] expected = new long[n];
            final FragmentHandler[] handlers = new FragmentHandler[n];
            for (int i = 0; i < n; i++)
            {
                expected[i] = -1;
                final int index = i;
                handlers[i] = (buffer, offset, length, header) ->
                {
                    final long seq = buffer.getLong(offset);
                    if (expected[index] >= 0 && seq != expected[index])
                    {
                        counts.seqError(index);
                    }
                    expected[index] = seq + 1;
                };
            }
            final IdleStrategy idle = Bench.idle(appIdle);
            while (!closing)
            {
                int work = invoke();
                for (int i = 0; i < n; i++)
                {
                    final int got = subs[i].poll(handlers[i], 256);
                    if (got > 0)
                    {
                        counts.add(i, got);
                        work += got;
                    }
                }
                idle.idle(work);
            }
        }, "aeron-sink");
        poller.setDaemon(true);
        loop = poller;
        poller.start();
        Main.ready();
        bench.measureSink(counts, extra());
        Bench.finish(this::close);
    }

    void source() throws Exception
    {
        start();
        final int n = bench.receivers;
        final ExclusivePublication[] pubs = new ExclusivePublication[n];
        for (int i = 0; i < n; i++)
        {
            pubs[i] = aeron.addExclusivePublication(channel(serverIp, port), PING_STREAM + i);
        }
        awaitConnected(pubs, null);
        final Bench.SourceState state = new Bench.SourceState();
        final Thread sender = new Thread(() ->
        {
            final UnsafeBuffer out = payload(bench.size);
            final BufferClaim claim = new BufferClaim();
            final IdleStrategy idle = Bench.idle(appIdle);
            final long[] seq = new long[n];
            try
            {
                int d = 0;
                int burst = 0;
                while (state.running && !closing)
                {
                    out.putLong(0, seq[d]);
                    if (publish(pubs[d], claim, out, 0, bench.size, idle, state))
                    {
                        if (invoker && ++burst >= invokeBatch)
                        {
                            // a burst of publishes, then one duty cycle of the driver sends them
                            burst = 0;
                            invoke();
                        }
                        seq[d]++;
                        state.sent(1);
                        if (++d == n)
                        {
                            d = 0;
                        }
                    }
                }
            }
            catch (final IOException ex)
            {
                Bench.log("aeron source: " + ex);
            }
        }, "aeron-source");
        sender.setDaemon(true);
        loop = sender;
        sender.start();
        bench.measureSource(state, sender, extra());
        Bench.finish(this::close);
    }
}
