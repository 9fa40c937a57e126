package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The writer side of a stack's info file, {@code <dir>/<pid>-<name>-<n>.rds4j}: a memory-mapped file that
 * tools ({@code rds info}, through {@link StackInfoReader}) read from outside the process, as Aeron's
 * {@code cnc.dat}. The stack creates it when it opens and deletes it when it closes.
 * <p>
 * Layout (version {@value #VERSION}; every value in the platform's native byte order, little-endian on
 * x86-64 and aarch64; the file is only read on the host that wrote it):
 * <pre>
 *   0  header, {@value #HEADER_LENGTH} bytes:
 *        0 magic long "RDS4JINF" (ASCII bytes; written last, with release semantics)
 *        8 layout version int       12 closed int (1 once the stack has closed)
 *       16 pid long                 24 start time long (epoch ms)
 *       32 heartbeat long (epoch ms, written with each snapshot)
 *       40 counters metadata offset int, 44 its length int
 *       48 counters values offset int,   52 its length int
 *       56 snapshot offset int,          60 its length int
 *       64 stack name length int,        68 stack name, UTF-8, at most {@value #MAX_NAME_BYTES} bytes
 *  256  counters metadata (agrona CountersManager labels), {@link StackCounters#METADATA_BYTES} bytes
 *   ..  counters values (agrona CountersManager values), {@link StackCounters#VALUES_BYTES} bytes
 *   ..  snapshot, {@value #SNAPSHOT_LENGTH} bytes, written by the agent at most every 100 ms:
 *        0 seqlock version long (odd while the agent writes, even when done; 0 before the first snapshot)
 *        8 snapshot time long (epoch ms)
 *       16 connections recorded int   20 connections the stack has int (more than recorded: truncated)
 *       24 sockets recorded int       28 sockets the stack has int
 *       64 {@value #MAX_CONNECTIONS} connection records of {@value #CONNECTION_RECORD_LENGTH} bytes:
 *            0 local address (16 bytes: 4 for IPv4, then zeros)   16 remote address (16 bytes)
 *           32 next tx sequence long   40 next rx sequence long   48 state int (ConnectionState ordinal)
 *           52 unacked messages int    56 credits int (0 but on IB)
 *           60 local address length byte (4 or 16)   61 remote address length byte
 *           64 transport name, 8 bytes ASCII, zero padded
 *       then {@value #MAX_SOCKETS} socket records of {@value #SOCKET_RECORD_LENGTH} bytes:
 *            0 local address (16 bytes)   16 send queued bytes long   24 receive queued bytes long
 *           32 port int   36 send buffer bytes int   40 receive buffer bytes int
 *           44 address length byte   45 congested byte (1 = its port is marked congested)
 *           48 transport name, 8 bytes ASCII, zero padded
 * </pre>
 * Threads: created and closed by the thread that opens and closes the stack; {@link #writeSnapshot} runs on
 * the agent thread only and allocates nothing (after an IPv6 address's first snapshot).
 */
final class StackInfoFile implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(StackInfoFile.class);

    /** File names end with this. */
    static final String SUFFIX = ".rds4j";
    /** "RDS4JINF" as ASCII bytes in the file, read as a native-order long. */
    static final long MAGIC = ByteBuffer.wrap("RDS4JINF".getBytes(StandardCharsets.US_ASCII)).order(ByteOrder.nativeOrder()).getLong();
    /** Layout version; a reader refuses other versions. */
    static final int VERSION = 1;

    static final int HEADER_LENGTH = 256;
    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 8;
    static final int CLOSED_OFFSET = 12;
    static final int PID_OFFSET = 16;
    static final int START_TIME_OFFSET = 24;
    static final int HEARTBEAT_OFFSET = 32;
    static final int METADATA_REGION_OFFSET = 40;
    static final int VALUES_REGION_OFFSET = 48;
    static final int SNAPSHOT_REGION_OFFSET = 56;
    static final int NAME_LENGTH_OFFSET = 64;
    static final int NAME_OFFSET = 68;
    static final int MAX_NAME_BYTES = 64;

    static final int SNAPSHOT_LENGTH = 256 * 1024;
    static final int SNAPSHOT_VERSION_OFFSET = 0;
    static final int SNAPSHOT_TIME_OFFSET = 8;
    static final int CONNECTIONS_RECORDED_OFFSET = 16;
    static final int CONNECTIONS_TOTAL_OFFSET = 20;
    static final int SOCKETS_RECORDED_OFFSET = 24;
    static final int SOCKETS_TOTAL_OFFSET = 28;
    static final int CONNECTIONS_OFFSET = 64;

    static final int ADDRESS_BYTES = 16;
    static final int TRANSPORT_NAME_BYTES = 8;

    static final int CONNECTION_RECORD_LENGTH = 80;
    static final int CONN_LOCAL = 0;
    static final int CONN_REMOTE = 16;
    static final int CONN_NEXT_TX = 32;
    static final int CONN_NEXT_RX = 40;
    static final int CONN_STATE = 48;
    static final int CONN_UNACKED = 52;
    static final int CONN_CREDITS = 56;
    static final int CONN_LOCAL_LENGTH = 60;
    static final int CONN_REMOTE_LENGTH = 61;
    static final int CONN_TRANSPORT = 64;
    static final int MAX_CONNECTIONS = 1600;

    static final int SOCKET_RECORD_LENGTH = 56;
    static final int SOCK_ADDRESS = 0;
    static final int SOCK_SEND_QUEUED = 16;
    static final int SOCK_RECEIVE_QUEUED = 24;
    static final int SOCK_PORT = 32;
    static final int SOCK_SEND_BUFFER = 36;
    static final int SOCK_RECEIVE_BUFFER = 40;
    static final int SOCK_ADDRESS_LENGTH = 44;
    static final int SOCK_CONGESTED = 45;
    static final int SOCK_TRANSPORT = 48;
    static final int SOCKETS_OFFSET = CONNECTIONS_OFFSET + MAX_CONNECTIONS * CONNECTION_RECORD_LENGTH;
    static final int MAX_SOCKETS = (SNAPSHOT_LENGTH - SOCKETS_OFFSET) / SOCKET_RECORD_LENGTH;

    static final int METADATA_OFFSET = HEADER_LENGTH;
    static final int VALUES_OFFSET = METADATA_OFFSET + StackCounters.METADATA_BYTES;
    static final int SNAPSHOT_OFFSET = VALUES_OFFSET + StackCounters.VALUES_BYTES;
    static final int FILE_LENGTH = SNAPSHOT_OFFSET + SNAPSHOT_LENGTH;

    /** How often the agent writes a snapshot, at most. */
    static final long SNAPSHOT_INTERVAL_NS = 100_000_000L;

    /** Distinguishes several stacks of one name in one JVM. */
    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    /** Files of stacks not yet closed, deleted at JVM exit (System.exit, SIGTERM) if their stacks were not. */
    private static final Set<Path> OPEN_FILES = ConcurrentHashMap.newKeySet();
    private static final AtomicBoolean CLEANUP_REGISTERED = new AtomicBoolean();
    /** Cached IPv6 address bytes; cleared when it grows past this many addresses. */
    private static final int MAX_CACHED_ADDRESSES = 4096;

    private final Path path;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer header;
    private final UnsafeBuffer metadata;
    private final UnsafeBuffer values;
    private final UnsafeBuffer snapshot;
    /** Agent only: transports seen so far and their names as record bytes (a handful: loop, tcp, ib). */
    private Transport[] transports = new Transport[0];
    private byte[][] transportNames = new byte[0][];
    /** Agent only: the bytes of IPv6 addresses, which cannot be read without allocating. */
    private final IdentityHashMap<InetAddress, byte[]> addressBytes = new IdentityHashMap<>();
    private boolean closed;

    private StackInfoFile(final Path path, final MappedByteBuffer mapped)
    {
        this.path = path;
        this.mapped = mapped;
        this.header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
        this.metadata = new UnsafeBuffer(mapped, METADATA_OFFSET, StackCounters.METADATA_BYTES);
        this.values = new UnsafeBuffer(mapped, VALUES_OFFSET, StackCounters.VALUES_BYTES);
        this.snapshot = new UnsafeBuffer(mapped, SNAPSHOT_OFFSET, SNAPSHOT_LENGTH);
    }

    /**
     * Creates the info file of a stack if its configuration asks for one.
     *
     * @param config the stack's configuration.
     * @return the file, or null if {@link RdsStackConfig#infoFileEnabled()} is false or the file cannot be
     *         created (logged as a warning: the stack runs without one).
     */
    static StackInfoFile open(final RdsStackConfig config)
    {
        if (!config.infoFileEnabled())
        {
            return null;
        }
        try
        {
            return create(Path.of(config.infoDirectory()), config.name());
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.warn("{}: cannot create an info file in {}; rds info will not see this stack: {}",
                config.name(), config.infoDirectory(), ex.toString());
            return null;
        }
    }

    /**
     * Creates the file, fully written but for the counters, under a temporary name that it then gets
     * atomically, so that a reader never sees a half-written header.
     */
    static StackInfoFile create(final Path directory, final String name) throws IOException
    {
        if (!Files.isDirectory(directory))
        {
            try
            {
                Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            catch (final UnsupportedOperationException ex)
            {
                Files.createDirectories(directory);
            }
            catch (final FileAlreadyExistsException ex)
            {
                // another stack created it meanwhile
            }
        }
        final long pid = ProcessHandle.current().pid();
        final String base = pid + "-" + fileNamePart(name) + "-" + SEQUENCE.incrementAndGet();
        final Path temporary = directory.resolve("." + base + ".tmp");
        final Path path = directory.resolve(base + SUFFIX);
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(temporary,
            StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_LENGTH); // grows the file, zeroed
        }
        catch (final IOException | RuntimeException ex)
        {
            Files.deleteIfExists(temporary);
            throw ex;
        }
        final StackInfoFile file = new StackInfoFile(path, mapped);
        file.writeHeader(pid, name);
        registerCleanupAtExit();
        OPEN_FILES.add(path);
        try
        {
            Files.move(temporary, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException | RuntimeException ex)
        {
            OPEN_FILES.remove(path);
            Files.deleteIfExists(temporary);
            throw ex;
        }
        return file;
    }

    /**
     * A process that exits without closing its stacks (System.exit, a signal) would leave their files behind
     * in /dev/shm, which is memory: one shutdown hook deletes them. Only a killed process leaves stale files.
     */
    private static void registerCleanupAtExit()
    {
        if (CLEANUP_REGISTERED.compareAndSet(false, true))
        {
            final Thread cleanup = new Thread(() ->
            {
                for (final Path open : OPEN_FILES)
                {
                    try
                    {
                        Files.deleteIfExists(open);
                    }
                    catch (final IOException ex)
                    {
                        // exiting: nothing to be done
                    }
                }
            }, "rds4j-info-file-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
        }
    }

    /** A stack name as a file name part: letters, digits, '.', '_' and '-', at most 64 characters. */
    static String fileNamePart(final String name)
    {
        final String safe = name.replaceAll("[^A-Za-z0-9._-]", "_");
        return safe.isEmpty() ? "_" : safe.length() > 64 ? safe.substring(0, 64) : safe;
    }

    private void writeHeader(final long pid, final String name)
    {
        final long now = System.currentTimeMillis();
        header.putInt(VERSION_OFFSET, VERSION);
        header.putLong(PID_OFFSET, pid);
        header.putLong(START_TIME_OFFSET, now);
        header.putLong(HEARTBEAT_OFFSET, now);
        header.putInt(METADATA_REGION_OFFSET, METADATA_OFFSET);
        header.putInt(METADATA_REGION_OFFSET + 4, StackCounters.METADATA_BYTES);
        header.putInt(VALUES_REGION_OFFSET, VALUES_OFFSET);
        header.putInt(VALUES_REGION_OFFSET + 4, StackCounters.VALUES_BYTES);
        header.putInt(SNAPSHOT_REGION_OFFSET, SNAPSHOT_OFFSET);
        header.putInt(SNAPSHOT_REGION_OFFSET + 4, SNAPSHOT_LENGTH);
        final byte[] nameBytes = truncatedUtf8(name, MAX_NAME_BYTES);
        header.putInt(NAME_LENGTH_OFFSET, nameBytes.length);
        header.putBytes(NAME_OFFSET, nameBytes);
        header.putLongOrdered(MAGIC_OFFSET, MAGIC);
    }

    /** @return the UTF-8 bytes of the longest prefix of {@code text} (whole characters) that fits {@code max} bytes. */
    static byte[] truncatedUtf8(final String text, final int max)
    {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int end = text.length();
        while (bytes.length > max)
        {
            end--;
            if (Character.isLowSurrogate(text.charAt(end)) && end > 0)
            {
                end--;
            }
            bytes = text.substring(0, end).getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }

    /** @return the file's path. */
    Path path()
    {
        return path;
    }

    /** @return new counters allocated in the file's counter regions. */
    StackCounters newCounters()
    {
        return new StackCounters(metadata, values);
    }

    /**
     * Agent thread: publishes the connections and sockets, under the seqlock, and the heartbeat. Allocates
     * nothing once every transport and IPv6 address has been seen.
     *
     * @param connections  the agent's connections.
     * @param sockets      the agent's bound sockets.
     * @param epochMillis  the wall clock, for the heartbeat.
     */
    void writeSnapshot(final List<Connection> connections, final List<RdsSocketImpl> sockets, final long epochMillis)
    {
        if (closed)
        {
            return;
        }
        final UnsafeBuffer buffer = snapshot;
        final long version = buffer.getLong(SNAPSHOT_VERSION_OFFSET);
        buffer.putLongOrdered(SNAPSHOT_VERSION_OFFSET, version + 1);
        VarHandle.storeStoreFence(); // the odd version is visible before any record changes

        final int connectionCount = connections.size();
        final int connectionsRecorded = Math.min(connectionCount, MAX_CONNECTIONS);
        for (int i = 0; i < connectionsRecorded; i++)
        {
            final Connection connection = connections.get(i);
            final int offset = CONNECTIONS_OFFSET + i * CONNECTION_RECORD_LENGTH;
            buffer.putByte(offset + CONN_LOCAL_LENGTH, (byte)putAddress(buffer, offset + CONN_LOCAL, connection.localAddress()));
            buffer.putByte(offset + CONN_REMOTE_LENGTH, (byte)putAddress(buffer, offset + CONN_REMOTE, connection.remoteAddress()));
            buffer.putLong(offset + CONN_NEXT_TX, connection.nextTxSequence());
            buffer.putLong(offset + CONN_NEXT_RX, connection.nextRxSequence());
            buffer.putInt(offset + CONN_STATE, connection.state().ordinal());
            buffer.putInt(offset + CONN_UNACKED, connection.queuedMessages());
            buffer.putInt(offset + CONN_CREDITS, 0); // TCP has no credits; IB will
            buffer.putBytes(offset + CONN_TRANSPORT, transportName(connection.transport()));
        }

        final int socketCount = sockets.size();
        final int socketsRecorded = Math.min(socketCount, MAX_SOCKETS);
        for (int i = 0; i < socketsRecorded; i++)
        {
            final RdsSocketImpl socket = sockets.get(i);
            final int offset = SOCKETS_OFFSET + i * SOCKET_RECORD_LENGTH;
            final InetSocketAddress local = socket.localAddress();
            buffer.putByte(offset + SOCK_ADDRESS_LENGTH, (byte)putAddress(buffer, offset + SOCK_ADDRESS, local.getAddress()));
            buffer.putInt(offset + SOCK_PORT, local.getPort());
            buffer.putLong(offset + SOCK_SEND_QUEUED, socket.sendQueuedBytes());
            buffer.putInt(offset + SOCK_SEND_BUFFER, socket.sendBufferBytes());
            buffer.putLong(offset + SOCK_RECEIVE_QUEUED, socket.receiveQueuedBytes());
            buffer.putInt(offset + SOCK_RECEIVE_BUFFER, socket.receiveBufferBytes());
            buffer.putByte(offset + SOCK_CONGESTED, (byte)(socket.agentState().congested ? 1 : 0));
            buffer.putBytes(offset + SOCK_TRANSPORT, transportName(socket.transport()));
        }

        buffer.putLong(SNAPSHOT_TIME_OFFSET, epochMillis);
        buffer.putInt(CONNECTIONS_RECORDED_OFFSET, connectionsRecorded);
        buffer.putInt(CONNECTIONS_TOTAL_OFFSET, connectionCount);
        buffer.putInt(SOCKETS_RECORDED_OFFSET, socketsRecorded);
        buffer.putInt(SOCKETS_TOTAL_OFFSET, socketCount);
        buffer.putLongOrdered(SNAPSHOT_VERSION_OFFSET, version + 2);
        header.putLongOrdered(HEARTBEAT_OFFSET, epochMillis);
    }

    /** Writes an address into a 16-byte slot (zero padded) and returns its length, 4 or 16. */
    private int putAddress(final UnsafeBuffer buffer, final int offset, final InetAddress address)
    {
        if (address instanceof Inet4Address)
        {
            // an Inet4Address's hash code is its address (first octet in the high byte), read without allocating
            final int bits = address.hashCode();
            buffer.putInt(offset, bits, ByteOrder.BIG_ENDIAN);
            buffer.putLong(offset + 4, 0L);
            buffer.putInt(offset + 12, 0);
            return 4;
        }
        byte[] bytes = addressBytes.get(address);
        if (bytes == null)
        {
            if (addressBytes.size() >= MAX_CACHED_ADDRESSES)
            {
                addressBytes.clear();
            }
            bytes = address.getAddress();
            addressBytes.put(address, bytes);
        }
        buffer.putBytes(offset, bytes, 0, Math.min(bytes.length, ADDRESS_BYTES));
        return bytes.length;
    }

    /** @return a transport's name as the 8 zero-padded ASCII bytes of a record, computed once per transport. */
    private byte[] transportName(final Transport transport)
    {
        final Transport[] known = transports;
        for (int i = 0; i < known.length; i++)
        {
            if (known[i] == transport)
            {
                return transportNames[i];
            }
        }
        final byte[] name = new byte[TRANSPORT_NAME_BYTES];
        final String text = transport == null ? "" : transport.name();
        for (int i = 0; i < Math.min(text.length(), TRANSPORT_NAME_BYTES); i++)
        {
            final char c = text.charAt(i);
            name[i] = (byte)(c < 128 ? c : '?');
        }
        transports = Arrays.copyOf(known, known.length + 1);
        transports[known.length] = transport;
        transportNames = Arrays.copyOf(transportNames, known.length + 1);
        transportNames[known.length] = name;
        return name;
    }

    /**
     * Marks the file closed and deletes it. The mapping is left to the garbage collector rather than
     * unmapped, so that a late counter increment (an application thread racing with close) cannot fault.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        header.putIntVolatile(CLOSED_OFFSET, 1);
        OPEN_FILES.remove(path);
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ex)
        {
            LOG.debug("cannot delete {}: {}", path, ex.toString());
        }
    }

    @Override
    public String toString()
    {
        return "StackInfoFile[" + path + "]";
    }
}
