package org.rds4j.compare;

import org.agrona.concurrent.IdleStrategy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * Raw Java NIO over TCP: what a TCP transport could do at best, with rds4j's framing and nothing else.
 * Each message is a frame of a 48-byte header laid out like RDS's (sequence, ack, length, ports, flags;
 * big-endian; no checksum) and the payload. Senders copy frames into a 256 KiB direct buffer and write it
 * when it is full or when nothing more is queued (for ping-pong: after every message); readers read into a
 * 256 KiB direct buffer and parse frames in place. No acks, no sequencing beyond TCP's, no flow control
 * beyond TCP's window.
 * <p>
 * {@code --io block} (default): blocking channels, threads sleep in the kernel. {@code --io poll}: non-blocking
 * channels polled in a loop that idles with {@code --idle} (default yield) when a read or write makes no
 * progress: lower latency, a core kept busy per process. The fan-out sink accepts {@code --receivers}
 * connections on consecutive ports and reads them from one thread with a {@link Selector} (block) or a loop
 * over the channels (poll). The scale case ({@code --peers N}) is the same with one listener on each of
 * {@code 127.0.2.1} ... {@code 127.0.2.N} (one port): N connections from the one source to N peer addresses,
 * as the rds4j source's stack holds one TCP connection to each of its N peer addresses. Each connection has its
 * own 256 KiB send buffer and read buffer, so NIO's direct memory grows with N by design.
 */
final class NioBench
{
    private static final int BUFFER = 256 * 1024;
    private static final int OFF_SEQ = 0;
    private static final int OFF_LEN = 16;
    private static final int OFF_SPORT = 20;
    private static final int OFF_DPORT = 22;

    private final Bench bench;
    /** Non-blocking channels polled in a loop, idling with {@link #idleSpec} when a read or write makes no progress. */
    private final boolean spin;
    private final String idleSpec;
    private final InetSocketAddress server;

    NioBench(final Bench bench)
    {
        this.bench = bench;
        final String io = bench.args.str("io", "block");
        if (!io.equals("block") && !io.equals("poll"))
        {
            throw new IllegalArgumentException("--io must be block or poll: " + io);
        }
        this.spin = io.equals("poll");
        this.idleSpec = bench.args.str("idle", "yield");
        this.server = new InetSocketAddress(bench.args.str("server-ip", "127.0.0.2"), bench.args.integer("port", 5000));
    }

    private Json extra()
    {
        return new Json().put("io", spin ? "poll" : "block").put("app_idle", spin ? idleSpec : "kernel");
    }

    private ServerSocketChannel listen(final InetSocketAddress address) throws IOException
    {
        final ServerSocketChannel listener = ServerSocketChannel.open();
        listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        listener.bind(address);
        return listener;
    }

    private void configure(final SocketChannel channel) throws IOException
    {
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.configureBlocking(!spin);
    }

    private SocketChannel connect(final InetSocketAddress to) throws IOException
    {
        final long deadline = System.nanoTime() + bench.startTimeoutNs;
        while (true)
        {
            try
            {
                final SocketChannel channel = SocketChannel.open();
                channel.bind(new InetSocketAddress(bench.args.str("client-ip", "127.0.0.1"), 0));
                channel.connect(to);
                configure(channel);
                return channel;
            }
            catch (final IOException ex)
            {
                if (System.nanoTime() > deadline)
                {
                    throw ex;
                }
                Bench.sleepNs(10_000_000);
            }
        }
    }

    private static ByteBuffer buffer()
    {
        return ByteBuffer.allocateDirect(BUFFER).order(ByteOrder.BIG_ENDIAN);
    }

    /** Appends one frame (header + {@code length} payload bytes copied from {@code src} at {@code from}) to {@code out}. */
    private static void putFrame(
        final ByteBuffer out, final long seq, final ByteBuffer src, final int from, final int length, final int dport)
    {
        final int start = out.position();
        out.putLong(start + OFF_SEQ, seq);
        out.putLong(start + 8, 0L);
        out.putInt(start + OFF_LEN, length);
        out.putShort(start + OFF_SPORT, (short)5000);
        out.putShort(start + OFF_DPORT, (short)dport);
        out.putLong(start + 24, 0L);
        out.putLong(start + 32, 0L);
        out.putLong(start + 40, 0L);
        out.put(start + Bench.HEADER, src, from, length);
        out.position(start + Bench.HEADER + length);
    }

    private void writeAll(final SocketChannel channel, final ByteBuffer out, final IdleStrategy idle) throws IOException
    {
        out.flip();
        idle.reset();
        while (out.hasRemaining())
        {
            if (channel.write(out) == 0)
            {
                idle.idle();
            }
        }
        out.clear();
    }

    /** Reads at least once (idling while 0 bytes in poll mode); @return bytes read, -1 at end of stream. */
    private int readSome(final SocketChannel channel, final ByteBuffer in, final IdleStrategy idle) throws IOException
    {
        int n;
        idle.reset();
        while ((n = channel.read(in)) == 0)
        {
            if (!spin)
            {
                return 0;
            }
            idle.idle();
        }
        return n;
    }

    private IdleStrategy idle()
    {
        return Bench.idle(idleSpec);
    }

    // ------------------------------------------------------------------ RTT

    void rttServer() throws Exception
    {
        final ServerSocketChannel listener = listen(server);
        Main.ready();
        final SocketChannel channel = listener.accept();
        configure(channel);
        final ByteBuffer in = buffer();
        final ByteBuffer out = buffer();
        final IdleStrategy idle = idle();
        while (true)
        {
            if (readSome(channel, in, idle) < 0)
            {
                Bench.finish(channel, listener);
            }
            // echo every complete frame, then write once: nothing more is queued
            final int end = in.position();
            int offset = 0;
            while (end - offset >= Bench.HEADER)
            {
                final int frame = Bench.HEADER + in.getInt(offset + OFF_LEN);
                if (end - offset < frame)
                {
                    break;
                }
                if (out.remaining() < frame)
                {
                    writeAll(channel, out, idle);
                }
                putFrame(out, in.getLong(offset + OFF_SEQ), in, offset + Bench.HEADER, frame - Bench.HEADER,
                    in.getShort(offset + OFF_SPORT));
                offset += frame;
            }
            in.limit(end).position(offset);
            in.compact();
            if (out.position() > 0)
            {
                writeAll(channel, out, idle);
            }
        }
    }

    void rttClient() throws Exception
    {
        final SocketChannel channel = connect(server);
        final ByteBuffer payload = ByteBuffer.allocateDirect(bench.size);
        final ByteBuffer out = buffer();
        final ByteBuffer in = buffer();
        final int frame = Bench.HEADER + bench.size;
        final IdleStrategy idle = idle();
        bench.rttClient(seq ->
        {
            payload.putLong(0, seq);
            putFrame(out, seq, payload, 0, bench.size, server.getPort());
            writeAll(channel, out, idle);
            while (in.position() < frame)
            {
                if (readSome(channel, in, idle) < 0)
                {
                    throw new IOException("server closed");
                }
            }
            Bench.checkEcho(seq, in.getLong(Bench.HEADER));
            in.limit(in.position()).position(frame);
            in.compact();
        }, extra());
        Bench.finish(channel);
    }

    // ------------------------------------------------------------------ throughput

    void sink() throws Exception
    {
        final int n = bench.receivers;
        final ServerSocketChannel[] listeners = new ServerSocketChannel[n];
        for (int i = 0; i < n; i++)
        {
            listeners[i] = listen(bench.receiverAddress(server.getAddress(), server.getPort(), i));
        }
        final Bench.Counts counts = new Bench.Counts(n);
        final Thread reader = new Thread(() ->
        {
            try
            {
                final SocketChannel[] channels = new SocketChannel[n];
                for (int i = 0; i < n; i++)
                {
                    channels[i] = listeners[i].accept();
                    configure(channels[i]);
                }
                read(channels, counts);
            }
            catch (final IOException ex)
            {
                Bench.log("nio sink: " + ex);
            }
        }, "nio-sink");
        reader.setDaemon(true);
        reader.start();
        Main.ready();
        bench.measureSink(counts, extra());
        Bench.finish();
    }

    private void read(final SocketChannel[] channels, final Bench.Counts counts) throws IOException
    {
        final int n = channels.length;
        final ByteBuffer[] buffers = new ByteBuffer[n];
        final long[] expected = new long[n];
        for (int i = 0; i < n; i++)
        {
            buffers[i] = buffer();
            expected[i] = -1;
        }
        final IdleStrategy idle = idle();
        if (n == 1)
        {
            while (true)
            {
                if (readSome(channels[0], buffers[0], idle) < 0)
                {
                    return;
                }
                parse(buffers[0], 0, expected, counts);
            }
        }
        if (spin)
        {
            while (true)
            {
                int work = 0;
                for (int i = 0; i < n; i++)
                {
                    final int got = channels[i].read(buffers[i]);
                    if (got > 0)
                    {
                        parse(buffers[i], i, expected, counts);
                        work++;
                    }
                    else if (got < 0)
                    {
                        return;
                    }
                }
                idle.idle(work);
            }
        }
        final Selector selector = Selector.open();
        for (int i = 0; i < n; i++)
        {
            channels[i].configureBlocking(false);
            channels[i].register(selector, SelectionKey.OP_READ, i);
        }
        while (true)
        {
            selector.select();
            for (final SelectionKey key : selector.selectedKeys())
            {
                final int i = (Integer)key.attachment();
                final int got = channels[i].read(buffers[i]);
                if (got < 0)
                {
                    return;
                }
                parse(buffers[i], i, expected, counts);
            }
            selector.selectedKeys().clear();
        }
    }

    /** Counts the complete frames in {@code in} (parsed in place), keeps a partial frame for the next read. */
    private static void parse(final ByteBuffer in, final int index, final long[] expected, final Bench.Counts counts)
    {
        final int end = in.position();
        int offset = 0;
        int frames = 0;
        long next = expected[index];
        while (end - offset >= Bench.HEADER)
        {
            final int length = in.getInt(offset + OFF_LEN);
            if (length < 0 || length > BUFFER - Bench.HEADER)
            {
                throw new IllegalStateException("bad frame length " + length);
            }
            final int frame = Bench.HEADER + length;
            if (end - offset < frame)
            {
                break;
            }
            final long seq = in.getLong(offset + OFF_SEQ);
            if (next >= 0 && seq != next)
            {
                counts.seqError(index);
            }
            next = seq + 1;
            offset += frame;
            frames++;
        }
        expected[index] = next;
        in.limit(end).position(offset);
        in.compact();
        if (frames > 0)
        {
            counts.add(index, frames);
        }
    }

    void source() throws Exception
    {
        final int n = bench.receivers;
        final SocketChannel[] channels = new SocketChannel[n];
        for (int i = 0; i < n; i++)
        {
            channels[i] = connect(bench.receiverAddress(server.getAddress(), server.getPort(), i));
        }
        final Bench.SourceState state = new Bench.SourceState();
        final Thread sender = new Thread(() ->
        {
            final ByteBuffer payload = ByteBuffer.allocateDirect(bench.size);
            final ByteBuffer[] out = new ByteBuffer[n];
            for (int i = 0; i < n; i++)
            {
                out[i] = buffer();
            }
            final long[] seq = new long[n];
            final int frame = Bench.HEADER + bench.size;
            final IdleStrategy idle = idle();
            try
            {
                int d = 0;
                while (state.running)
                {
                    // a saturating sender always has more queued: a buffer is written when it is full
                    if (out[d].remaining() < frame)
                    {
                        writeAll(channels[d], out[d], idle);
                    }
                    payload.putLong(0, seq[d]);
                    putFrame(out[d], seq[d], payload, 0, bench.size, server.getPort() + d);
                    seq[d]++;
                    state.sent(1);
                    if (++d == n)
                    {
                        d = 0;
                    }
                }
            }
            catch (final IOException ex)
            {
                if (state.running)
                {
                    Bench.log("nio source: " + ex);
                }
            }
        }, "nio-source");
        sender.setDaemon(true);
        sender.start();
        bench.measureSource(state, sender, extra());
        Bench.finish(channels);
    }
}
