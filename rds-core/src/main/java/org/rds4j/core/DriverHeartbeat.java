package org.rds4j.core;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.RdsStackConfig;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A driver's heartbeat: the wall-clock time (epoch ms) at which its stack's agent last ran while its conductor ran
 * too ({@link ConductorProgress}), in the file {@value #FILE} of the driver's directory, which its clients map
 * read-only. The agent writes it every {@link RdsStackConfig#DRIVER_HEARTBEAT_PERIOD}, idle or not (it wakes for it
 * as for its info file's snapshots), so a heartbeat that stands still is a driver that does not run: stopped, or
 * its agent or conductor hung. A client that sees it stand still
 * for its {@code driverTimeout} lets the driver go ({@link DriverStallDetector}). The info file's heartbeat cannot
 * serve: a driver may have none ({@code infoFile} off), its clients do not know its directory, and with
 * {@code --group} they may not read it.
 * <p>
 * Layout: one long at 0, in the platform's order (the file is read on the host that wrote it), written with release
 * semantics. Threads: the driver's agent writes; any client thread reads.
 */
final class DriverHeartbeat
{
    static final String FILE = "heartbeat";
    private static final int BYTES = 8;

    private final ByteBuffer mapped;
    private final UnsafeBuffer memory;
    /** The driver's: beats are skipped while its conductor does not run. A client's view has none. */
    private final ConductorProgress conductor;

    private DriverHeartbeat(final ByteBuffer mapped, final ConductorProgress conductor)
    {
        this.mapped = mapped;
        this.memory = new UnsafeBuffer(mapped);
        this.conductor = conductor;
    }

    /**
     * Driver: makes the file (replacing one a dead driver left) with a first beat.
     *
     * @param directory the driver's directory.
     * @param group     whether the driver's group may read it too.
     * @param epochMs   the wall clock now.
     * @param conductor the driver's conductor's progress, which each later beat asks whether it runs.
     * @return the heartbeat.
     * @throws IOException if the file cannot be made.
     */
    static DriverHeartbeat create(final Path directory, final boolean group, final long epochMs,
        final ConductorProgress conductor) throws IOException
    {
        final Path file = directory.resolve(FILE);
        Files.deleteIfExists(file); // a dead driver's: the lock says none runs
        final DriverHeartbeat heartbeat = new DriverHeartbeat(SharedMemory.mapNew(file, BYTES), conductor);
        DriverFiles.restrict(file, group);
        heartbeat.memory.putLongOrdered(0, epochMs);
        return heartbeat;
    }

    /**
     * Client: maps a driver's heartbeat, read-only.
     *
     * @param directory the driver's directory.
     * @return the heartbeat.
     * @throws IOException if it cannot be mapped.
     */
    static DriverHeartbeat open(final Path directory) throws IOException
    {
        final Path file = directory.resolve(FILE);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            if (channel.size() != BYTES)
            {
                throw new IOException(file + " holds " + channel.size() + " bytes, not " + BYTES);
            }
            return new DriverHeartbeat(channel.map(FileChannel.MapMode.READ_ONLY, 0, BYTES), null);
        }
    }

    /**
     * Driver's agent, every heartbeat period: beats unless the conductor has stayed in one turn since the last call.
     *
     * @param epochMs the wall clock now.
     */
    void beat(final long epochMs)
    {
        if (conductor.runs())
        {
            memory.putLongOrdered(0, epochMs);
        }
    }

    /** @return the last beat, in epoch milliseconds. */
    long millis()
    {
        return memory.getLongVolatile(0);
    }

    /**
     * Driver, once its stack is closed: unmaps the file. A client never unmaps its view (its reader may be looking):
     * the garbage collector does, once the client's stack is gone.
     */
    void close()
    {
        IoUtil.unmap(mapped);
    }
}
