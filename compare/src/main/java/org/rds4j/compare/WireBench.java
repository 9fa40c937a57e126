package org.rds4j.compare;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * RDS over TCP spoken by an ideal peer, to measure one side of rds4j without the other's costs: a pair's rate is
 * its slower side's, and these tell which side that is and how far the other could go. {@code wire-sink} is an
 * ideal receiver for an rds4j source (run.sh's {@code rds4j-send} row: what rds4j's sending side gives);
 * {@code wire-source} is an ideal sender into an rds4j sink ({@code rds4j-recv}: what its receiving side takes).
 * Throughput roles only.
 * <p>
 * Both open the connection as an rds4j peer would (the sender connects from {@code --client-ip}, the lower
 * address; the receiver listens on {@code --server-ip}, both on {@code --tcp-port}) and start with a probe that
 * carries a generation, so the rds4j stack takes them for an rds4j peer: it acks the ideal sender and waits for
 * the ideal receiver's acks, as with its own kind. Each answers the stack's heartbeats with a pong.
 * <p>
 * The receiver reads into a 256 KiB buffer, polling and yielding when there is nothing, counts the data frames to ports
 * {@code --port} .. {@code --port + receivers - 1}, checks that each port's payloads carry consecutive message
 * numbers, and acks (an ack-only frame with the highest sequence received) after a read that took a frame asking
 * for an ack or 256 KiB since its last ack. The sender writes frames (the RDS header, sequences from 1, then the
 * payload starting with the destination's message number) into a 256 KiB buffer written when full (as NIO's
 * source), round robin over the destination ports, passing over a port the stack's congestion map marks; a second
 * thread reads what the stack sends (acks, its probe, congestion maps, heartbeats) and leaves the pongs to the
 * sending thread, the only one that writes.
 */
final class WireBench
{
    private static final int BUFFER = 256 * 1024;
    /** Acks at least this often (received bytes), as rds4j's own receiver does for a stream. */
    private static final int ACK_BYTES = 256 * 1024;

    private final Bench bench;
    private final InetSocketAddress server;
    private final int tcpPort;
    private final int generation = (int)System.nanoTime() | 1;

    WireBench(final Bench bench)
    {
        this.bench = bench;
        this.server = new InetSocketAddress(bench.args.str("server-ip", "127.0.0.2"), bench.args.integer("port", 5000));
        this.tcpPort = bench.args.integer("tcp-port", 29500);
        if (bench.receivers > Long.SIZE)
        {
            throw new IllegalArgumentException("the wire peer takes up to 64 receivers: " + bench.receivers);
        }
    }

    void rtt()
    {
        throw new IllegalArgumentException("the wire peer has throughput roles only (sink, source)");
    }

    // ------------------------------------------------------------------ the ideal receiver

    void sink() throws Exception
    {
        final ServerSocketChannel listener = ServerSocketChannel.open();
        listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        listener.bind(new InetSocketAddress(server.getAddress(), tcpPort));
        final Bench.Counts counts = new Bench.Counts(bench.receivers);
        final Thread reader = new Thread(() ->
        {
            try (SocketChannel channel = listener.accept())
            {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                receive(channel, counts);
            }
            catch (final IOException | RuntimeException ex)
            {
                Bench.log("wire sink: " + ex); // the sink's window then counts what arrived before, and says so
            }
        }, "wire-sink");
        reader.setDaemon(true);
        reader.start();
        Main.ready();
        bench.measureSink(counts, new Json().put("peer", "ideal RDS receiver"));
        Bench.finish(listener);
    }

    private void receive(final SocketChannel channel, final Bench.Counts counts) throws IOException
    {
        final Frames out = new Frames();
        write(channel, out.probe(generation));
        final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER);
        final UnsafeBuffer frames = new UnsafeBuffer(in);
        final Received received = new Received(counts);
        long sinceAck = 0;
        // polled, yielding when empty: a blocking read would make every write of the source wake this thread, a cost
        // on the source's side that rds4j's own receiver, which yields too before it waits, mostly spares it
        channel.configureBlocking(false);
        int n;
        while ((n = channel.read(in)) >= 0)
        {
            if (n == 0)
            {
                Thread.yield();
                continue;
            }
            sinceAck += n;
            parse(in, frames, received);
            for (; received.pongsOwed > 0; received.pongsOwed--)
            {
                write(channel, out.pong(received.highest));
            }
            if (received.ackRequired || sinceAck >= ACK_BYTES)
            {
                write(channel, out.ack(received.highest));
                received.ackRequired = false;
                sinceAck = 0;
            }
        }
    }

    /** The ideal receiver's view of what it read: counts, the highest sequence, what it owes the stack. */
    private final class Received implements FrameHandler
    {
        private final Bench.Counts counts;
        private final long[] expected = new long[bench.receivers];
        long highest;
        boolean ackRequired;
        int pongsOwed;

        Received(final Bench.Counts counts)
        {
            this.counts = counts;
            java.util.Arrays.fill(expected, -1);
        }

        @Override
        public void onFrame(final UnsafeBuffer frames, final int at, final int length)
        {
            final int dport = RdsHeader.dport(frames, at);
            highest = Math.max(highest, RdsHeader.sequence(frames, at));
            ackRequired |= (RdsHeader.flags(frames, at) & RdsHeader.FLAG_ACK_REQUIRED) != 0;
            final int index = dport - server.getPort();
            if (isHeartbeat(frames, at))
            {
                pongsOwed++;
            }
            else if (index >= 0 && index < expected.length && length >= Long.BYTES)
            {
                final long message = frames.getLong(at + RdsHeader.LENGTH, ByteOrder.BIG_ENDIAN);
                if (expected[index] >= 0 && message != expected[index])
                {
                    counts.seqError(index);
                }
                expected[index] = message + 1;
                counts.add(index, 1);
            }
        }
    }

    // ------------------------------------------------------------------ the ideal sender

    void source() throws Exception
    {
        final SocketChannel channel = connect();
        write(channel, new Frames().probe(generation));
        final Incoming incoming = new Incoming(channel);
        incoming.start();
        final Bench.SourceState state = new Bench.SourceState();
        final Thread sender = new Thread(() ->
        {
            try
            {
                send(channel, incoming, state);
            }
            catch (final IOException ex)
            {
                if (state.running)
                {
                    Bench.log("wire source: " + ex);
                }
            }
        }, "wire-source");
        sender.setDaemon(true);
        sender.start();
        bench.measureSource(state, sender, new Json().put("peer", "ideal RDS sender"));
        Bench.finish(channel);
    }

    private SocketChannel connect() throws IOException
    {
        final long deadline = System.nanoTime() + bench.startTimeoutNs;
        while (true)
        {
            final SocketChannel channel = SocketChannel.open();
            try
            {
                channel.bind(new InetSocketAddress(bench.args.str("client-ip", "127.0.0.1"), 0));
                channel.connect(new InetSocketAddress(server.getAddress(), tcpPort));
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return channel;
            }
            catch (final IOException ex)
            {
                channel.close();
                if (System.nanoTime() > deadline)
                {
                    throw ex;
                }
                Bench.sleepNs(10_000_000);
            }
        }
    }

    private void send(final SocketChannel channel, final Incoming incoming, final Bench.SourceState state)
        throws IOException
    {
        final int n = bench.receivers;
        final int size = bench.size;
        final int frame = RdsHeader.LENGTH + size;
        final ByteBuffer out = ByteBuffer.allocateDirect(BUFFER);
        final UnsafeBuffer frames = new UnsafeBuffer(out);
        final long[] messages = new long[n];
        final int sport = server.getPort();
        long sequence = 1;
        int at = 0;
        int d = 0;
        int passed = 0;
        while (state.running)
        {
            if (BUFFER - at < frame)
            {
                out.limit(at).position(0);
                write(channel, out);
                at = 0;
            }
            if (incoming.pongsOwed.get() > 0)
            {
                incoming.pongsOwed.decrementAndGet();
                RdsHeader.write(frames, at, sequence++, 0, 0, 0, RdsHeader.PROBE_PORT, 0, 0);
                at += RdsHeader.LENGTH;
                continue;
            }
            if ((incoming.congested >>> d & 1) != 0)
            {
                d = d + 1 == n ? 0 : d + 1;
                if (++passed == n)
                {
                    // every destination is congested: what is written goes, then wait for the map to change
                    out.limit(at).position(0);
                    write(channel, out);
                    at = 0;
                    passed = 0;
                    Thread.yield();
                }
                continue;
            }
            passed = 0;
            RdsHeader.write(frames, at, sequence++, 0, size, sport, server.getPort() + d, 0, 0);
            frames.putLong(at + RdsHeader.LENGTH, messages[d]++, ByteOrder.BIG_ENDIAN);
            at += frame;
            state.sent(1);
            d = d + 1 == n ? 0 : d + 1;
        }
    }

    /** The ideal sender's reading thread: what the stack sends, read and dropped but for heartbeats and congestion. */
    private final class Incoming extends Thread implements FrameHandler
    {
        private final SocketChannel channel;
        private final CongestionMap map = new CongestionMap();
        /** Heartbeats received and not yet answered: the sending thread writes the pongs. */
        final AtomicInteger pongsOwed = new AtomicInteger();
        /** Bit i: the stack's congestion map marks port {@code --port + i}. */
        volatile long congested;

        Incoming(final SocketChannel channel)
        {
            super("wire-source-reader");
            this.channel = channel;
            setDaemon(true);
        }

        @Override
        public void run()
        {
            final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER);
            final UnsafeBuffer frames = new UnsafeBuffer(in);
            try
            {
                while (channel.read(in) >= 0)
                {
                    parse(in, frames, this);
                }
            }
            catch (final IOException ex)
            {
                // the run is over: the stack or this process closed the connection
            }
        }

        @Override
        public void onFrame(final UnsafeBuffer frames, final int at, final int length)
        {
            if (RdsHeader.isCongestionUpdate(frames, at))
            {
                map.replace(frames, at + RdsHeader.LENGTH, port -> { });
                long bits = 0;
                for (int i = 0; i < bench.receivers; i++)
                {
                    bits |= map.isCongested(server.getPort() + i) ? 1L << i : 0;
                }
                congested = bits;
            }
            else if (isHeartbeat(frames, at))
            {
                pongsOwed.incrementAndGet();
            }
        }
    }

    // ------------------------------------------------------------------ frames

    /** Takes one frame the stack sent. */
    private interface FrameHandler
    {
        void onFrame(UnsafeBuffer frames, int at, int length);
    }

    /** Hands over the whole frames read into {@code in} (up to its position) and keeps the part of the next. */
    private static void parse(final ByteBuffer in, final UnsafeBuffer frames, final FrameHandler handler)
    {
        final int end = in.position();
        int at = 0;
        while (end - at >= RdsHeader.LENGTH)
        {
            final int length = checkedLength(frames, at);
            if (end - at < RdsHeader.LENGTH + length)
            {
                break;
            }
            handler.onFrame(frames, at, length);
            at += RdsHeader.LENGTH + length;
        }
        in.limit(end).position(at);
        in.compact();
    }

    /** @return whether the frame is the stack's heartbeat (a sequenced probe), which a pong answers. */
    private static boolean isHeartbeat(final UnsafeBuffer frames, final int at)
    {
        return RdsHeader.sequence(frames, at) != 0 && RdsHeader.sport(frames, at) == RdsHeader.PROBE_PORT &&
            RdsHeader.dport(frames, at) == 0;
    }

    /** @return the frame's payload length, after checking its header as the stack's own reader does. */
    private static int checkedLength(final UnsafeBuffer frames, final int at)
    {
        final int valid = RdsHeader.validate(frames, at);
        if (valid != RdsHeader.VALID || RdsHeader.length(frames, at) > BUFFER - RdsHeader.LENGTH)
        {
            throw new IllegalStateException("the stack sent a bad frame: " + RdsHeader.describeValidation(valid));
        }
        return (int)RdsHeader.length(frames, at);
    }

    /** A peer's own frames (probe, pong, ack-only), one at a time from one buffer. */
    private static final class Frames
    {
        private final ByteBuffer buffer = ByteBuffer.allocateDirect(RdsHeader.LENGTH);
        private final UnsafeBuffer header = new UnsafeBuffer(buffer);
        private long sequence = 1;

        ByteBuffer probe(final int generation)
        {
            RdsHeader.write(header, 0, 0, 0, 0, RdsHeader.PROBE_PORT, 0, 0, 0);
            RdsHeader.writeHandshakeExtensions(header, 0, 1, generation);
            return buffer.clear();
        }

        ByteBuffer pong(final long ack)
        {
            RdsHeader.write(header, 0, sequence++, ack, 0, 0, RdsHeader.PROBE_PORT, 0, 0);
            return buffer.clear();
        }

        ByteBuffer ack(final long ack)
        {
            RdsHeader.write(header, 0, 0, ack, 0, 0, 0, 0, 0);
            return buffer.clear();
        }
    }

    private static void write(final SocketChannel channel, final ByteBuffer frame) throws IOException
    {
        while (frame.hasRemaining())
        {
            channel.write(frame);
        }
    }
}
