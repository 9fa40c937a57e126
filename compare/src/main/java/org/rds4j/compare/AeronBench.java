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
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
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
 * the only sensible choice on a 2-core machine) or {@code dedicated}; {@code --driver-idle} is its idle
 * strategy (default {@code backoff}: agrona's 10 spins, 5 yields, park 1 us doubling to 1 ms). Term length
 * {@code --term-length} (default 16 MiB, 4 MiB with several receivers: 16 streams x 3 terms on each side),
 * UDP socket buffers {@code --so-buf} (default 2 MiB, the {@code aeron.socket.so_sndbuf}/{@code so_rcvbuf}
 * settings) and the receiver window {@code --rcv-window} (default: the socket buffer divided among the
 * streams, at most 2 MiB; {@link #receiverWindow}), MTU {@code --mtu} (default 1408,
 * Aeron's).
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
    private MediaDriver driver;
    private Aeron aeron;

    AeronBench(final Bench bench)
    {
        this.bench = bench;
        this.args = bench.args;
        this.appIdle = args.str("idle", "yield");
        this.driverIdle = args.str("driver-idle", "backoff");
        this.threading = args.str("threading", "shared");
        this.serverIp = args.str("server-ip", "127.0.0.2");
        this.clientIp = args.str("client-ip", "127.0.0.1");
        this.port = args.integer("port", 5000);
    }

    private Json extra()
    {
        return new Json().put("threading", threading).put("driver_idle", driverIdle).put("app_idle", appIdle)
            .put("term_length", termLength()).put("rcv_window", receiverWindow());
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
            .mtuLength(args.size("mtu", 1408));
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
            default:
                throw new IllegalArgumentException("--threading must be shared or dedicated: " + threading);
        }
        driver = MediaDriver.launchEmbedded(ctx);
        aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName()));
        // passive roles end with SIGTERM from run.sh: remove the driver's files on the way out
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            if (!aeron.isClosed())
            {
                logCounters();
            }
            CloseHelper.quietCloseAll(aeron, driver);
        }, "aeron-close"));
        Bench.WATCHDOG_HOOKS.add(this::logCounters);
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
            Bench.sleepNs(1_000_000);
        }
    }

    /**
     * Publishes {@code length} bytes of {@code src}, idling while back-pressured.
     *
     * @return false if {@code state} stopped running first.
     */
    private static boolean publish(final ExclusivePublication pub, final BufferClaim claim, final DirectBuffer src,
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
            if (state != null && !state.running)
            {
                return false;
            }
            idle.idle();
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
        while (true)
        {
            idle.idle(sub.poll(echo, 16));
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
                if (sub.poll(handler, 1) == 0)
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
        logCounters();
        Bench.finish(aeron, driver);
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
            while (true)
            {
                int work = 0;
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
        poller.start();
        Main.ready();
        bench.measureSink(counts, extra());
        logCounters();
        Bench.finish(aeron, driver);
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
                while (state.running)
                {
                    out.putLong(0, seq[d]);
                    if (publish(pubs[d], claim, out, 0, bench.size, idle, state))
                    {
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
        sender.start();
        bench.measureSource(state, sender, extra());
        logCounters();
        Bench.finish(aeron, driver);
    }
}
