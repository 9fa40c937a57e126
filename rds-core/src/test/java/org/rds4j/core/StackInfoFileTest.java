package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.wire.CongestionMap;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The info file as a tool sees it from outside: header, counters, the snapshot of connections under its
 * seqlock, truncation, skipping of foreign files, and the file's life cycle. rds-core has no network transport
 * on its test class path, so connections here are loopback ones created on the agent thread; the samples
 * module's InfoCommandTest covers TCP connections and socket records end to end.
 */
class StackInfoFileTest
{
    @TempDir
    Path dir;

    private RdsStackConfig config(final String name)
    {
        return RdsStackConfig.builder().name(name).infoDirectory(dir.toString()).build();
    }

    @Test
    void everyPathStateIsReadBackByItsName() throws Exception
    {
        final FakePathHost host = new FakePathHost();
        final FakeTransport transport = new FakeTransport(true);
        final LocalEndpoint local = new LocalEndpoint(InetAddress.getByName("10.0.9.1"));
        final List<Connection> connections = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            connections.add(new Connection(host, local, InetAddress.getByName("10.0.9." + (i + 2)), transport,
                new CongestionMap()));
        }
        for (int i = 1; i < 4; i++)
        {
            connections.get(i).path(0).connectIfDown();
            connections.get(i).doWork(host.nowNs);
        }
        connections.get(2).path(0).onConnected(new FakeTransportPath(connections.get(2).path(0)));
        final ConnPath up = connections.get(3).path(0);
        final FakeTransportPath kernel = new FakeTransportPath(up);
        kernel.peerIsKernel = true;
        up.onConnected(kernel);

        try (StackInfoFile file = StackInfoFile.create(dir, "states");
            StackInfoReader reader = StackInfoReader.open(file.path()))
        {
            file.writeSnapshot(connections, List.of(), 1);
            assertEquals(List.of("DOWN", "CONNECTING", "HANDSHAKE", "UP"),
                reader.snapshot().connections().stream().map(StackInfoReader.ConnectionRecord::state).toList());
        }
    }

    @Test
    void configDefaultsToAPerUserDirectoryAndCopiesThroughToBuilder()
    {
        final RdsStackConfig defaults = RdsStackConfig.defaults();
        assertTrue(defaults.infoFileEnabled());
        final String property = System.getProperty("rds4j.info.dir");
        if (property == null)
        {
            assertTrue(Path.of(defaults.infoDirectory()).getFileName().toString().startsWith("rds4j-"), defaults.infoDirectory());
        }
        else
        {
            assertEquals(property, defaults.infoDirectory());
        }
        final RdsStackConfig custom = RdsStackConfig.builder().infoDirectory("/x/y").infoFile(false).build();
        assertEquals("/x/y", custom.toBuilder().build().infoDirectory());
        assertFalse(custom.toBuilder().build().infoFileEnabled());
        assertTrue(custom.toString().contains("infoFile=off"), custom.toString());
        assertThrows(IllegalArgumentException.class, () -> RdsStackConfig.builder().infoDirectory(" "));
    }

    @Test
    void headerAndCountersAreReadFromTheFileExactly() throws Exception
    {
        try (CoreStack stack = CoreStack.open(config("info-counters")))
        {
            final Path file = stack.infoFile();
            assertNotNull(file);
            final long pid = ProcessHandle.current().pid();
            assertTrue(file.getFileName().toString().matches(pid + "-info-counters-[0-9]+\\.rds4j"), file.toString());
            final byte[] magic = new byte[8];
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
            {
                channel.read(ByteBuffer.wrap(magic));
            }
            if (ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN)
            {
                assertEquals("RDS4JINF", new String(magic, StandardCharsets.US_ASCII));
            }

            final StackCounters counters = stack.stackCounters();
            counters.recvDelivered.getAndAdd(7);
            counters.sendQueued.getAndAdd(5);
            counters.connReset.increment();
            final List<StackInfoReader> readers = StackInfoReader.openAll(dir);
            assertEquals(1, readers.size());
            try (StackInfoReader reader = readers.get(0))
            {
                assertEquals(file, reader.path());
                assertEquals("info-counters", reader.name());
                assertEquals(pid, reader.pid());
                assertTrue(reader.isProcessAlive());
                assertTrue(reader.isAlive());
                assertFalse(reader.isClosed());
                assertTrue(Math.abs(System.currentTimeMillis() - reader.startTimeMillis()) < 60_000);

                final Map<String, Long> read = reader.counters();
                assertEquals(stack.counters(), read); // the same names, values and order
                assertEquals(new ArrayList<>(stack.counters().keySet()), new ArrayList<>(read.keySet()));
                assertEquals(7L, read.get("recv_delivered"));
                assertEquals(5L, read.get("send_queued"));
                assertEquals(1L, read.get("conn_reset"));
                counters.recvDelivered.increment();
                assertEquals(8L, reader.counters().get("recv_delivered"), "values are live, not copied at open");

                final long firstBeat = reader.heartbeatMillis();
                Await.until(() -> reader.heartbeatMillis() > firstBeat, "the agent's heartbeat moves");
            }
        }
    }

    @Test
    void snapshotShowsLoopbackConnectionsUpWithTheirSequences() throws Exception
    {
        final InetAddress a = InetAddress.getByName("127.0.8.1");
        final InetAddress b = InetAddress.getByName("127.0.8.2");
        final InetAddress v6 = InetAddress.getByName("::1");
        try (CoreStack stack = CoreStack.open(config("info-loop")))
        {
            final LocalEndpoint endpointA = stack.endpoint(a);
            stack.endpoint(b);
            final LocalEndpoint endpointV6 = stack.endpoint(v6);
            stack.calls().call(agent ->
            {
                agent.connection(endpointA, b, stack.transport("loop")).path(0).connectIfDown();
                agent.connection(endpointV6, v6, stack.transport("loop")).path(0).connectIfDown();
                return null;
            });
            try (StackInfoReader reader = StackInfoReader.open(stack.infoFile()))
            {
                // the loopback path creates the reverse connection (b to a) as a receiver; it stays DOWN
                final List<StackInfoReader.ConnectionRecord> expected = List.of(
                    new StackInfoReader.ConnectionRecord(a, b, "loop", "UP", 1, 0, 0, 0),
                    new StackInfoReader.ConnectionRecord(v6, v6, "loop", "UP", 1, 0, 0, 0),
                    new StackInfoReader.ConnectionRecord(b, a, "loop", "DOWN", 1, 0, 0, 0));
                final AtomicReference<StackInfoReader.Snapshot> last = new AtomicReference<>();
                Await.until(Duration.ofSeconds(20), () ->
                {
                    last.set(reader.snapshot());
                    return last.get().connections().equals(expected);
                }, () -> "the loopback connections in the snapshot: " + last.get() + ", stack: " + stack.connections());
                final StackInfoReader.Snapshot snapshot = last.get();
                assertFalse(snapshot.truncated());
                assertTrue(snapshot.version() > 0 && snapshot.version() % 2 == 0, "even version " + snapshot.version());
                assertEquals(0, snapshot.sockets().size(), "no socket is bound");
                final List<StackInfoReader.ConnectionRecord> fromStack = stack.connections().stream()
                    .map(c -> new StackInfoReader.ConnectionRecord(c.local(), c.remote(), c.transport(), c.state(),
                        c.nextTxSequence(), c.nextRxSequence(), c.unacked(), 0))
                    .toList();
                assertEquals(fromStack, snapshot.connections(), "the file agrees with RdsStack.connections()");
            }
        }
    }

    @Test
    void connectionsBeyondTheRegionAreTruncatedAndFlagged() throws Exception
    {
        final int count = StackInfoFile.MAX_CONNECTIONS + 5;
        try (CoreStack stack = CoreStack.open(config("info-many")))
        {
            final LocalEndpoint endpoint = stack.endpoint(InetAddress.getByName("127.0.8.1"));
            final List<InetAddress> remotes = new ArrayList<>();
            for (int i = 0; i < count; i++)
            {
                remotes.add(InetAddress.getByAddress(new byte[] {10, 9, (byte)(i >> 8), (byte)i}));
            }
            stack.calls().call(agent ->
            {
                remotes.forEach(remote -> agent.connection(endpoint, remote, stack.transport("loop")));
                return null;
            });
            try (StackInfoReader reader = StackInfoReader.open(stack.infoFile()))
            {
                Await.until(() -> reader.snapshot().connectionsTotal() == count, "all connections counted");
                final StackInfoReader.Snapshot snapshot = reader.snapshot();
                assertTrue(snapshot.truncated());
                assertEquals(StackInfoFile.MAX_CONNECTIONS, snapshot.connections().size());
                for (int i = 0; i < snapshot.connections().size(); i++)
                {
                    assertEquals(remotes.get(i), snapshot.connections().get(i).remote());
                    assertEquals("DOWN", snapshot.connections().get(i).state());
                }
            }
        }
    }

    /** A reader racing a writer sees whole snapshots only: never the count of one and the records of another. */
    @Test
    void seqlockNeverYieldsATornSnapshot() throws Exception
    {
        try (CoreStack stack = CoreStack.open(config("info-seqlock").toBuilder().infoFile(false).build()))
        {
            final LocalEndpoint endpoint = stack.endpoint(InetAddress.getByName("127.0.8.1"));
            final List<Connection> three = new ArrayList<>();
            final List<Connection> five = new ArrayList<>();
            stack.calls().call(agent ->
            {
                for (int i = 0; i < 8; i++)
                {
                    final InetAddress remote = address(10, 7, 0, i + 1);
                    (i < 3 ? three : five).add(agent.connection(endpoint, remote, stack.transport("loop")));
                }
                return null;
            });
            try (StackInfoFile file = StackInfoFile.create(dir, "seqlock");
                 StackInfoReader reader = StackInfoReader.open(file.path()))
            {
                final AtomicBoolean stop = new AtomicBoolean();
                final AtomicLong written = new AtomicLong();
                final Thread writer = new Thread(() ->
                {
                    while (!stop.get())
                    {
                        file.writeSnapshot(written.get() % 2 == 0 ? three : five, List.of(), written.incrementAndGet());
                        // the agent writes every 100 ms; this one writes as often as every few microseconds
                        LockSupport.parkNanos(1_000);
                    }
                }, "seqlock-writer");
                writer.start();
                try
                {
                    final long deadline = System.nanoTime() + 300_000_000L;
                    int checked = 0;
                    long lastVersion = 0;
                    while (System.nanoTime() < deadline || checked < 1000)
                    {
                        final StackInfoReader.Snapshot snapshot = reader.snapshot();
                        final List<Connection> expected = snapshot.connections().size() == 3 ? three : five;
                        if (snapshot.version() == 0)
                        {
                            continue;
                        }
                        assertEquals(expected.size(), snapshot.connections().size());
                        assertEquals(expected.size(), snapshot.connectionsTotal());
                        for (int i = 0; i < expected.size(); i++)
                        {
                            assertEquals(expected.get(i).remoteAddress(), snapshot.connections().get(i).remote(),
                                "record " + i + " of a " + expected.size() + "-connection snapshot");
                        }
                        assertEquals(snapshot.connections().size() == 3 ? 1 : 0, snapshot.timeMillis() % 2,
                            "the time written with the records");
                        assertTrue(snapshot.version() >= lastVersion);
                        lastVersion = snapshot.version();
                        checked++;
                    }
                }
                finally
                {
                    stop.set(true);
                    writer.join();
                }
                assertTrue(written.get() > 10, "the writer ran");
            }
        }
    }

    @Test
    void writingASnapshotAllocatesNothing() throws Exception
    {
        final java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        if (!(threads instanceof com.sun.management.ThreadMXBean hotspot) || !hotspot.isThreadAllocatedMemorySupported())
        {
            return; // no allocation counter on this JVM
        }
        hotspot.setThreadAllocatedMemoryEnabled(true);
        try (CoreStack stack = CoreStack.open(config("info-alloc").toBuilder().infoFile(false).build()))
        {
            final LocalEndpoint v4 = stack.endpoint(InetAddress.getByName("127.0.8.1"));
            final LocalEndpoint v6 = stack.endpoint(InetAddress.getByName("::1"));
            final InetAddress remote4 = InetAddress.getByName("127.0.8.2");
            final InetAddress remote6 = InetAddress.getByName("::2");
            final List<Connection> connections = stack.calls().call(agent -> List.of(
                agent.connection(v4, remote4, stack.transport("loop")),
                agent.connection(v6, remote6, stack.transport("loop"))));
            try (StackInfoFile file = StackInfoFile.create(dir, "alloc"))
            {
                final List<RdsSocketImpl> noSockets = new ArrayList<>();
                for (int i = 0; i < 20_000; i++) // warm up: first sight of each transport and IPv6 address, JIT
                {
                    file.writeSnapshot(connections, noSockets, i);
                }
                final long tid = Thread.currentThread().getId();
                final long before = hotspot.getThreadAllocatedBytes(tid);
                for (int i = 0; i < 10_000; i++)
                {
                    file.writeSnapshot(connections, noSockets, i);
                }
                final long allocated = hotspot.getThreadAllocatedBytes(tid) - before;
                assertTrue(allocated < 1_000, "10,000 snapshots allocated " + allocated + " bytes");
            }
        }
    }

    @Test
    void fileIsDeletedOnCloseAndNotCreatedWhenDisabled() throws Exception
    {
        final CoreStack stack = CoreStack.open(config("info-close"));
        final Path file = stack.infoFile();
        assertTrue(Files.exists(file));
        final StackInfoReader reader = StackInfoReader.open(file); // a tool holding the file open meanwhile
        stack.close();
        assertFalse(Files.exists(file), "deleted on close");
        assertTrue(reader.isClosed());
        assertFalse(reader.isAlive());
        reader.close();
        assertThrows(IllegalStateException.class, reader::counters);
        assertEquals(List.of(), StackInfoReader.openAll(dir));

        try (CoreStack off = CoreStack.open(config("info-off").toBuilder().infoFile(false).build()))
        {
            assertNull(off.infoFile());
            off.stackCounters().recvDelivered.increment();
            assertEquals(1L, off.counters().get("recv_delivered"), "in-memory counters still count");
            try (Stream<Path> files = Files.list(dir))
            {
                assertEquals(List.of(), files.toList(), "no file with infoFile(false)");
            }
        }
    }

    @Test
    void aStackThatCannotCreateItsFileRunsWithoutOne() throws Exception
    {
        final Path notADirectory = Files.writeString(dir.resolve("plain-file"), "x");
        try (CoreStack stack = CoreStack.open(RdsStackConfig.builder().name("info-nodir")
            .infoDirectory(notADirectory.resolve("sub").toString()).build()))
        {
            assertNull(stack.infoFile());
            stack.stackCounters().sendQueued.increment();
            assertEquals(1L, stack.counters().get("send_queued"));
        }
    }

    @Test
    void twoStacksOfOneNameGetTwoFiles() throws Exception
    {
        try (CoreStack one = CoreStack.open(config("twin"));
             CoreStack two = CoreStack.open(config("twin")))
        {
            assertFalse(one.infoFile().equals(two.infoFile()));
            final List<StackInfoReader> readers = StackInfoReader.openAll(dir);
            assertEquals(2, readers.size());
            readers.forEach(StackInfoReader::close);
        }
    }

    @Test
    void foreignStaleAndOtherVersionFilesAreTold() throws Exception
    {
        Files.write(dir.resolve("junk.rds4j"), new byte[4096]);
        Files.write(dir.resolve("short.rds4j"), new byte[10]);
        Files.writeString(dir.resolve("notes.txt"), "not an info file name: not even looked at");
        try (CoreStack stack = CoreStack.open(config("info-skip")))
        {
            final byte[] live = Files.readAllBytes(stack.infoFile());
            final ByteBuffer otherVersion = ByteBuffer.wrap(live.clone()).order(ByteOrder.nativeOrder());
            otherVersion.putInt(StackInfoFile.VERSION_OFFSET, StackInfoFile.VERSION + 1);
            Files.write(dir.resolve("future.rds4j"), otherVersion.array());
            final ByteBuffer dead = ByteBuffer.wrap(live.clone()).order(ByteOrder.nativeOrder());
            dead.putLong(StackInfoFile.PID_OFFSET, Long.MAX_VALUE); // no such process
            Files.write(dir.resolve("dead.rds4j"), dead.array());

            final Map<String, String> skipped = new LinkedHashMap<>();
            final List<StackInfoReader> readers =
                StackInfoReader.openAll(dir, (file, reason) -> skipped.put(file.getFileName().toString(), reason));
            assertEquals(List.of("future.rds4j", "junk.rds4j", "short.rds4j"), new ArrayList<>(skipped.keySet()), skipped.toString());
            assertTrue(skipped.get("junk.rds4j").contains("bad magic"), skipped.toString());
            assertTrue(skipped.get("future.rds4j").contains("version " + (StackInfoFile.VERSION + 1)), skipped.toString());
            assertTrue(skipped.get("short.rds4j").contains("too short"), skipped.toString());

            assertEquals(2, readers.size());
            final StackInfoReader deadReader = readers.stream().filter(r -> r.pid() == Long.MAX_VALUE).findFirst().orElseThrow();
            final StackInfoReader liveReader = readers.stream().filter(r -> r.pid() != Long.MAX_VALUE).findFirst().orElseThrow();
            assertFalse(deadReader.isProcessAlive());
            assertFalse(deadReader.isAlive());
            assertTrue(liveReader.isAlive());
            readers.forEach(StackInfoReader::close);
        }
    }

    @Test
    void namesAreTruncatedOnCharacterBoundariesAndSanitisedForFileNames()
    {
        final String name = "é".repeat(40); // 80 bytes of UTF-8
        final byte[] truncated = StackInfoFile.truncatedUtf8(name, StackInfoFile.MAX_NAME_BYTES);
        assertArrayEquals("é".repeat(32).getBytes(StandardCharsets.UTF_8), truncated);
        assertEquals("a_b_c", StackInfoFile.fileNamePart("a/b c"));
        assertEquals("_", StackInfoFile.fileNamePart(""));
    }

    private static InetAddress address(final int a, final int b, final int c, final int d)
    {
        try
        {
            return InetAddress.getByAddress(new byte[] {(byte)a, (byte)b, (byte)c, (byte)d});
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
