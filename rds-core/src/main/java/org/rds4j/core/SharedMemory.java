package org.rds4j.core;

import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory for the sockets' rings that another process could map: a file of the stack's info directory
 * ({@code /dev/shm} by default), mapped and unlinked at once, so that no process death leaves it behind; or a file
 * that a driver makes for one of its clients to map ({@link #mapNew}, {@link #mapExisting}). Where the directory is not memory
 * (not tmpfs: a mapped file on a disk would be written back to it) or cannot be used, the memory is direct memory
 * of this process instead, with one warning: nothing outside the process needs it yet.
 */
final class SharedMemory
{
    private static final Logger LOG = LoggerFactory.getLogger(SharedMemory.class);
    private static final AtomicLong FILES = new AtomicLong();
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private SharedMemory()
    {
    }

    /**
     * @param directory where the file is made (and at once unlinked).
     * @param kind      a short word for the file's name: {@code rx}, {@code tx}.
     * @param bytes     its size; the memory is zeroed.
     * @return the memory: a tmpfs file of the directory, mapped and unlinked, else direct memory.
     */
    static ByteBuffer map(final Path directory, final String kind, final int bytes)
    {
        final Path file = directory.resolve(
            "." + kind + "-" + ProcessHandle.current().pid() + "-" + FILES.incrementAndGet() + ".ring");
        try
        {
            Files.createDirectories(directory);
            final String type = Files.getFileStore(directory).type();
            if (!"tmpfs".equals(type))
            {
                warnOnce(directory + " is " + type + ", not memory");
                return ByteBuffer.allocateDirect(bytes);
            }
            try
            {
                return mapNew(file, bytes);
            }
            finally
            {
                Files.deleteIfExists(file);
            }
        }
        catch (final IOException | UnsupportedOperationException | SecurityException ex)
        {
            warnOnce("cannot map a file in " + directory + ": " + ex);
            return ByteBuffer.allocateDirect(bytes);
        }
    }

    /**
     * Makes a file of {@code bytes} zeros, which must not exist yet, and maps it; the file stays for another process
     * to map (a driver's ring for a client), and whoever made it deletes it.
     *
     * @param file  the file.
     * @param bytes its size.
     * @return the mapped memory.
     * @throws IOException if the file exists already, or cannot be made, written or mapped.
     */
    static ByteBuffer mapNew(final Path file, final int bytes) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE))
        {
            allocate(channel, bytes);
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
        }
    }

    /**
     * Maps a file another process made with {@link #mapNew}.
     *
     * @param file  the file.
     * @param bytes the size it must have.
     * @return the mapped memory.
     * @throws IOException if the file cannot be mapped or has another size.
     */
    static ByteBuffer mapExisting(final Path file, final int bytes) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            if (channel.size() != bytes)
            {
                throw new IOException(file + " holds " + channel.size() + " bytes, not " + bytes);
            }
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
        }
    }

    /**
     * Writes the file through once so that tmpfs backs every page now: a full {@code /dev/shm} is then an
     * exception here, and the fall-back to direct memory, where a page it could not back would later be a bus
     * error in whichever thread first touched it.
     */
    private static void allocate(final FileChannel channel, final int bytes) throws IOException
    {
        final ByteBuffer zeros = ByteBuffer.allocate(Math.min(bytes, 64 << 10));
        long position = 0;
        while (position < bytes)
        {
            zeros.clear().limit((int)Math.min(zeros.capacity(), bytes - position));
            position += channel.write(zeros, position);
        }
    }

    /** Releases memory from {@link #map}. The caller makes sure no thread uses it any more. */
    static void free(final ByteBuffer memory)
    {
        BufferUtil.free(memory);
    }

    private static void warnOnce(final String why)
    {
        if (WARNED.compareAndSet(false, true))
        {
            LOG.warn("socket rings are in this process's direct memory, not shared memory: {}", why);
        }
    }
}
