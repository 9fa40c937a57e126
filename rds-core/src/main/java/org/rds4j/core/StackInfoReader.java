package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;

/**
 * Reads a running stack's info file from outside its process (the {@code rds info} tool uses it): the
 * stack's counters, and a snapshot of its connections and sockets that the stack's agent rewrites at most
 * every 100 ms. The file is mapped read-only; reading never disturbs the stack.
 * <p>
 * A stack writes its file into {@link org.rds4j.RdsStackConfig#infoDirectory()} unless
 * {@link org.rds4j.RdsStackConfig#infoFileEnabled()} is false, and deletes it when it closes. A file left by
 * a process that died is <em>stale</em>: {@link #isProcessAlive()} is false.
 * <p>
 * Not thread-safe: use one reader from one thread at a time.
 */
public final class StackInfoReader implements AutoCloseable
{
    /** A stack whose heartbeat is older than this is not {@link #isAlive() alive}. */
    public static final long HEARTBEAT_TIMEOUT_MS = 5_000;

    private static final ConnectionState[] STATES = ConnectionState.values();
    private static final int MAX_SNAPSHOT_ATTEMPTS = 1_000;

    private final Path path;
    private final String name;
    private final long pid;
    private final long startTimeMillis;
    private UnsafeBuffer header;
    private UnsafeBuffer snapshotBuffer;
    private CountersReader countersReader;
    /** The record bytes of the last snapshot, copied under the seqlock; reused between reads. */
    private byte[] copy = new byte[0];

    private StackInfoReader(final Path path, final MappedByteBuffer mapped) throws IOException
    {
        this.path = path;
        final UnsafeBuffer all = new UnsafeBuffer(mapped);
        final int length = all.capacity();
        if (length < StackInfoFile.HEADER_LENGTH)
        {
            throw new IOException("too short for a header (" + length + " bytes): being created, or not an info file");
        }
        final long magic = all.getLongVolatile(StackInfoFile.MAGIC_OFFSET);
        if (magic != StackInfoFile.MAGIC)
        {
            throw new IOException("not an rds4j info file (bad magic 0x" + Long.toHexString(magic) + ")");
        }
        final int version = all.getInt(StackInfoFile.VERSION_OFFSET);
        if (version != StackInfoFile.VERSION)
        {
            throw new IOException("layout version " + version + ", this reader knows version " + StackInfoFile.VERSION);
        }
        header = new UnsafeBuffer(mapped, 0, StackInfoFile.HEADER_LENGTH);
        final UnsafeBuffer metadata = region(mapped, StackInfoFile.METADATA_REGION_OFFSET, "counters metadata");
        final UnsafeBuffer values = region(mapped, StackInfoFile.VALUES_REGION_OFFSET, "counters values");
        snapshotBuffer = region(mapped, StackInfoFile.SNAPSHOT_REGION_OFFSET, "snapshot");
        if (snapshotBuffer.capacity() < StackInfoFile.SNAPSHOT_LENGTH)
        {
            throw new IOException("snapshot region of " + snapshotBuffer.capacity() + " bytes, expected " +
                StackInfoFile.SNAPSHOT_LENGTH);
        }
        try
        {
            countersReader = new CountersReader(metadata, values);
        }
        catch (final RuntimeException ex)
        {
            throw new IOException("bad counter regions: " + ex.getMessage(), ex);
        }
        pid = header.getLong(StackInfoFile.PID_OFFSET);
        startTimeMillis = header.getLong(StackInfoFile.START_TIME_OFFSET);
        final int nameLength = header.getInt(StackInfoFile.NAME_LENGTH_OFFSET);
        if (nameLength < 0 || nameLength > StackInfoFile.MAX_NAME_BYTES)
        {
            throw new IOException("bad stack name length " + nameLength);
        }
        final byte[] nameBytes = new byte[nameLength];
        header.getBytes(StackInfoFile.NAME_OFFSET, nameBytes);
        name = new String(nameBytes, StandardCharsets.UTF_8);
    }

    private static UnsafeBuffer region(final MappedByteBuffer mapped, final int headerOffset, final String what)
        throws IOException
    {
        final UnsafeBuffer all = new UnsafeBuffer(mapped);
        final int offset = all.getInt(headerOffset);
        final int length = all.getInt(headerOffset + 4);
        if (offset < StackInfoFile.HEADER_LENGTH || length <= 0 || (offset & 7) != 0 ||
            (long)offset + length > all.capacity())
        {
            throw new IOException(what + " region [" + offset + ", +" + length + ") outside the file (" +
                all.capacity() + " bytes)");
        }
        return new UnsafeBuffer(mapped, offset, length);
    }

    /**
     * Opens one info file, mapped read-only.
     *
     * @param file a {@code .rds4j} file.
     * @return its reader; close it when done.
     * @throws IOException if the file cannot be read or is not an info file of this layout version (the
     *                     message says why).
     */
    public static StackInfoReader open(final Path file) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final long size = channel.size();
            if (size > Integer.MAX_VALUE)
            {
                throw new IOException("too large for an info file: " + size + " bytes");
            }
            return new StackInfoReader(file, channel.map(FileChannel.MapMode.READ_ONLY, 0, size));
        }
    }

    /**
     * Opens every readable info file in a directory, skipping the others silently.
     *
     * @param directory an info directory, such as {@link org.rds4j.RdsStackConfig#infoDirectory()}.
     * @return readers sorted by stack name, then pid, then file name; empty if the directory does not exist.
     * @throws IOException if the directory cannot be listed.
     */
    public static List<StackInfoReader> openAll(final Path directory) throws IOException
    {
        return openAll(directory, (file, reason) -> { });
    }

    /**
     * Opens every readable info file ({@code *.rds4j}) in a directory.
     *
     * @param directory an info directory, such as {@link org.rds4j.RdsStackConfig#infoDirectory()}.
     * @param onSkipped told of each file that was skipped and why (bad magic, other layout version, unreadable).
     * @return readers sorted by stack name, then pid, then file name; empty if the directory does not exist.
     * @throws IOException if the directory cannot be listed.
     */
    public static List<StackInfoReader> openAll(final Path directory, final BiConsumer<Path, String> onSkipped)
        throws IOException
    {
        final List<StackInfoReader> readers = new ArrayList<>();
        if (!Files.isDirectory(directory))
        {
            return readers;
        }
        final List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "*" + StackInfoFile.SUFFIX))
        {
            stream.forEach(files::add);
        }
        Collections.sort(files);
        for (final Path file : files)
        {
            if (!Files.isRegularFile(file))
            {
                continue;
            }
            try
            {
                readers.add(open(file));
            }
            catch (final NoSuchFileException ex)
            {
                // the stack closed after the listing: not worth a word
            }
            catch (final IOException | RuntimeException ex)
            {
                onSkipped.accept(file, ex.getMessage() == null ? ex.toString() : ex.getMessage());
            }
        }
        readers.sort((a, b) -> a.name.equals(b.name) ? Long.compare(a.pid, b.pid) : a.name.compareTo(b.name));
        return readers;
    }

    /** @return the file read. */
    public Path path()
    {
        return path;
    }

    /** @return the stack's name ({@link org.rds4j.RdsStackConfig#name()}, at most 64 bytes of UTF-8). */
    public String name()
    {
        return name;
    }

    /** @return the id of the process that runs the stack. */
    public long pid()
    {
        return pid;
    }

    /** @return when the stack opened, in milliseconds since the epoch. */
    public long startTimeMillis()
    {
        return startTimeMillis;
    }

    /** @return when the stack's agent last wrote a snapshot (its heartbeat), in milliseconds since the epoch. */
    public long heartbeatMillis()
    {
        return header().getLongVolatile(StackInfoFile.HEARTBEAT_OFFSET);
    }

    /** @return true once the stack has closed (its file is deleted at the same time, so this is rarely seen). */
    public boolean isClosed()
    {
        return header().getIntVolatile(StackInfoFile.CLOSED_OFFSET) != 0;
    }

    /**
     * @return true if the process that wrote the file still runs: a process with its pid exists and did not
     *         start after the stack did (a pid reused by another process does not count). A file whose process
     *         is gone is stale and may be deleted.
     */
    public boolean isProcessAlive()
    {
        final Optional<ProcessHandle> process = ProcessHandle.of(pid);
        if (process.isEmpty() || !process.get().isAlive())
        {
            return false;
        }
        final Optional<Instant> started = process.get().info().startInstant();
        // the process started before the stack opened; allow for the clock granularity of the start time
        return started.isEmpty() || started.get().toEpochMilli() <= startTimeMillis + 1_000;
    }

    /**
     * @return true if the stack is running: not closed, its process alive, and its agent's heartbeat younger
     *         than {@value #HEARTBEAT_TIMEOUT_MS} ms.
     */
    public boolean isAlive()
    {
        return !isClosed() && isProcessAlive() &&
            Math.abs(System.currentTimeMillis() - heartbeatMillis()) <= HEARTBEAT_TIMEOUT_MS;
    }

    /**
     * @return the stack's counters by name, in the order the stack registered them (the order of
     *         {@link org.rds4j.RdsStack#counters()}); each value as of the moment it is read.
     */
    public Map<String, Long> counters()
    {
        final CountersReader reader = countersReader();
        final Map<String, Long> values = new LinkedHashMap<>();
        reader.forEach((counterId, label) -> values.put(label, reader.getCounterValue(counterId)));
        return values;
    }

    /**
     * Reads the latest snapshot of connections and sockets consistently: it retries while the agent is
     * writing, up to a bound.
     *
     * @return the snapshot; {@link Snapshot#version()} is 0 (and the lists empty) if the agent has not yet
     *         written one.
     * @throws IllegalStateException if no consistent snapshot could be read, which means the writer stopped
     *                               in the middle of one (its process died).
     */
    public Snapshot snapshot()
    {
        final UnsafeBuffer buffer = snapshotBuffer();
        for (int attempt = 0; attempt < MAX_SNAPSHOT_ATTEMPTS; attempt++)
        {
            final long before = buffer.getLongVolatile(StackInfoFile.SNAPSHOT_VERSION_OFFSET);
            if ((before & 1) == 0)
            {
                final long time = buffer.getLong(StackInfoFile.SNAPSHOT_TIME_OFFSET);
                final int connections = clamp(buffer.getInt(StackInfoFile.CONNECTIONS_RECORDED_OFFSET), StackInfoFile.MAX_CONNECTIONS);
                final int connectionsTotal = buffer.getInt(StackInfoFile.CONNECTIONS_TOTAL_OFFSET);
                final int sockets = clamp(buffer.getInt(StackInfoFile.SOCKETS_RECORDED_OFFSET), StackInfoFile.MAX_SOCKETS);
                final int socketsTotal = buffer.getInt(StackInfoFile.SOCKETS_TOTAL_OFFSET);
                final int connectionBytes = connections * StackInfoFile.CONNECTION_RECORD_LENGTH;
                final int socketBytes = sockets * StackInfoFile.SOCKET_RECORD_LENGTH;
                if (copy.length < connectionBytes + socketBytes)
                {
                    copy = new byte[connectionBytes + socketBytes];
                }
                buffer.getBytes(StackInfoFile.CONNECTIONS_OFFSET, copy, 0, connectionBytes);
                buffer.getBytes(StackInfoFile.SOCKETS_OFFSET, copy, connectionBytes, socketBytes);
                VarHandle.loadLoadFence(); // the copy is complete before the version is read again
                final long after = buffer.getLongVolatile(StackInfoFile.SNAPSHOT_VERSION_OFFSET);
                if (after == before)
                {
                    return decode(before, time, connections, connectionsTotal, sockets, socketsTotal);
                }
            }
            if (attempt < 100)
            {
                Thread.onSpinWait();
            }
            else
            {
                LockSupport.parkNanos(100_000);
            }
        }
        throw new IllegalStateException("no consistent snapshot in " + path + " after " + MAX_SNAPSHOT_ATTEMPTS +
            " attempts: its writer stopped in the middle of one (its process died?)");
    }

    private static int clamp(final int count, final int max)
    {
        return Math.max(0, Math.min(count, max));
    }

    private Snapshot decode(
        final long version, final long time, final int connections, final int connectionsTotal, final int sockets,
        final int socketsTotal)
    {
        final UnsafeBuffer records = new UnsafeBuffer(copy);
        final List<ConnectionRecord> connectionRecords = new ArrayList<>(connections);
        for (int i = 0; i < connections; i++)
        {
            final int offset = i * StackInfoFile.CONNECTION_RECORD_LENGTH;
            final int state = records.getInt(offset + StackInfoFile.CONN_STATE);
            connectionRecords.add(new ConnectionRecord(
                address(offset + StackInfoFile.CONN_LOCAL, records.getByte(offset + StackInfoFile.CONN_LOCAL_LENGTH)),
                address(offset + StackInfoFile.CONN_REMOTE, records.getByte(offset + StackInfoFile.CONN_REMOTE_LENGTH)),
                ascii(offset + StackInfoFile.CONN_TRANSPORT),
                state >= 0 && state < STATES.length ? STATES[state].name() : "?" + state,
                records.getLong(offset + StackInfoFile.CONN_NEXT_TX),
                records.getLong(offset + StackInfoFile.CONN_NEXT_RX),
                records.getInt(offset + StackInfoFile.CONN_UNACKED),
                records.getInt(offset + StackInfoFile.CONN_CREDITS)));
        }
        final int socketsStart = connections * StackInfoFile.CONNECTION_RECORD_LENGTH;
        final List<SocketRecord> socketRecords = new ArrayList<>(sockets);
        for (int i = 0; i < sockets; i++)
        {
            final int offset = socketsStart + i * StackInfoFile.SOCKET_RECORD_LENGTH;
            final InetAddress address = address(offset + StackInfoFile.SOCK_ADDRESS, records.getByte(offset + StackInfoFile.SOCK_ADDRESS_LENGTH));
            final int port = records.getInt(offset + StackInfoFile.SOCK_PORT);
            socketRecords.add(new SocketRecord(
                address == null || port < 0 || port > 65535 ? null : new InetSocketAddress(address, port),
                ascii(offset + StackInfoFile.SOCK_TRANSPORT),
                records.getLong(offset + StackInfoFile.SOCK_SEND_QUEUED),
                records.getInt(offset + StackInfoFile.SOCK_SEND_BUFFER),
                records.getLong(offset + StackInfoFile.SOCK_RECEIVE_QUEUED),
                records.getInt(offset + StackInfoFile.SOCK_RECEIVE_BUFFER),
                records.getByte(offset + StackInfoFile.SOCK_CONGESTED) != 0));
        }
        return new Snapshot(version, time, List.copyOf(connectionRecords), Math.max(connectionsTotal, connections),
            List.copyOf(socketRecords), Math.max(socketsTotal, sockets));
    }

    /** @return the address in a record's 16-byte slot, or null if its length is neither 4 nor 16. */
    private InetAddress address(final int offset, final int length)
    {
        if (length != 4 && length != 16)
        {
            return null;
        }
        try
        {
            return InetAddress.getByAddress(Arrays.copyOfRange(copy, offset, offset + length));
        }
        catch (final UnknownHostException ex)
        {
            return null;
        }
    }

    private String ascii(final int offset)
    {
        int end = offset;
        while (end < offset + StackInfoFile.TRANSPORT_NAME_BYTES && copy[end] != 0)
        {
            end++;
        }
        return new String(copy, offset, end - offset, StandardCharsets.US_ASCII);
    }

    private UnsafeBuffer header()
    {
        ensureOpen();
        return header;
    }

    private UnsafeBuffer snapshotBuffer()
    {
        ensureOpen();
        return snapshotBuffer;
    }

    private CountersReader countersReader()
    {
        ensureOpen();
        return countersReader;
    }

    private void ensureOpen()
    {
        if (header == null)
        {
            throw new IllegalStateException("reader of " + path + " is closed");
        }
    }

    /**
     * Drops the mapping, which the garbage collector then unmaps (it is never unmapped explicitly, so that a
     * use after close fails with an exception rather than a crash). Idempotent.
     */
    @Override
    public void close()
    {
        header = null;
        snapshotBuffer = null;
        countersReader = null;
        copy = new byte[0];
    }

    @Override
    public String toString()
    {
        return "StackInfoReader[" + name + ", pid " + pid + ", " + path + "]";
    }

    /**
     * The connections and sockets of a stack as its agent last published them.
     *
     * @param version          the seqlock version: grows by 2 with each snapshot; 0 before the first.
     * @param timeMillis       when the agent wrote it, in milliseconds since the epoch.
     * @param connections      the connections recorded (all of them unless {@link #truncated()}).
     * @param connectionsTotal how many connections the stack had.
     * @param sockets          the bound sockets recorded (all of them unless {@link #truncated()}).
     * @param socketsTotal     how many bound sockets the stack had.
     */
    public record Snapshot(
        long version, long timeMillis, List<ConnectionRecord> connections, int connectionsTotal,
        List<SocketRecord> sockets, int socketsTotal)
    {
        /** @return true if the stack had more connections or sockets than the file has room for. */
        public boolean truncated()
        {
            return connectionsTotal > connections.size() || socketsTotal > sockets.size();
        }
    }

    /**
     * A connection (one node pair on one transport).
     *
     * @param local          local address, or null if unreadable.
     * @param remote         peer address, or null if unreadable.
     * @param transport      transport name: {@code tcp}, {@code loop} (within the stack), later {@code ib}.
     * @param state          {@code DOWN}, {@code CONNECTING}, {@code HANDSHAKE} or {@code UP}.
     * @param nextTxSequence sequence number the next new message gets.
     * @param nextRxSequence sequence number expected next from the peer (0 before the first).
     * @param unacked        messages queued or sent and not yet acknowledged.
     * @param credits        send credits (InfiniBand flow control); 0 on TCP.
     */
    public record ConnectionRecord(
        InetAddress local, InetAddress remote, String transport, String state, long nextTxSequence,
        long nextRxSequence, int unacked, int credits)
    {
    }

    /**
     * A bound socket.
     *
     * @param address            its local address and port, or null if unreadable.
     * @param transport          its transport's name.
     * @param sendQueuedBytes    payload bytes sent and not yet acknowledged (counted against the send buffer).
     * @param sendBufferBytes    its SO_SNDBUF, in bytes.
     * @param receiveQueuedBytes payload bytes received and not yet read by the application.
     * @param receiveBufferBytes its SO_RCVBUF, in bytes.
     * @param congested          whether its port is marked congested (receive buffer overrun).
     */
    public record SocketRecord(
        InetSocketAddress address, String transport, long sendQueuedBytes, int sendBufferBytes,
        long receiveQueuedBytes, int receiveBufferBytes, boolean congested)
    {
    }
}
