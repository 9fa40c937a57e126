package org.rds4j.transport.tcp;

import org.rds4j.core.test.Await;
import org.rds4j.core.test.Payloads;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A fake RDS-over-TCP peer node for wire-level tests: one TCP connection made with plain java.nio, no rds4j
 * on this side. It reads the frames rds4j sends (48-byte big-endian {@code struct rds_header} then the
 * payload) and writes frames of its own, byte for byte. Every read has a deadline and fails the test when it
 * passes; nothing here sleeps.
 * <p>
 * Headers are encoded, decoded and checksummed here by hand (not with rds-core's {@code RdsHeader}), so the
 * tests do not take the code under test's word for the wire layout.
 */
final class FakePeer implements AutoCloseable
{
    static final int HEADER = 48;
    static final int CONG_MAP_BYTES = 8192;
    static final int FLAG_CONG_BITMAP = 0x01;
    static final int FLAG_ACK_REQUIRED = 0x02;
    static final int FLAG_RETRANSMITTED = 0x04;
    private static final long WRITE_TIMEOUT_NS = Duration.ofSeconds(10).toNanos();
    /** Never allocate what a broken peer announces beyond the protocol's limit (1 MiB) plus slack. */
    private static final long MAX_ACCEPTED_LEN = 2L << 20;

    private final SocketChannel channel;
    private final Selector selector;
    private final String name;
    /** The generation this fake node tells in its handshake answers. */
    private int generation = 0x5EED0001;
    private boolean answerProbes = true;
    private final List<Frame> probesAnswered = new ArrayList<>();

    /**
     * A frame as it arrived.
     *
     * @param seq     sequence.
     * @param ack     ack.
     * @param len     payload length (unsigned).
     * @param sport   source port.
     * @param dport   destination port.
     * @param flags   flags byte.
     * @param credit  credit byte.
     * @param csum    checksum field.
     * @param header  the raw 48 header bytes.
     * @param payload the payload bytes.
     */
    record Frame(long seq, long ack, long len, int sport, int dport, int flags, int credit, int csum,
        byte[] header, byte[] payload)
    {
        boolean isCongestionUpdate()
        {
            return (flags & FLAG_CONG_BITMAP) != 0;
        }

        boolean isAckOnly()
        {
            return seq == 0 && sport == 0 && dport == 0 && len == 0 && flags == 0;
        }

        /** A data frame (any frame with a sequence number): messages, pings, pongs. */
        boolean isData()
        {
            return !isCongestionUpdate() && seq != 0;
        }

        boolean isPong()
        {
            return isData() && sport == 0 && dport != 0 && len == 0;
        }

        /** rds4j's handshake probe: unsequenced, port 1 to port 0. */
        boolean isHandshakeProbe()
        {
            return seq == 0 && sport == 1 && dport == 0 && !isCongestionUpdate();
        }

        /** @return the GEN_NUM extension's value if the header has NPATHS then GEN_NUM (rds4j's layout), else 0. */
        int generation()
        {
            return header[32] == 5 && header[35] == 6 ? ByteBuffer.wrap(header).getInt(36) : 0;
        }

        @Override
        public String toString()
        {
            return "Frame{seq=" + seq + ", ack=" + ack + ", len=" + len + ", sport=" + sport + ", dport=" + dport +
                ", flags=0x" + Integer.toHexString(flags) + ", credit=" + credit + ", csum=0x" +
                Integer.toHexString(csum) + ", header=" + HexFormat.of().formatHex(header) + "}";
        }
    }

    private FakePeer(final SocketChannel channel, final String name) throws IOException
    {
        this.channel = channel;
        this.name = name;
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        this.selector = Selector.open();
        channel.register(selector, SelectionKey.OP_READ);
    }

    /** A listening fake node: a {@link ServerSocketChannel} bound to {@code address:port}. */
    static final class Listener implements AutoCloseable
    {
        private final ServerSocketChannel server;
        private final Selector selector;

        private Listener(final ServerSocketChannel server) throws IOException
        {
            this.server = server;
            server.configureBlocking(false);
            this.selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
        }

        /**
         * Accepts one connection.
         *
         * @param timeout how long to wait for it.
         * @return the accepted connection.
         * @throws AssertionError if none arrives in time.
         */
        FakePeer accept(final Duration timeout) throws IOException
        {
            final long deadline = System.nanoTime() + timeout.toNanos();
            while (true)
            {
                final SocketChannel accepted = server.accept();
                if (accepted != null)
                {
                    return new FakePeer(accepted, "accepted from " + accepted.getRemoteAddress());
                }
                final long remainingMs = remainingMs(deadline);
                if (remainingMs <= 0)
                {
                    throw new AssertionError("no connection accepted on " + server.getLocalAddress() + " within " + timeout);
                }
                selector.select(remainingMs);
                selector.selectedKeys().clear();
            }
        }

        InetSocketAddress address() throws IOException
        {
            return (InetSocketAddress)server.getLocalAddress();
        }

        @Override
        public void close() throws IOException
        {
            selector.close();
            server.close();
        }
    }

    /**
     * @param address where to listen (one of 127.0.0.0/8).
     * @param port    the RDS-over-TCP port the stack connects to.
     * @return a listener.
     */
    static Listener listen(final InetAddress address, final int port) throws IOException
    {
        return listen(address, port, 0);
    }

    /**
     * @param address       where to listen.
     * @param port          the RDS-over-TCP port.
     * @param receiveBuffer SO_RCVBUF of the accepted connections (a small one keeps the TCP window small), or
     *                      0 for the system's default.
     * @return a listener.
     */
    static Listener listen(final InetAddress address, final int port, final int receiveBuffer) throws IOException
    {
        final ServerSocketChannel server = ServerSocketChannel.open();
        server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        if (receiveBuffer > 0)
        {
            server.setOption(StandardSocketOptions.SO_RCVBUF, receiveBuffer);
        }
        server.bind(new InetSocketAddress(address, port), 16);
        return new Listener(server);
    }

    /**
     * Connects from {@code from} (an ephemeral port on it) to {@code to}.
     *
     * @param from    the fake node's address.
     * @param to      the stack's {@code address:tcpPort}.
     * @param timeout how long the connect may take.
     * @return the connection.
     */
    static FakePeer connect(final InetAddress from, final InetSocketAddress to, final Duration timeout) throws IOException
    {
        final SocketChannel channel = SocketChannel.open();
        try
        {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.bind(new InetSocketAddress(from, 0));
            channel.configureBlocking(false);
            if (!channel.connect(to))
            {
                final long deadline = System.nanoTime() + timeout.toNanos();
                try (Selector connectSelector = Selector.open())
                {
                    channel.register(connectSelector, SelectionKey.OP_CONNECT);
                    while (!channel.finishConnect())
                    {
                        final long remainingMs = remainingMs(deadline);
                        if (remainingMs <= 0)
                        {
                            throw new AssertionError("connect " + from + " -> " + to + " did not complete within " + timeout);
                        }
                        connectSelector.select(remainingMs);
                        connectSelector.selectedKeys().clear();
                    }
                }
                // the key of the temporary selector is cancelled when it closes; flush that before re-registering
            }
            return new FakePeer(channel, "connected " + from.getHostAddress() + " -> " + to);
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            channel.close();
            throw ex;
        }
    }

    // ---------------------------------------------------------------- reading

    /**
     * Reads one complete frame.
     *
     * @param timeout how long to wait for all of it.
     * @return the frame.
     * @throws AssertionError on timeout, end of stream or an absurd length.
     */
    Frame readFrame(final Duration timeout) throws IOException
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true)
        {
            final Frame frame = readAnyFrame(deadline);
            if (!answerProbes || !frame.isHandshakeProbe())
            {
                return frame;
            }
            probesAnswered.add(frame);
            sendHandshakePong();
        }
    }

    /**
     * Reads {@code count} data frames numbered from {@code first} on, each frame {@code i} with sequence {@code i + 1}
     * and a payload of {@code size} bytes filled by {@link Payloads#fill} with number {@code i}: checks the sequence,
     * the retransmitted flag, the length and every payload byte.
     */
    void readNumbered(final int first, final int count, final int size, final boolean retransmitted,
        final Duration timeout) throws IOException
    {
        for (int i = first; i < first + count; i++)
        {
            final Frame frame = readFrame(timeout);
            assertEquals(i + 1, frame.seq(), "frame " + i);
            assertEquals(retransmitted, (frame.flags() & FLAG_RETRANSMITTED) != 0, "frame " + i);
            final ByteBuffer payload = ByteBuffer.wrap(frame.payload());
            assertEquals(size, payload.remaining(), "frame " + i);
            assertEquals(i, Payloads.sequence(payload), "frame " + i);
            assertTrue(Payloads.verify(payload), "the bytes of frame " + i);
        }
    }

    /**
     * Whether {@link #readFrame} answers rds4j's handshake probes by itself (default) with an unsequenced pong
     * carrying {@link #generation(int)}, and skips them; turn off to see and answer them by hand.
     */
    void answerProbes(final boolean answer)
    {
        this.answerProbes = answer;
    }

    /** @return the handshake probes {@link #readFrame} answered, in order. */
    List<Frame> probesAnswered()
    {
        return probesAnswered;
    }

    /** Sets the generation told in handshake answers: change it to play a restarted node. */
    void generation(final int generation)
    {
        this.generation = generation;
    }

    /** Sends the handshake answer: an unsequenced pong to port 1 with NPATHS 1 and this node's generation. */
    void sendHandshakePong() throws IOException
    {
        sendRaw(withHandshakeExtensions(header(0, 0, 0, 0, 1, 0, 0, 0), generation));
    }

    /**
     * Answers a handshake probe as the Linux 6.1 kernel does: a sequenced pong to port 1 whose only extension is
     * NPATHS 8 (the kernel's header has room for one extension where it tries to add two, so GEN_NUM is lost).
     */
    void sendKernelPong(final long seq) throws IOException
    {
        final byte[] pong = header(seq, 0, 0, 0, 1, 0, 0, 0);
        ByteBuffer.wrap(pong).put(32, (byte)5).putShort(33, (short)8);
        sendRaw(pong);
    }

    /** Puts NPATHS 1 then GEN_NUM into a header's extension space, as rds4j and newer kernels lay them out. */
    static byte[] withHandshakeExtensions(final byte[] header, final int generation)
    {
        final ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.BIG_ENDIAN);
        h.put(32, (byte)5).putShort(33, (short)1).put(35, (byte)6).putInt(36, generation);
        return header;
    }

    private Frame readAnyFrame(final long deadline) throws IOException
    {
        final Frame header = readHeader(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        final long len = header.len();
        if (len > MAX_ACCEPTED_LEN)
        {
            throw new AssertionError(name + ": rds4j sent a header with len " + len + ": " +
                HexFormat.of().formatHex(header.header()));
        }
        final byte[] payload = readFully((int)len, deadline, "a payload of " + len + " bytes");
        return parse(header.header(), payload);
    }

    /**
     * Reads only the next 48-byte header, leaving its payload unread.
     *
     * @return the header as a frame with an empty payload.
     */
    Frame readHeader(final Duration timeout) throws IOException
    {
        return parse(readFully(HEADER, System.nanoTime() + timeout.toNanos(), "a frame header"), new byte[0]);
    }

    /** Decodes a header by hand (big-endian, offsets of {@code struct rds_header}). */
    static Frame parse(final byte[] header, final byte[] payload)
    {
        final ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.BIG_ENDIAN);
        return new Frame(h.getLong(0), h.getLong(8), h.getInt(16) & 0xFFFF_FFFFL, h.getShort(20) & 0xFFFF,
            h.getShort(22) & 0xFFFF, h.get(24) & 0xFF, h.get(25) & 0xFF, h.getShort(30) & 0xFFFF, header, payload);
    }

    /**
     * Reads frames until one matches.
     *
     * @param timeout   for all of them together.
     * @param condition what the last frame must satisfy.
     * @param what      describes it, for the failure message.
     * @return every frame read, the matching one last.
     */
    List<Frame> readUntil(final Duration timeout, final Predicate<Frame> condition, final String what) throws IOException
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final List<Frame> frames = new ArrayList<>();
        while (true)
        {
            final long remaining = deadline - System.nanoTime();
            if (remaining <= 0)
            {
                throw new AssertionError(name + ": no frame matching '" + what + "' within " + timeout +
                    "; frames read: " + frames);
            }
            final Frame frame;
            try
            {
                frame = readFrame(Duration.ofNanos(remaining));
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError(ex.getMessage() + " (waiting for '" + what + "'; frames read: " + frames + ")", ex);
            }
            frames.add(frame);
            if (condition.test(frame))
            {
                return frames;
            }
        }
    }

    /** Reads the next frame that is neither an ack-only frame nor a congestion update. */
    Frame readDataFrame(final Duration timeout) throws IOException
    {
        final List<Frame> frames = readUntil(timeout, Frame::isData, "a data frame");
        return frames.get(frames.size() - 1);
    }

    /**
     * Waits until the stack closes the connection (end of stream or reset), discarding what arrives first.
     *
     * @param timeout how long to wait.
     * @return the number of bytes that arrived before the close.
     * @throws AssertionError if the connection is still open at the deadline.
     */
    long expectClosedByPeer(final Duration timeout) throws IOException
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        final ByteBuffer scratch = ByteBuffer.allocate(64 * 1024);
        long discarded = 0;
        while (true)
        {
            final int read;
            try
            {
                scratch.clear();
                read = channel.read(scratch);
            }
            catch (final IOException ex)
            {
                return discarded; // reset by peer: closed
            }
            if (read < 0)
            {
                return discarded;
            }
            discarded += read;
            if (read == 0)
            {
                final long remainingMs = remainingMs(deadline);
                if (remainingMs <= 0)
                {
                    throw new AssertionError(name + ": still open after " + timeout + " (" + discarded +
                        " bytes received meanwhile)");
                }
                selector.select(remainingMs);
                selector.selectedKeys().clear();
            }
        }
    }

    private byte[] readFully(final int length, final long deadline, final String what) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining())
        {
            final int read = channel.read(buffer);
            if (read < 0)
            {
                throw new AssertionError(name + ": end of stream after " + buffer.position() + " bytes of " + what);
            }
            if (read == 0)
            {
                final long remainingMs = remainingMs(deadline);
                if (remainingMs <= 0)
                {
                    throw new AssertionError(name + ": timed out with " + buffer.position() + " bytes of " + what);
                }
                selector.select(remainingMs);
                selector.selectedKeys().clear();
            }
        }
        return buffer.array();
    }

    // ---------------------------------------------------------------- writing

    /**
     * Encodes a 48-byte header by hand: big-endian, zero padding, the given checksum, no extension headers.
     */
    static byte[] header(final long seq, final long ack, final long len, final int sport, final int dport,
        final int flags, final int credit, final int csum)
    {
        final ByteBuffer h = ByteBuffer.allocate(HEADER).order(ByteOrder.BIG_ENDIAN);
        h.putLong(0, seq);
        h.putLong(8, ack);
        h.putInt(16, (int)len);
        h.putShort(20, (short)sport);
        h.putShort(22, (short)dport);
        h.put(24, (byte)flags);
        h.put(25, (byte)credit);
        h.putShort(30, (short)csum);
        return h.array();
    }

    /**
     * Computes the Internet checksum (RFC 1071) of a header independently of the code under test: the
     * one's-complement sum of its 24 big-endian 16-bit words with the checksum field counted as 0, folded and
     * complemented, as the kernel's {@code ip_fast_csum} over {@code struct rds_header}.
     *
     * @return the value to store (big-endian) at offset 30.
     */
    static int checksumOf(final byte[] header)
    {
        long sum = 0;
        for (int i = 0; i < HEADER; i += 2)
        {
            if (i != 30)
            {
                sum += ((header[i] & 0xFF) << 8) | (header[i + 1] & 0xFF);
            }
        }
        while ((sum >>> 16) != 0)
        {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int)(~sum & 0xFFFF);
    }

    /** Stores {@link #checksumOf} in a header's checksum field. @return the header. */
    static byte[] withChecksum(final byte[] header)
    {
        final int checksum = checksumOf(header);
        header[30] = (byte)(checksum >>> 8);
        header[31] = (byte)checksum;
        return header;
    }

    /** Sends a data frame: the header (checksum 0) then the payload. */
    void sendData(final long seq, final long ack, final int sport, final int dport, final int flags, final byte[] payload)
        throws IOException
    {
        sendRaw(concat(header(seq, ack, payload.length, sport, dport, flags, 0, 0), payload));
    }

    /** Sends an ack-only frame: sequence 0, ports 0, no payload. */
    void sendAck(final long ack) throws IOException
    {
        sendRaw(header(0, ack, 0, 0, 0, 0, 0, 0));
    }

    /** Sends a congestion update: flags 0x01, sequence 0, ports 0, len 8192, then the map. */
    void sendCongestionMap(final byte[] map) throws IOException
    {
        if (map.length != CONG_MAP_BYTES)
        {
            throw new IllegalArgumentException("a congestion map is 8192 bytes: " + map.length);
        }
        sendRaw(concat(header(0, 0, CONG_MAP_BYTES, 0, 0, FLAG_CONG_BITMAP, 0, 0), map));
    }

    /** Sends a ping: a data frame to port 0. */
    void sendPing(final long seq, final int sport) throws IOException
    {
        sendData(seq, 0, sport, 0, 0, new byte[0]);
    }

    /** Waits until the other host's TCP has acked every byte this node wrote (its application may not have read them). */
    void awaitAcked(final Duration timeout) throws IOException
    {
        final TcpUnackedBytes unacked = TcpUnackedBytes.of(channel);
        Await.until(timeout, () -> unacked.unacked() == 0, () -> name + ": bytes not yet acked: " + unacked.unacked());
    }

    /** Writes bytes as they are. */
    void sendRaw(final byte[] bytes) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.wrap(bytes);
        final long deadline = System.nanoTime() + WRITE_TIMEOUT_NS;
        while (buffer.hasRemaining())
        {
            if (channel.write(buffer) == 0)
            {
                if (System.nanoTime() - deadline > 0)
                {
                    throw new AssertionError(name + ": could not write " + bytes.length + " bytes in time");
                }
                // the stack reads continuously; room comes back within microseconds
                Thread.onSpinWait();
            }
        }
    }

    static byte[] congestionMapWith(final int... ports)
    {
        final byte[] map = new byte[CONG_MAP_BYTES];
        for (final int port : ports)
        {
            map[port / 8] |= (byte)(1 << (port % 8));
        }
        return map;
    }

    static byte[] concat(final byte[] a, final byte[] b)
    {
        final byte[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    InetSocketAddress localAddress() throws IOException
    {
        return (InetSocketAddress)channel.getLocalAddress();
    }

    InetSocketAddress remoteAddress() throws IOException
    {
        return (InetSocketAddress)channel.getRemoteAddress();
    }

    /** Closes with a reset (RST, no FIN), as a crashed host's connection ends. */
    void abort() throws IOException
    {
        channel.setOption(StandardSocketOptions.SO_LINGER, 0);
        close();
    }

    @Override
    public void close() throws IOException
    {
        try
        {
            selector.close();
        }
        finally
        {
            channel.close();
        }
    }

    @Override
    public String toString()
    {
        return "FakePeer[" + name + "]";
    }

    private static long remainingMs(final long deadlineNs)
    {
        final long remainingNs = deadlineNs - System.nanoTime();
        return remainingNs <= 0 ? 0 : Math.max(1, remainingNs / 1_000_000);
    }
}
