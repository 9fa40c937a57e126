package org.rds4j.core;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.CongestionMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A driver's congestion maps in a file its clients map read-only, so that a client's send tests the destination's
 * bit itself, as an embedded socket does, and says {@code ENOBUFS} at once.
 * <p>
 * Layout: a 64-byte header (int at 0: the slots in use, written after a slot is filled), then fixed slots of
 * {@value #SLOT_BYTES} bytes: an int address length at 0 (0: free; 4 or 16, written last), the address at 8, the
 * map's {@value CongestionMap#BYTES} bytes at 64. Slots are taken in order and never given back: a driver learns
 * a bounded set of addresses ({@code maxPeers} and its local ones). An address past the last slot gets a map of
 * the driver's own memory, which clients do not see (they find no map: not congested), with one warning.
 * <p>
 * Threads: the driver takes slots under this object's lock (the agent learns peers, application threads bind
 * local addresses); the agent alone writes the bits ({@link CongestionMap}); clients read.
 */
final class CongestionBoard implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(CongestionBoard.class);
    static final String FILE = "congestion";
    private static final int HEADER_BYTES = 64;
    private static final int USED_OFFSET = 0;
    private static final int ADDRESS_LENGTH_OFFSET = 0;
    private static final int ADDRESS_OFFSET = 8;
    private static final int MAP_OFFSET = 64;
    static final int SLOT_BYTES = MAP_OFFSET + CongestionMap.BYTES;

    private final MappedByteBuffer mapped;
    private final UnsafeBuffer memory;
    private final int slots;
    private final boolean writer;
    /** Client: the maps found so far; the driver: the maps it made. */
    private final ConcurrentHashMap<InetAddress, CongestionMap> known = new ConcurrentHashMap<>();
    /** Client: the slots in use when it last looked, so that an address not found is looked for again only once more are. */
    private volatile int scanned;
    private boolean warnedFull;

    private CongestionBoard(final MappedByteBuffer mapped, final boolean writer)
    {
        this.mapped = mapped;
        this.memory = new UnsafeBuffer(mapped);
        this.slots = (memory.capacity() - HEADER_BYTES) / SLOT_BYTES;
        this.writer = writer;
    }

    /**
     * Driver: makes the board file (replacing one a dead driver left).
     *
     * @param directory the driver's directory.
     * @param slots     how many addresses it can hold.
     * @param group     whether the driver's group may read it too.
     * @return the board.
     * @throws IOException if the file cannot be made.
     */
    static CongestionBoard create(final Path directory, final int slots, final boolean group) throws IOException
    {
        final Path file = directory.resolve(FILE);
        final long bytes = HEADER_BYTES + (long)slots * SLOT_BYTES;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            DriverFiles.restrict(file, group);
            // written through, as SharedMemory does: a full tmpfs fails here, not as a bus error later
            final java.nio.ByteBuffer zeros = java.nio.ByteBuffer.allocate(64 << 10);
            for (long position = 0; position < bytes; )
            {
                zeros.clear().limit((int)Math.min(zeros.capacity(), bytes - position));
                position += channel.write(zeros, position);
            }
            return new CongestionBoard(channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes), true);
        }
    }

    /**
     * Client: maps a driver's board, read-only.
     *
     * @param directory the driver's directory.
     * @return the board.
     * @throws IOException if it cannot be mapped.
     */
    static CongestionBoard open(final Path directory) throws IOException
    {
        try (FileChannel channel = FileChannel.open(directory.resolve(FILE), StandardOpenOption.READ))
        {
            return new CongestionBoard(channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size()), false);
        }
    }

    /**
     * Driver: the map of an address, in a slot of the board while one is free. Used as the stack's
     * {@link StackOptions#congestionMaps} factory, which is called once per address.
     *
     * @param address a local or remote address.
     * @return its map.
     */
    synchronized CongestionMap create(final InetAddress address)
    {
        final int used = memory.getInt(USED_OFFSET);
        if (used == slots)
        {
            if (!warnedFull)
            {
                warnedFull = true;
                LOG.warn("the driver's congestion board is full ({} addresses): clients do not see the congestion "
                    + "of {} and later addresses", slots, address.getHostAddress());
            }
            return new CongestionMap();
        }
        final int slot = HEADER_BYTES + used * SLOT_BYTES;
        final byte[] bytes = address.getAddress();
        memory.putBytes(slot + ADDRESS_OFFSET, bytes);
        memory.putIntVolatile(slot + ADDRESS_LENGTH_OFFSET, bytes.length);
        memory.putIntVolatile(USED_OFFSET, used + 1);
        final CongestionMap map = new CongestionMap(new UnsafeBuffer(memory, slot + MAP_OFFSET, CongestionMap.BYTES));
        known.put(address, map);
        return map;
    }

    /**
     * Client, any thread: the map the driver keeps for an address.
     *
     * @param address a destination's address.
     * @return its map, or null if the driver has none (it has never sent to or heard from it: not congested).
     */
    CongestionMap find(final InetAddress address)
    {
        final CongestionMap map = known.get(address);
        if (map != null || writer)
        {
            return map;
        }
        final int used = Math.min(memory.getIntVolatile(USED_OFFSET), slots);
        return used == scanned ? null : scan(address, used);
    }

    private synchronized CongestionMap scan(final InetAddress wanted, final int used)
    {
        CongestionMap found = known.get(wanted);
        for (int i = 0; i < used; i++)
        {
            final int slot = HEADER_BYTES + i * SLOT_BYTES;
            final int length = memory.getIntVolatile(slot + ADDRESS_LENGTH_OFFSET);
            if (length != 4 && length != 16)
            {
                continue;
            }
            final byte[] bytes = new byte[length];
            memory.getBytes(slot + ADDRESS_OFFSET, bytes);
            try
            {
                final InetAddress address = InetAddress.getByAddress(bytes);
                if (!known.containsKey(address))
                {
                    final CongestionMap map = new CongestionMap(
                        new UnsafeBuffer(memory, slot + MAP_OFFSET, CongestionMap.BYTES));
                    known.put(address, map);
                    if (Arrays.equals(bytes, wanted.getAddress()))
                    {
                        found = map;
                    }
                }
            }
            catch (final UnknownHostException ex)
            {
                throw new IllegalStateException("unreachable: the length is 4 or 16", ex);
            }
        }
        scanned = used;
        return found;
    }

    /**
     * Driver, once its stack is closed: unmaps the board. A client never unmaps its view (a sending thread may be
     * reading it): the garbage collector does, once the client's stack is gone.
     */
    @Override
    public void close()
    {
        if (writer)
        {
            IoUtil.unmap(mapped);
        }
    }
}
