package org.rds4j.transport.tcp;

import com.sun.jna.Native;
import org.agrona.BufferUtil;
import org.agrona.IoUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Shared memory that a {@link TcpPath} stages frames in so that the socket can send them with
 * {@code sendfile}: the kernel then takes references to the ring's pages instead of copying the bytes into
 * buffers of its own. On loopback that copy is the sender's biggest cost, and a slow one: the pages it writes
 * were just read by the receiving CPU.
 * <p>
 * The price is that the bytes must stay as they are until the peer has read them, which TCP cannot tell (its
 * acks say a byte reached the peer's socket, not that it was read, and on loopback the receiver reads our pages
 * themselves). RDS acks can: a peer that acks a frame has read the stream up to that frame's end. So the ring is
 * a FIFO of written regions, and a region becomes free only once a sequenced frame that ended after it is
 * acked ({@link #release}).
 * <p>
 * Positions grow for the life of the ring; position {@code p} is byte {@code p % capacity} of the memory, which
 * is a deleted file on a tmpfs (so {@code sendfile} can read it). Agent thread only.
 * <p>
 * {@code sendfile} is called through libc ({@link LibC}) on the file's and the socket's descriptors, found once:
 * the JDK's {@code FileChannel.transferTo} asks the file's size first, a second system call for each write (an
 * {@code fstat}, 2 % of the samples of a source streaming 64-byte messages). Where libc cannot be called, or the
 * socket's descriptor not found, the ring sends with {@code transferTo}.
 */
final class TcpSendRing implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpSendRing.class);
    /** Where the ring's file lives: tmpfs, so its pages are memory that {@code sendfile} can lend. */
    static final Path DIRECTORY = Path.of("/dev/shm");
    /** Regions written and not yet free; a stage that finds the table full is written by copy instead. */
    private static final int MAX_REGIONS = 256;
    private static volatile boolean unavailableLogged;
    /** {@link #socketDescriptor} before the first send. */
    private static final int UNRESOLVED = -2;
    /** A descriptor that libc cannot be given: send with {@code transferTo}. */
    private static final int NONE = -1;

    private final FileChannel file;
    private final MappedByteBuffer memory;
    private final int capacity;
    private final ByteBuffer view;
    /** The file, opened for reading through libc, or {@link #NONE}. */
    private final int fileDescriptor;
    /** The socket the ring's path writes to, found at the first send; {@link #NONE} if not found. */
    private int socketDescriptor = UNRESOLVED;
    /** The {@code off_t} that {@code sendfile} reads and moves. */
    private final UnsafeBuffer sendOffset = new UnsafeBuffer(BufferUtil.allocateDirectAligned(Long.BYTES, Long.BYTES));

    /** Oldest position the peer may not have read: the start of the first unreleased region. */
    private long head;
    /** Next position to stage at. */
    private long tail;
    private final long[] regionEnds = new long[MAX_REGIONS];
    /** Per region: the sequence of the first frame that ended after it; set for all but the {@link #unknownRegions}. */
    private final long[] regionReleasedBy = new long[MAX_REGIONS];
    private int firstRegion;
    private int regions;
    /** Regions (the newest) still waiting for a sequenced frame to end after them. */
    private int unknownRegions;

    private TcpSendRing(final FileChannel file, final MappedByteBuffer memory, final int capacity, final int fileDescriptor)
    {
        this.fileDescriptor = fileDescriptor;
        this.file = file;
        this.memory = memory;
        this.capacity = capacity;
        this.view = memory.duplicate();
    }

    /**
     * @param capacity bytes of shared memory.
     * @return a new ring in {@link #DIRECTORY}, or null if the shared memory cannot be had (logged once per
     *         process); the path then copies as before.
     */
    static TcpSendRing open(final int capacity)
    {
        return open(DIRECTORY, capacity, true);
    }

    /**
     * @param directory where the ring's file is created (and at once deleted).
     * @param capacity  bytes.
     * @param viaLibC   send through libc where it can be called; false: always with {@code transferTo} (tests).
     * @return a new ring, or null if the file cannot be created, sized or mapped (logged once per process).
     */
    static TcpSendRing open(final Path directory, final int capacity, final boolean viaLibC)
    {
        Path path = null;
        try
        {
            path = Files.createTempFile(directory, "rds4j-tcp-", ".ring");
            final FileChannel file = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            try
            {
                // written through, so that tmpfs gives the file all its pages now: a mapped page that a full
                // tmpfs could not back would be a bus error in the agent, where this is an exception here
                IoUtil.fill(file, 0, capacity, (byte)0);
                final MappedByteBuffer memory = file.map(FileChannel.MapMode.READ_WRITE, 0, capacity);
                return new TcpSendRing(file, memory, capacity, viaLibC ? openForSendfile(path) : NONE);
            }
            catch (final IOException | RuntimeException ex)
            {
                file.close();
                throw ex;
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            if (!unavailableLogged)
            {
                unavailableLogged = true;
                LOG.warn("no shared memory for zero-copy TCP sends in {} ({}): frames are copied into the socket",
                    directory, ex.toString());
            }
            return null;
        }
        finally
        {
            if (path != null)
            {
                try
                {
                    Files.deleteIfExists(path);
                }
                catch (final IOException ignored)
                {
                    // the file was created by us in a temporary directory; a leftover is harmless
                }
            }
        }
    }

    /** @return the file opened read-only through libc (before it is deleted), or {@link #NONE} if libc cannot be had. */
    private static int openForSendfile(final Path path)
    {
        try
        {
            final int fd = LibC.open(path.toString(), LibC.O_RDONLY_CLOEXEC);
            if (fd < 0)
            {
                LOG.debug("open({}) for sendfile failed: errno {}; the TCP send ring uses transferTo", path,
                    Native.getLastError());
            }
            return Math.max(fd, NONE);
        }
        catch (final UnsatisfiedLinkError | NoClassDefFoundError ex)
        {
            LOG.debug("libc cannot be called ({}); the TCP send ring uses transferTo", ex.toString());
            return NONE;
        }
    }

    /**
     * Frees every region that a frame the peer has read ended after.
     *
     * @param sequenceRead {@link org.rds4j.core.spi.ConnectionPath#sequenceReadOnPath()}.
     */
    void release(final long sequenceRead)
    {
        while (regions > unknownRegions && regionReleasedBy[firstRegion] <= sequenceRead)
        {
            head = regionEnds[firstRegion];
            firstRegion = (firstRegion + 1) % MAX_REGIONS;
            regions--;
        }
    }

    /**
     * Claims contiguous free memory for the next region, skipping the end of the memory if too little of it is
     * left there.
     *
     * @param minBytes the least that is worth claiming.
     * @param maxBytes the most wanted.
     * @return the ring's buffer framing the claimed bytes (write mode), or null if there are fewer than
     *         {@code minBytes} or the region table is full. Valid until the next claim or {@link #close}.
     */
    ByteBuffer claim(final int minBytes, final int maxBytes)
    {
        if (regions == MAX_REGIONS)
        {
            return null;
        }
        if (regions == 0)
        {
            head = tail; // all read; what lies between is only a skipped end of the memory
        }
        long start = tail;
        int offset = (int)(start % capacity);
        if (capacity - offset < minBytes)
        {
            start += capacity - offset;
            offset = 0;
        }
        final long free = capacity - (start - head);
        final int length = (int)Math.min(Math.min(free, capacity - offset), maxBytes);
        if (length < minBytes)
        {
            return null;
        }
        tail = start;
        view.limit(offset + length).position(offset);
        return view;
    }

    /** @return the position of the last claim's first byte: the claimed buffer's index {@code i} is position {@code claimStart() + i - claimOffset}. */
    long claimStart()
    {
        return tail;
    }

    /**
     * Copies bytes written at a position the ring has not freed (a frame appended to it).
     *
     * @param position where they start; they do not wrap the memory's end.
     * @param length   how many.
     * @param dst      where to.
     * @param offset   where in {@code dst}.
     */
    void read(final long position, final int length, final MutableDirectBuffer dst, final int offset)
    {
        dst.putBytes(offset, memory, (int)(position % capacity), length);
    }

    /**
     * The claimed buffer (write mode) was filled and will be sent with {@link #send}: its bytes from the claim's
     * start to its position become a region, and the buffer frames them (read mode). A claim not committed
     * leaves the ring as it was: its memory is claimed again next time.
     */
    void commit()
    {
        final int offset = (int)(tail % capacity);
        tail += view.position() - offset;
        regionEnds[(firstRegion + regions) % MAX_REGIONS] = tail;
        regions++;
        unknownRegions++;
        view.limit(view.position()).position(offset);
    }

    /**
     * A sequenced frame's last byte was staged after every committed region: it releases those still waiting.
     *
     * @param sequence the frame's sequence number.
     */
    void onFrameEnded(final long sequence)
    {
        for (int i = regions - unknownRegions; i < regions; i++)
        {
            regionReleasedBy[(firstRegion + i) % MAX_REGIONS] = sequence;
        }
        unknownRegions = 0;
    }

    /** @return true while a committed region waits for a sequenced frame to end after it. */
    boolean awaitsFrameEnd()
    {
        return unknownRegions > 0;
    }

    /**
     * Sends the committed region's unsent bytes: from the buffer's position to its limit.
     *
     * @return bytes the socket took; the buffer's position moves past them.
     */
    long send(final SocketChannel channel) throws IOException
    {
        if (socketDescriptor == UNRESOLVED)
        {
            socketDescriptor = findSocket(channel);
        }
        final long sent = socketDescriptor == NONE ?
            file.transferTo(view.position(), view.remaining(), channel) : sendfile();
        view.position(view.position() + (int)sent);
        return sent;
    }

    private long sendfile() throws IOException
    {
        sendOffset.putLong(0, view.position());
        final long sent = LibC.sendfile(socketDescriptor, fileDescriptor, sendOffset.addressOffset(), view.remaining());
        if (sent >= 0)
        {
            return sent;
        }
        final int errno = Native.getLastError();
        if (errno == LibC.EAGAIN || errno == LibC.EINTR)
        {
            return 0; // the caller waits for room, as after a write the socket took none of
        }
        throw new IOException("sendfile to a TCP socket failed: errno " + errno);
    }

    private int findSocket(final SocketChannel channel)
    {
        if (fileDescriptor == NONE)
        {
            return NONE;
        }
        try
        {
            return TcpUnackedBytes.descriptorOf(channel);
        }
        catch (final IOException ex)
        {
            LOG.debug("no descriptor for {} ({}); the TCP send ring uses transferTo", channel, ex.toString());
            return NONE;
        }
    }

    /** @return true once the ring sends through libc (tests): it has sent, and found both descriptors. */
    boolean sendsViaLibC()
    {
        return socketDescriptor >= 0;
    }

    /** Releases the memory. The kernel keeps the pages a socket still holds; nothing may use the ring after. */
    @Override
    public void close()
    {
        if (fileDescriptor != NONE)
        {
            LibC.close(fileDescriptor);
        }
        try
        {
            file.close();
        }
        catch (final IOException ex)
        {
            LOG.debug("closing a TCP send ring: {}", ex.toString());
        }
        IoUtil.unmap(memory);
    }
}
