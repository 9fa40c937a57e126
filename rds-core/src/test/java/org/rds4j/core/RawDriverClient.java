package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.TransportType;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A driver's client that speaks {@link DriverProtocol} by hand, for tests of what a driver does with what a
 * client sends. Every wait has a deadline ({@link #WAIT}): a driver that stops answering fails the test instead of
 * hanging it. Tests only.
 */
final class RawDriverClient implements AutoCloseable
{
    static final Duration WAIT = Duration.ofSeconds(10);

    final SocketChannel channel;
    private final Selector selector;
    private final ByteBuffer in = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);

    RawDriverClient(final DriverServer driver) throws IOException
    {
        channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(driver.directory().resolve(DriverProtocol.SOCKET_FILE)));
        channel.configureBlocking(false);
        selector = Selector.open();
    }

    static ByteBuffer body(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    void write(final byte type, final int socket, final ByteBuffer body) throws IOException
    {
        final int length = DriverProtocol.HEADER + body.remaining();
        final ByteBuffer frame = ByteBuffer.allocate(length);
        DriverProtocol.putHeader(new UnsafeBuffer(frame), 0, length, type, socket);
        frame.position(DriverProtocol.HEADER);
        frame.put(body).flip();
        write(frame);
    }

    /** Writes all of {@code bytes}, waiting for room (the driver reads) until the deadline. */
    void write(final ByteBuffer bytes) throws IOException
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (bytes.hasRemaining())
        {
            if (channel.write(bytes) == 0)
            {
                await(SelectionKey.OP_WRITE, deadline, "room to write");
            }
        }
    }

    void hello() throws IOException
    {
        write(DriverProtocol.HELLO, 0, body(16).putInt(DriverProtocol.VERSION).putInt(0).putLong(4242).flip());
        assertEquals(DriverProtocol.WELCOME, readFrame().get(DriverProtocol.TYPE_OFFSET));
    }

    /** Opens socket 1 and binds it; returns the driver's result. */
    int bind(final InetSocketAddress local) throws IOException
    {
        write(DriverProtocol.OPEN, 1, body(8).putInt(1 << 20).putInt(1 << 20).flip());
        final ByteBuffer bind = body(8 + DriverProtocol.ADDRESS).putInt(7).putInt(TransportType.AUTO.ordinal());
        DriverProtocol.putAddress(new UnsafeBuffer(bind), 8, local);
        write(DriverProtocol.BIND, 1, bind.position(bind.capacity()).flip());
        final ByteBuffer reply = readFrame();
        assertEquals(DriverProtocol.REPLY, reply.get(DriverProtocol.TYPE_OFFSET));
        assertEquals(7, reply.getInt(DriverProtocol.HEADER), "the call's number");
        return reply.getInt(DriverProtocol.HEADER + 4);
    }

    /**
     * @return the next frame from the driver.
     * @throws IOException if the driver closed the connection (or reset it) first.
     */
    ByteBuffer readFrame() throws IOException
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (in.position() < 4 || in.position() < in.getInt(0))
        {
            readSome(deadline);
        }
        final int length = in.getInt(0);
        final ByteBuffer frame = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        frame.put(0, in, 0, length);
        in.limit(in.position()).position(length);
        in.compact();
        return frame;
    }

    /** Reads and drops what the driver sends until it closes the connection (or resets it). */
    void readToEnd() throws IOException
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        try
        {
            while (true)
            {
                readSome(deadline);
                in.clear();
            }
        }
        catch (final IOException ended)
        {
            // the end this waits for
        }
    }

    private void readSome(final long deadline) throws IOException
    {
        final int read = channel.read(in);
        if (read < 0)
        {
            throw new IOException("closed by the driver");
        }
        if (read == 0)
        {
            await(SelectionKey.OP_READ, deadline, "the driver to send or close");
        }
    }

    private void await(final int op, final long deadline, final String what) throws IOException
    {
        final long left = deadline - System.nanoTime();
        if (left <= 0)
        {
            throw new AssertionError("timed out after " + WAIT + " waiting for " + what);
        }
        final SelectionKey key = channel.register(selector, op);
        selector.select(Math.max(1, left / 1_000_000));
        selector.selectedKeys().clear();
        key.interestOps(0);
    }

    @Override
    public void close() throws IOException
    {
        selector.close();
        channel.close();
    }
}
