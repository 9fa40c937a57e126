package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;
import org.rds4j.core.PeerAdmission;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.TestStacks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A stranger connects to a stack's RDS port and misbehaves, while two honest stacks exchange numbered messages
 * through it. For every hostile input: the stranger's connection is closed by the stack (end of stream or
 * reset, within a deadline), exactly the expected counter moves by exactly the expected amount (and the other
 * hostile-input counters do not), the honest messages keep arriving complete and in order, and the stack's
 * memory stays bounded.
 * <p>
 * Addresses: test {@code n} uses 127.29.n.x; the honest sender stack is at .200, the victim stack at .201
 * (the sender is lower, so it connects), strangers at .1 to .199 (lower than the victim, so the victim accepts
 * their connections and keeps them rather than connecting back). TCP port {@value #TCP_PORT}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileInputTest
{
    private static final int TCP_PORT = 29000;
    private static final Duration T = Duration.ofSeconds(10);
    private static final Duration FRAME_TIMEOUT = Duration.ofMillis(400);
    private static final String[] HOSTILE_COUNTERS = {
        "conn_bad_frame", "conn_frame_timeout", "conn_refused", "conn_refused_not_allowed", "conn_refused_rate",
        "conn_refused_limit",
    };

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(TCP_PORT).build());
    private final List<AutoCloseable> resources = new ArrayList<>();
    private HonestTraffic traffic;
    private CoreStack victim;
    private int subnet;

    @AfterEach
    void tearDown() throws Exception
    {
        if (traffic != null)
        {
            traffic.close();
            traffic = null;
        }
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            try
            {
                resources.get(i).close();
            }
            catch (final Exception ex)
            {
                // best effort
            }
        }
        resources.clear();
        stacks.close();
    }

    // ---------------------------------------------------------------- bad frames

    @Test
    void randomBytes() throws Exception
    {
        start(1, base());
        final byte[] noise = new byte[4096];
        new Random(0x5EED).nextBytes(noise);
        offend(2, noise, "conn_bad_frame", 1);
    }

    @Test
    void lengthAboveOneMebibyteIsNeverAllocated() throws Exception
    {
        start(2, base());
        final int before = transport().readBufferHighWater();
        assertTrue(before <= TcpFrameReader.DEFAULT_INITIAL_CAPACITY, "honest small frames keep the first buffer: " + before);
        offend(2, FakePeer.header(1, 0, 0x7FFF_FFFFL, 4000, 5000, 0, 0, 0), "conn_bad_frame", 1);
        offend(3, FakePeer.header(1, 0, 0xFFFF_FFFFL, 4000, 5000, 0, 0, 0), "conn_bad_frame", 1);
        offend(4, FakePeer.concat(FakePeer.header(1, 0, (1 << 20) + 1, 4000, 5000, 0, 0, 0), new byte[1000]),
            "conn_bad_frame", 1);
        assertEquals(before, transport().readBufferHighWater(),
            "no read buffer grew for a length above 1 MiB");
    }

    @Test
    void congestionUpdateOfWrongLength() throws Exception
    {
        start(3, base());
        offend(2, FakePeer.concat(FakePeer.header(0, 0, 4096, 0, 0, FakePeer.FLAG_CONG_BITMAP, 0, 0), new byte[4096]),
            "conn_bad_frame", 1);
        offend(3, FakePeer.concat(FakePeer.header(0, 0, 8193, 0, 0, FakePeer.FLAG_CONG_BITMAP, 0, 0), new byte[8193]),
            "conn_bad_frame", 1);
    }

    @Test
    void badNonZeroChecksum() throws Exception
    {
        start(4, base());
        final byte[] header = FakePeer.header(1, 0, 5, 4000, 5000, 0, 0, 0);
        final int good = FakePeer.checksumOf(header);
        final int bad = good == 0x1234 ? 0x4321 : 0x1234;
        header[30] = (byte)(bad >>> 8);
        header[31] = (byte)bad;
        offend(2, FakePeer.concat(header, new byte[5]), "conn_bad_frame", 1);
    }

    @Test
    void unknownExtensionHeaderType() throws Exception
    {
        start(5, base());
        final byte[] unknownType = FakePeer.header(1, 0, 5, 4000, 5000, 0, 0, 0);
        unknownType[32] = 7; // the first type past GEN_NUM (6)
        offend(2, FakePeer.concat(unknownType, new byte[5]), "conn_bad_frame", 1);
        final byte[] typeAboveFifteen = FakePeer.header(1, 0, 0, 4000, 5000, 0, 0, 0);
        typeAboveFifteen[32] = (byte)0xC8;
        offend(3, typeAboveFifteen, "conn_bad_frame", 1);
        final byte[] overrun = FakePeer.header(1, 0, 0, 4000, 5000, 0, 0, 0);
        overrun[32] = 1; // VERSION, 4 bytes: fine
        overrun[37] = 3; // RDMA_DEST at 5, 8 bytes: ends at 14
        overrun[46] = 1; // VERSION at 14 needs 4 bytes, 1 is left: overruns the 16 bytes
        offend(4, overrun, "conn_bad_frame", 1);
    }

    @Test
    void payloadFromPortZero() throws Exception
    {
        start(6, base());
        offend(2, FakePeer.concat(FakePeer.header(1, 0, 5, 0, 5000, 0, 0, 0), "hello".getBytes()), "conn_bad_frame", 1);
    }

    @Test
    void payloadToPortOne() throws Exception
    {
        start(7, base());
        offend(2, FakePeer.concat(FakePeer.header(1, 0, 5, 4000, 1, 0, 0, 0), "hello".getBytes()), "conn_bad_frame", 1);
    }

    // ---------------------------------------------------------------- slowloris

    @Test
    void truncatedFrameThenStallTimesOut() throws Exception
    {
        start(8, base());
        // a valid header announcing 1000 bytes, then 10 of them, then nothing
        final long startedNs = System.nanoTime();
        offend(2, FakePeer.concat(FakePeer.header(1, 0, 1000, 4000, 5000, 0, 0, 0), new byte[10]), "conn_frame_timeout", 1);
        final long elapsedNs = System.nanoTime() - startedNs;
        assertTrue(elapsedNs >= FRAME_TIMEOUT.toNanos(), "dropped only after frameTimeout: " + elapsedNs / 1000 + " us");
        // half a header, then nothing
        offend(3, new byte[20], "conn_frame_timeout", 1);
    }

    @Test
    void slowFrameTimesOutEvenWhileBytesTrickle() throws Exception
    {
        start(9, base());
        final FakePeer stranger = stranger(2);
        final Map<String, Long> before = hostileCounters();
        stranger.sendRaw(FakePeer.header(1, 0, 1 << 16, 4000, 5000, 0, 0, 0));
        final long startedNs = System.nanoTime();
        // one byte every 20 ms: progress, but the frame never completes within the timeout
        boolean closed = false;
        while (!closed && System.nanoTime() - startedNs < T.toNanos())
        {
            try
            {
                stranger.sendRaw(new byte[1]);
            }
            catch (final IOException ex)
            {
                closed = true; // reset: the stack dropped us
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            closed |= counter("conn_frame_timeout") > before.get("conn_frame_timeout");
        }
        stranger.expectClosedByPeer(T);
        assertOnlyChanged(before, "conn_frame_timeout", 1);
        traffic.assertFlowing();
    }

    // ---------------------------------------------------------------- floods

    @Test
    void connectionFloodOfOneNodePairIsRateLimited() throws Exception
    {
        start(10, base().peerConnectRate(10));
        final Map<String, Long> before = hostileCounters();
        final long upBefore = counter("conn_up");
        final InetAddress from = address(2);
        final InetSocketAddress target = new InetSocketAddress(address(201), TCP_PORT);
        final int attempts = 500;
        final long startedNs = System.nanoTime();
        for (int i = 0; i < attempts; i++)
        {
            FakePeer.connect(from, target, T).close();
        }
        final long elapsedNs = System.nanoTime() - startedNs;
        assertTrue(elapsedNs < PeerAdmission.BLOCK_NS - TimeUnit.SECONDS.toNanos(1),
            "the flood must fit in one block period for the exact count below; took " + elapsedNs / 1_000_000 + " ms");
        // every connection is accepted and handled once: let the stack catch up with the backlog
        Await.until(T, () -> counter("conn_up") - upBefore + delta(before, "conn_refused") + delta(before, "conn_refused_rate") == attempts,
            () -> "all " + attempts + " accepted: up " + (counter("conn_up") - upBefore) + ", " + hostileCounters());
        assertEquals(attempts - 10, delta(before, "conn_refused_rate"),
            "10 accepted in the first second, then the node pair is refused for 10 s: " + hostileCounters());
        for (final String name : new String[] {"conn_bad_frame", "conn_frame_timeout", "conn_refused_not_allowed", "conn_refused_limit"})
        {
            assertEquals(0, delta(before, name), name);
        }
        // still refused: the connection is closed at once
        final FakePeer again = track(FakePeer.connect(from, target, T));
        again.expectClosedByPeer(T);
        Await.until(T, () -> delta(before, "conn_refused_rate") == attempts - 10 + 1, () -> "one more refusal");
        traffic.assertFlowing();
    }

    @Test
    void connectionFloodFromManyAddressesIsCappedByMaxPeers() throws Exception
    {
        final int maxPeers = 16;
        start(11, base().maxPeers(maxPeers));
        final Map<String, Long> before = hostileCounters();
        final int strangers = 120;
        final List<FakePeer> connected = new ArrayList<>();
        for (int i = 0; i < strangers; i++)
        {
            connected.add(track(FakePeer.connect(address(1 + i), new InetSocketAddress(address(201), TCP_PORT), T)));
        }
        // the honest sender is one peer; maxPeers - 1 strangers get in, the rest are refused
        final int refused = strangers - (maxPeers - 1);
        Await.until(T, () -> delta(before, "conn_refused_limit") == refused,
            () -> "refusals for maxPeers: " + hostileCounters());
        for (int i = maxPeers - 1; i < strangers; i++)
        {
            connected.get(i).expectClosedByPeer(T);
        }
        assertOnlyChanged(before, "conn_refused_limit", refused);
        final long strangerConnections = victim.connections().stream()
            .filter(c -> !c.remote().equals(address(200)) && !c.remote().equals(address(201))).count();
        assertEquals(maxPeers - 1, strangerConnections, "connections kept for strangers: " + victim.connections());
        // the pair the victim already has is not refused: the honest sender reconnects after a reset
        transport().abortAll();
        traffic.assertFlowing();
        assertEquals(refused, delta(before, "conn_refused_limit"));
    }

    // ---------------------------------------------------------------- allow-list

    @Test
    void allowListRefusesStrangersAndSendsToThem() throws Exception
    {
        start(12, base().allowedPeers("127.29.12.200/31"));
        final Map<String, Long> before = hostileCounters();
        final long upBefore = counter("conn_up");
        for (int i = 0; i < 3; i++)
        {
            final FakePeer stranger = track(FakePeer.connect(address(2), new InetSocketAddress(address(201), TCP_PORT), T));
            stranger.expectClosedByPeer(T);
        }
        // a higher stranger is not connected back to either
        final FakePeer higher = track(FakePeer.connect(address(250), new InetSocketAddress(address(201), TCP_PORT), T));
        higher.expectClosedByPeer(T);
        Await.until(T, () -> delta(before, "conn_refused_not_allowed") == 4, () -> "refusals: " + hostileCounters());
        assertOnlyChanged(before, "conn_refused_not_allowed", 4);
        assertEquals(upBefore, counter("conn_up"), "no connection came up for a stranger");
        assertTrue(victim.connections().stream().noneMatch(c -> c.remote().equals(address(2)) || c.remote().equals(address(250))),
            "no connection state is kept for a refused peer: " + victim.connections());

        final RdsSocket socket = traffic.receiver;
        assertEquals(RdsResult.EACCES, socket.send(ByteBuffer.wrap(new byte[5]), new InetSocketAddress(address(2), 5000)));
        assertEquals("EACCES", RdsResult.name(RdsResult.EACCES));
        assertEquals(0, counter("conn_attempt_failed"), "nothing was attempted");
        traffic.assertFlowing();
    }

    // ---------------------------------------------------------------- fixture

    private RdsStackConfig.Builder base()
    {
        return RdsStackConfig.builder().infoFile(false)
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).frameTimeout(FRAME_TIMEOUT).build());
    }

    /** Opens the honest sender (.200) and the victim (.201) of test {@code n}, with honest traffic flowing. */
    private void start(final int n, final RdsStackConfig.Builder victimConfig) throws IOException
    {
        subnet = n;
        final RdsStack sender = stacks.open(base().name("honest-" + n).build());
        victim = (CoreStack)stacks.open(victimConfig.name("victim-" + n).build());
        traffic = new HonestTraffic(sender, victim, address(200), address(201));
        traffic.assertFlowing();
    }

    private InetAddress address(final int host)
    {
        return ip("127.29." + subnet + "." + host);
    }

    private TcpTransport transport()
    {
        return (TcpTransport)victim.transport("tcp");
    }

    private FakePeer stranger(final int host) throws IOException
    {
        return track(FakePeer.connect(address(host), new InetSocketAddress(address(201), TCP_PORT), T));
    }

    /**
     * A stranger at 127.29.n.{@code host} connects, sends {@code bytes} and then nothing; the victim must close
     * the connection, move {@code counter} by {@code expected} and nothing else, and keep the honest traffic
     * flowing.
     */
    private void offend(final int host, final byte[] bytes, final String counter, final long expected) throws IOException
    {
        final Map<String, Long> before = hostileCounters();
        final ByteArrayOutputStream log = new ByteArrayOutputStream();
        final PrintStream stderr = System.err;
        // slf4j-simple writes to whatever System.err is at the time of each log call
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
        try
        {
            final FakePeer stranger = stranger(host);
            stranger.sendRaw(bytes);
            stranger.expectClosedByPeer(T);
            Await.until(T, () -> delta(before, counter) == expected, () -> counter + " after the offence: " + hostileCounters());
            assertOnlyChanged(before, counter, expected);
            traffic.assertFlowing();
        }
        finally
        {
            System.setErr(stderr);
        }
        final String peer = "->" + address(host).getHostAddress() + " ";
        final List<String> drops = log.toString(StandardCharsets.UTF_8).lines()
            .filter(line -> line.contains(peer) && (line.contains(" dropped: ") || line.contains(" down: ")))
            .toList();
        assertEquals(1, drops.size(), "one log line per offender: " + drops);
        assertTrue(drops.get(0).contains("WARN"), drops.get(0));
    }

    private Map<String, Long> hostileCounters()
    {
        final Map<String, Long> all = victim.counters();
        final Map<String, Long> values = new LinkedHashMap<>();
        for (final String name : HOSTILE_COUNTERS)
        {
            values.put(name, all.get(name));
        }
        return values;
    }

    private long counter(final String name)
    {
        return victim.counters().get(name);
    }

    private long delta(final Map<String, Long> before, final String name)
    {
        return counter(name) - before.get(name);
    }

    private void assertOnlyChanged(final Map<String, Long> before, final String changed, final long by)
    {
        final Map<String, Long> after = hostileCounters();
        for (final String name : HOSTILE_COUNTERS)
        {
            assertEquals(before.get(name) + (name.equals(changed) ? by : 0), after.get(name),
                name + ": before " + before + ", after " + after);
        }
    }

    private <T extends AutoCloseable> T track(final T resource)
    {
        resources.add(resource);
        return resource;
    }

    /**
     * Numbered messages from a socket on the sender stack to a socket on the victim, sent by one thread and
     * checked by another: each must arrive once, in order, from the sender.
     */
    private static final class HonestTraffic implements AutoCloseable
    {
        final RdsSocket sender;
        final RdsSocket receiver;
        private final InetSocketAddress from;
        private final InetSocketAddress to;
        private final AtomicLong sent = new AtomicLong();
        private final AtomicLong received = new AtomicLong();
        private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        private final Thread sendThread;
        private final Thread receiveThread;
        private volatile boolean running = true;

        HonestTraffic(final RdsStack senderStack, final RdsStack victimStack, final InetAddress senderAddress,
            final InetAddress victimAddress) throws IOException
        {
            from = new InetSocketAddress(senderAddress, 4000);
            to = new InetSocketAddress(victimAddress, 5000);
            sender = senderStack.openSocket().bind(from);
            receiver = victimStack.openSocket().bind(to);
            sender.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofMillis(100));
            receiver.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(100));
            sendThread = new Thread(this::sendLoop, "honest-sender");
            receiveThread = new Thread(this::receiveLoop, "honest-receiver");
            sendThread.setDaemon(true);
            receiveThread.setDaemon(true);
            receiveThread.start();
            sendThread.start();
        }

        private void sendLoop()
        {
            final ByteBuffer message = ByteBuffer.allocate(64);
            try
            {
                while (running)
                {
                    message.clear();
                    message.putLong(0, sent.get() + 1).limit(64);
                    final int result = sender.send(message, to);
                    if (result >= 0)
                    {
                        sent.incrementAndGet();
                    }
                    else if (result != RdsResult.ETIMEDOUT)
                    {
                        errors.add("send: " + RdsResult.name(result));
                    }
                    // a steady trickle, not a flood: the machine has two cores
                    LockSupport.parkNanos(200_000);
                }
            }
            catch (final IOException ex)
            {
                if (running)
                {
                    errors.add("send: " + ex);
                }
            }
        }

        private void receiveLoop()
        {
            final ByteBuffer message = ByteBuffer.allocate(128);
            try
            {
                while (running)
                {
                    message.clear();
                    final InetSocketAddress source = receiver.receive(message);
                    if (source == null)
                    {
                        continue;
                    }
                    final long number = message.getLong(0);
                    if (!source.equals(from))
                    {
                        errors.add("message from " + source);
                    }
                    else if (message.position() != 64 || number != received.get() + 1)
                    {
                        errors.add("expected message " + (received.get() + 1) + " of 64 bytes, got " + number + " of " + message.position());
                    }
                    received.set(number);
                }
            }
            catch (final IOException ex)
            {
                if (running)
                {
                    errors.add("receive: " + ex);
                }
            }
        }

        /** Waits until 20 messages sent from now on have arrived, and checks nothing went wrong so far. */
        void assertFlowing()
        {
            final long target = sent.get() + 20;
            Await.until(T, () -> received.get() >= target || !errors.isEmpty(),
                () -> "honest messages up to " + target + " (sent " + sent.get() + ", received " + received.get() + ")");
            assertTrue(errors.isEmpty(), "honest traffic: " + errors);
        }

        @Override
        public void close() throws Exception
        {
            running = false;
            sendThread.join(5000);
            receiveThread.join(5000);
            assertTrue(errors.isEmpty(), "honest traffic: " + errors);
        }
    }
}
