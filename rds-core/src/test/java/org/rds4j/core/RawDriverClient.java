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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A driver's client that speaks {@link DriverProtocol} by hand, for tests of what a driver does with what a
 * client sends: after its HELLO it maps its rings, and numbers the frames it writes, on the connection after a SEQ
 * frame ({@link #write(byte, int, ByteBuffer)}) or into the ring ({@link #writeToRing}); raw bytes go as they are. It
 * reads the driver's frames in their order from the ring to it and the connection ({@link #readFrame}).
 * Every wait has a deadline ({@link #WAIT}): a driver that stops answering fails the test instead of hanging it.
 * Tests only.
 */
final class RawDriverClient implements AutoCloseable
{
    static final Duration WAIT = Duration.ofSeconds(10);

    final SocketChannel channel;
    private final Path directory;
    private final Selector selector;
    private final ByteBuffer in = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    /** The ring the driver made for this client, once welcomed. */
    DriverRing ring;
    /** The same memory again, for {@link #scribble}. */
    private ByteBuffer scribbler;
    /** The number of the last frame written. */
    int number;
    /** The ring of the driver's frames to this client, once welcomed; and the same memory for {@link #scribbleDown}. */
    DriverRing down;
    private ByteBuffer downScribbler;
    /** The number of the driver's next batch of frames, and the frames of batches taken, not yet read. */
    private int nextFromDriver = 1;
    private final ArrayDeque<ByteBuffer> pending = new ArrayDeque<>();

    RawDriverClient(final DriverServer driver) throws IOException
    {
        directory = driver.directory();
        channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(driver.directory().resolve(DriverProtocol.SOCKET_FILE)));
        channel.configureBlocking(false);
        selector = Selector.open();
    }

    static ByteBuffer body(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    static ByteBuffer frame(final byte type, final int socket, final ByteBuffer body)
    {
        final int length = DriverProtocol.HEADER + body.remaining();
        final ByteBuffer frame = ByteBuffer.allocate(length);
        DriverProtocol.putHeader(new UnsafeBuffer(frame), 0, length, type, socket);
        frame.position(DriverProtocol.HEADER);
        frame.put(body).flip();
        return frame;
    }

    /** The next frame on the connection: after its SEQ once welcomed, else (a frame before HELLO) as it is. */
    void write(final byte type, final int socket, final ByteBuffer body) throws IOException
    {
        final ByteBuffer frame = frame(type, socket, body);
        if (ring != null)
        {
            writeSeq(++number);
        }
        write(frame);
    }

    /** A SEQ frame: the next frame on the connection is frame {@code n}. */
    void writeSeq(final int n) throws IOException
    {
        write(frame(DriverProtocol.SEQ, 0, body(8).putInt(n).putInt(0).flip()));
    }

    /** The next frame, into the ring as record {@code number}; then a DOORBELL (a driver awake ignores it). */
    void writeToRing(final byte type, final int socket, final ByteBuffer body) throws IOException
    {
        writeToRing(++number, frame(type, socket, body));
    }

    /** Writes bytes over the ring's memory, records or trailer, at {@code offset}, as a client gone wrong might. */
    void scribble(final int offset, final ByteBuffer bytes)
    {
        scribbler.put(offset, bytes, bytes.position(), bytes.remaining());
    }

    /** Writes bytes over the memory of the ring to the client at {@code offset}. */
    void scribbleDown(final int offset, final ByteBuffer bytes)
    {
        downScribbler.put(offset, bytes, bytes.position(), bytes.remaining());
    }

    /** Bytes into the ring as record {@code n}, then a DOORBELL. */
    void writeToRing(final int n, final ByteBuffer bytes) throws IOException
    {
        final UnsafeBuffer record = new UnsafeBuffer(bytes, bytes.position(), bytes.remaining());
        assertTrue(ring.offer(n, record, bytes.remaining(), null), "room in the ring");
        ring.takeDoorbell();
        write(frame(DriverProtocol.DOORBELL, 0, body(0)));
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
        final ByteBuffer welcome = readFrame();
        assertEquals(DriverProtocol.WELCOME, welcome.get(DriverProtocol.TYPE_OFFSET));
        final byte[] name = new byte[welcome.getInt(DriverProtocol.HEADER + 4)];
        welcome.get(DriverProtocol.HEADER + DriverProtocol.WELCOME_FIXED, name);
        final byte[] downName = new byte[welcome.getInt(DriverProtocol.HEADER + 28)];
        welcome.get(DriverProtocol.HEADER + DriverProtocol.WELCOME_FIXED + name.length, downName);
        final Path file = directory.resolve(new String(name, StandardCharsets.UTF_8));
        ring = DriverRing.attach(file, DriverRing.CAPACITY);
        scribbler = SharedMemory.mapExisting(file, DriverRing.fileBytes(DriverRing.CAPACITY));
        Files.delete(file);
        final Path downFile = directory.resolve(new String(downName, StandardCharsets.UTF_8));
        down = DriverRing.attach(downFile, DriverRing.DOWN_CAPACITY);
        downScribbler = SharedMemory.mapExisting(downFile, DriverRing.fileBytes(DriverRing.DOWN_CAPACITY));
        Files.delete(downFile);
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
     * @return the next frame from the driver: before the WELCOME the connection's next, after it the next by number,
     *         from the ring or the connection.
     * @throws IOException if the driver closed the connection (or reset it) first.
     */
    ByteBuffer readFrame() throws IOException
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (true)
        {
            final ByteBuffer frame = down == null ? nextOnConnection() : nextInTurn();
            if (frame != null)
            {
                return frame;
            }
            if (down != null)
            {
                down.sleeping(true); // then a last look, as the stack's reader: a frame after it rings
                if (!pending.isEmpty() || down.nextNumber() == nextFromDriver)
                {
                    down.sleeping(false);
                    continue;
                }
            }
            readSome(deadline);
            if (down != null)
            {
                down.sleeping(false);
            }
        }
    }

    /** @return the next frame of the batches in turn, from the ring or the connection; or null. */
    private ByteBuffer nextInTurn()
    {
        if (pending.isEmpty())
        {
            down.read((type, buffer, index, length) ->
            {
                if (type != nextFromDriver)
                {
                    return false;
                }
                final ByteBuffer batch = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
                buffer.getBytes(index, batch, 0, length);
                takeBatch(batch);
                return true;
            }, 1);
        }
        // the connection: DOORBELLs are dropped, a SEQ is followed by the batch of its number
        while (pending.isEmpty() && in.position() >= DriverProtocol.HEADER && in.position() >= in.getInt(0))
        {
            final byte type = in.get(DriverProtocol.TYPE_OFFSET);
            if (type == DriverProtocol.DOORBELL)
            {
                nextOnConnection();
                continue;
            }
            assertEquals(DriverProtocol.SEQ, type, "a batch on the connection after its SEQ");
            final int seq = in.getInt(0);
            final int length = in.getInt(DriverProtocol.HEADER + 4);
            if (in.getInt(DriverProtocol.HEADER) != nextFromDriver || in.position() < seq + length)
            {
                break;
            }
            nextOnConnection();
            final ByteBuffer batch = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
            batch.put(0, in, 0, length);
            in.limit(in.position()).position(length);
            in.compact();
            takeBatch(batch);
        }
        return pending.poll();
    }

    /** Queues the frames of the batch in turn, and moves the turn on. */
    private void takeBatch(final ByteBuffer batch)
    {
        for (int at = 0; at < batch.capacity(); at += batch.getInt(at))
        {
            final ByteBuffer frame = ByteBuffer.allocate(batch.getInt(at)).order(ByteOrder.LITTLE_ENDIAN);
            frame.put(0, batch, at, frame.capacity());
            pending.add(frame);
        }
        nextFromDriver = DriverProtocol.nextFrameNumber(nextFromDriver);
    }

    /** @return the whole frame at the start of the connection's input, taken out of it; or null. */
    private ByteBuffer nextOnConnection()
    {
        if (in.position() < 4 || in.position() < in.getInt(0))
        {
            return null;
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
        if (ring != null)
        {
            ring.free();
            ring = null;
            SharedMemory.free(scribbler);
            down.free();
            down = null;
            SharedMemory.free(downScribbler);
        }
    }
}
