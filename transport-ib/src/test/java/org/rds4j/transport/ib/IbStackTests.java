package org.rds4j.transport.ib;

import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.core.CoreStack;
import org.rds4j.core.PeerAdmission;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.IdleWindow;
import org.rds4j.core.test.ThreadMeter;
import org.rds4j.core.test.ThreadWakeUps;
import org.rds4j.transport.ib.verbs.CmEventChannel;
import org.rds4j.transport.ib.verbs.CmId;
import org.rds4j.transport.ib.verbs.CompletionQueue;
import org.rds4j.transport.ib.verbs.VerbsContext;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.rds4j.transport.ib.verbs.VerbsLayout.RDMA_CM_EVENT_ADDR_RESOLVED;
import static org.rds4j.transport.ib.verbs.VerbsLayout.RDMA_CM_EVENT_REJECTED;
import static org.rds4j.transport.ib.verbs.VerbsLayout.RDMA_CM_EVENT_ROUTE_RESOLVED;

/**
 * The IB transport's tests on a real RDMA device (in CI: Soft-RoCE in the qemu guest, two addresses 10.77.0.1
 * and 10.77.0.2 on its dummy eth0, both on rxe0). Two stacks, one per address, talk over IB. Each case prints
 * {@code PASS <name> (<s>)} or {@code FAIL <name>: <why>}; the exit status is the number of failures (0 = all
 * passed).
 * <p>
 * {@code java -cp ... org.rds4j.transport.ib.IbStackTests [10.77.0.1 10.77.0.2 [case ...]]}, run by
 * {@code transport-ib/src/test/vm/run-ib-tests.sh}. Cases: selection, oneToOne, allToAll, largeMessages,
 * creditsExhausted, crossedConnect, teardownUnderLoad, idleBurnsNoCpu, peerCap, connectRate.
 */
public final class IbStackTests
{
    private static final Duration RECEIVE_TIMEOUT = Duration.ofSeconds(30);
    private static InetAddress addressA;
    private static InetAddress addressB;
    private static int stackCount;

    private IbStackTests()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        addressA = InetAddress.getByName(args.length > 0 ? args[0] : "10.77.0.1");
        addressB = InetAddress.getByName(args.length > 1 ? args[1] : "10.77.0.2");
        final Map<String, Case> cases = new LinkedHashMap<>();
        cases.put("selection", IbStackTests::selection);
        cases.put("oneToOne", IbStackTests::oneToOne);
        cases.put("allToAll", IbStackTests::allToAll);
        cases.put("largeMessages", IbStackTests::largeMessages);
        cases.put("creditsExhausted", IbStackTests::creditsExhausted);
        cases.put("crossedConnect", IbStackTests::crossedConnect);
        cases.put("teardownUnderLoad", IbStackTests::teardownUnderLoad);
        cases.put("idleBurnsNoCpu", IbStackTests::idleBurnsNoCpu);
        cases.put("peerCap", IbStackTests::peerCap);
        cases.put("connectRate", IbStackTests::connectRate);
        final List<String> chosen = args.length > 2 ? Arrays.asList(args).subList(2, args.length) : List.copyOf(cases.keySet());
        int failed = 0;
        final long start = System.nanoTime();
        for (final String name : chosen)
        {
            final Case test = cases.get(name);
            final long t0 = System.nanoTime();
            try
            {
                if (test == null)
                {
                    throw new IllegalArgumentException("no case " + name);
                }
                test.run();
                System.out.printf("PASS %s (%.1f s)%n", name, (System.nanoTime() - t0) / 1e9);
            }
            catch (final Throwable ex)
            {
                failed++;
                System.out.printf("FAIL %s (%.1f s): %s%n", name, (System.nanoTime() - t0) / 1e9, ex);
                ex.printStackTrace(System.out);
            }
        }
        System.out.printf("IbStackTests: %d of %d cases failed, %.1f s%n", failed, chosen.size(), (System.nanoTime() - start) / 1e9);
        System.exit(failed);
    }

    @FunctionalInterface
    interface Case
    {
        void run() throws Exception;
    }

    static void check(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new AssertionError(message);
        }
    }

    /** @return the stack's {@code ib_} counters, for the log. */
    static Map<String, Long> ibCounters(final RdsStack stack)
    {
        final Map<String, Long> ib = new LinkedHashMap<>();
        stack.counters().forEach((name, value) -> {
            if (name.startsWith("ib_"))
            {
                ib.put(name, value);
            }
        });
        return ib;
    }

    static boolean nothingUnacked(final RdsStack stack)
    {
        return stack.connections().stream().allMatch(c -> c.unacked() == 0);
    }

    static CoreStack stack(final TransportType transport, final UnaryOperator<RdsStackConfig.Builder> tweak)
    {
        final RdsStackConfig.Builder builder = RdsStackConfig.builder().name("ibt" + (++stackCount)).infoFile(false)
            .transport(transport).heartbeat(Duration.ofSeconds(2), Duration.ofSeconds(20))
            .connectTimeout(Duration.ofSeconds(10));
        return CoreStack.open(tweak.apply(builder).build());
    }

    static RdsSocket socket(final RdsStack stack, final InetAddress address, final int port) throws Exception
    {
        final RdsSocket socket = stack.openSocket();
        socket.setOption(RdsOptions.SO_RCVTIMEO, RECEIVE_TIMEOUT);
        socket.setOption(RdsOptions.SO_SNDTIMEO, RECEIVE_TIMEOUT);
        socket.setOption(RdsOptions.SO_SNDBUF, 8 << 20);
        socket.setOption(RdsOptions.SO_RCVBUF, 64 << 20);
        return socket.bind(new InetSocketAddress(address, port));
    }

    // ------------------------------------------------------------------ message content

    /** Payload: int sender, int sequence, then bytes derived from both. */
    static void fill(final ByteBuffer buffer, final int sender, final int sequence, final int length)
    {
        buffer.clear();
        buffer.putInt(sender).putInt(sequence);
        for (int i = 8; i < length; i++)
        {
            buffer.put((byte)(sender * 31 + sequence * 7 + i));
        }
        buffer.flip();
    }

    static int sizeOf(final int sequence, final int maxSize)
    {
        if (maxSize >= RdsSocket.MAX_MESSAGE_SIZE)
        {
            return maxSize;
        }
        return 8 + (int)((sequence * 2654435761L & 0x7FFFFFFFL) % (maxSize - 8));
    }

    /** Receives {@code count} messages per sender on a socket, checking order and content; returns SHA-256 per sender. */
    static final class Receiver extends Thread
    {
        final RdsSocket socket;
        final int senders;
        final int count;
        final int maxSize;
        final Map<Integer, MessageDigest> digests = new ConcurrentHashMap<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicLong received = new AtomicLong();

        Receiver(final RdsSocket socket, final int senders, final int count, final int maxSize)
        {
            super("receiver-" + socket.localAddress());
            this.socket = socket;
            this.senders = senders;
            this.count = count;
            this.maxSize = maxSize;
            setDaemon(true);
        }

        @Override
        public void run()
        {
            try
            {
                final ByteBuffer buffer = ByteBuffer.allocate(maxSize + 8);
                final Map<Integer, Integer> next = new ConcurrentHashMap<>();
                final long total = (long)senders * count;
                while (received.get() < total)
                {
                    buffer.clear();
                    final InetSocketAddress from = socket.receive(buffer);
                    check(from != null, socket.localAddress() + ": nothing for " + RECEIVE_TIMEOUT + " after " +
                        received.get() + " of " + total);
                    buffer.flip();
                    final int sender = buffer.getInt(0);
                    final int sequence = buffer.getInt(4);
                    final int expected = next.getOrDefault(sender, 0);
                    check(sequence == expected, socket.localAddress() + ": from sender " + sender + " got #" + sequence +
                        ", expected #" + expected + " (loss, duplicate or reordering)");
                    for (int i = 8; i < buffer.limit(); i++)
                    {
                        if (buffer.get(i) != (byte)(sender * 31 + sequence * 7 + i))
                        {
                            throw new AssertionError("byte " + i + " of message #" + sequence + " from " + sender + " differs");
                        }
                    }
                    digests.computeIfAbsent(sender, s -> sha256()).update(buffer);
                    next.put(sender, expected + 1);
                    received.incrementAndGet();
                }
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
        }

        void finish(final long timeoutMs) throws Exception
        {
            join(timeoutMs);
            if (failure.get() != null)
            {
                throw new AssertionError("receiver failed", failure.get());
            }
            check(!isAlive(), "receiver still waiting after " + timeoutMs + " ms: " + received.get() + " received");
        }
    }

    static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /** Sends {@code count} messages from one socket to each destination, round robin; returns the SHA-256 per destination. */
    static final class Sender extends Thread
    {
        final RdsSocket socket;
        final int id;
        final List<InetSocketAddress> destinations;
        final int count;
        final int maxSize;
        final Map<InetSocketAddress, MessageDigest> digests = new LinkedHashMap<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicLong backPressure = new AtomicLong();
        final boolean blocking;

        Sender(final RdsSocket socket, final int id, final List<InetSocketAddress> destinations, final int count,
            final int maxSize, final boolean blocking)
        {
            super("sender-" + id);
            this.socket = socket;
            this.id = id;
            this.destinations = destinations;
            this.count = count;
            this.maxSize = maxSize;
            this.blocking = blocking;
            setDaemon(true);
            for (final InetSocketAddress d : destinations)
            {
                digests.put(d, sha256());
            }
        }

        @Override
        public void run()
        {
            try
            {
                socket.configureBlocking(blocking);
                final ByteBuffer buffer = ByteBuffer.allocateDirect(maxSize + 8);
                for (int sequence = 0; sequence < count; sequence++)
                {
                    for (final InetSocketAddress destination : destinations)
                    {
                        fill(buffer, id, sequence, sizeOf(sequence, maxSize));
                        digests.get(destination).update(buffer.duplicate());
                        final long deadline = System.nanoTime() + RECEIVE_TIMEOUT.toNanos();
                        while (true)
                        {
                            final int rc = socket.send(buffer, destination);
                            if (rc >= 0)
                            {
                                break;
                            }
                            if (rc != RdsResult.EAGAIN && rc != RdsResult.ENOBUFS)
                            {
                                throw new AssertionError("send #" + sequence + " to " + destination + ": " + RdsResult.name(rc));
                            }
                            backPressure.incrementAndGet();
                            check(System.nanoTime() < deadline, "send #" + sequence + " blocked for " + RECEIVE_TIMEOUT);
                            Thread.sleep(1); // back off before retrying a refused send: pacing, not a wait
                        }
                    }
                }
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
        }

        void finish(final long timeoutMs) throws Exception
        {
            join(timeoutMs);
            if (failure.get() != null)
            {
                throw new AssertionError("sender " + id + " failed", failure.get());
            }
            check(!isAlive(), "sender " + id + " still sending after " + timeoutMs + " ms");
        }
    }

    static String hex(final MessageDigest digest)
    {
        try
        {
            return HexFormat.of().formatHex(((MessageDigest)digest.clone()).digest());
        }
        catch (final CloneNotSupportedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    static void compareDigests(final List<Sender> senders, final Map<InetSocketAddress, Receiver> receivers)
    {
        for (final Sender sender : senders)
        {
            for (final Map.Entry<InetSocketAddress, MessageDigest> e : sender.digests.entrySet())
            {
                final MessageDigest got = receivers.get(e.getKey()).digests.get(sender.id);
                check(got != null, "receiver " + e.getKey() + " got nothing from sender " + sender.id);
                check(hex(e.getValue()).equals(hex(got)), "SHA-256 of sender " + sender.id + " -> " + e.getKey() + " differs");
            }
        }
    }

    static String transportOf(final RdsStack stack)
    {
        return stack.connections().stream().filter(c -> !c.transport().equals("loop")).map(c -> c.transport() + ":" +
            c.state()).findFirst().orElse("none");
    }

    // ------------------------------------------------------------------ cases

    /** AUTO picks IB for the rxe address and TCP for 127.0.0.x; forcing IB on 127.0.0.1 fails at bind with the reason. */
    static void selection() throws Exception
    {
        try (CoreStack a = stack(TransportType.AUTO, b -> b); CoreStack b = stack(TransportType.AUTO, x -> x))
        {
            final IbTransport ib = (IbTransport)a.transport("ib");
            check(ib.canServe(addressA), "IB should serve " + addressA);
            check(!ib.canServe(InetAddress.getByName("127.0.0.1")), "IB should not serve 127.0.0.1");
            try (RdsSocket sa = socket(a, addressA, 4100); RdsSocket sb = socket(b, addressB, 4100);
                 RdsSocket la = socket(a, InetAddress.getByName("127.0.0.1"), 4101);
                 RdsSocket lb = socket(b, InetAddress.getByName("127.0.0.2"), 4101))
            {
                final ByteBuffer buffer = ByteBuffer.allocate(64);
                sa.send(ByteBuffer.wrap(new byte[] {1}), sb.localAddress());
                check(sb.receive(buffer) != null, "nothing over AUTO on the RDMA address");
                la.send(ByteBuffer.wrap(new byte[] {2}), lb.localAddress());
                buffer.clear();
                check(lb.receive(buffer) != null, "nothing over AUTO on 127.0.0.x");
                final List<String> kinds = a.connections().stream().map(c -> c.remote().getHostAddress() + "=" + c.transport()).toList();
                check(kinds.contains(addressB.getHostAddress() + "=ib"), "AUTO on " + addressA + " should be ib: " + kinds);
                check(kinds.contains("127.0.0.2=tcp"), "AUTO on 127.0.0.1 should be tcp: " + kinds);
            }
            try (RdsSocket forced = a.openSocket())
            {
                forced.setOption(RdsOptions.RDS_TRANSPORT, TransportType.IB);
                try
                {
                    forced.bind(new InetSocketAddress("127.0.0.1", 4102));
                    throw new AssertionError("binding IB to 127.0.0.1 should fail");
                }
                catch (final RdsException ex)
                {
                    check(ex.code() == RdsResult.EADDRNOTAVAIL && ex.getMessage().contains("no RDMA device has the address"),
                        "unexpected: " + ex);
                    System.out.println("  forcing IB on 127.0.0.1: " + ex.getMessage());
                }
            }
        }
    }

    /** One socket per stack, both directions at once, 2,000 messages of 8 B..12 KiB each way; then allocation. */
    static void oneToOne() throws Exception
    {
        try (CoreStack a = stack(TransportType.IB, b -> b); CoreStack b = stack(TransportType.IB, x -> x);
             RdsSocket sa = socket(a, addressA, 4200); RdsSocket sb = socket(b, addressB, 4200))
        {
            final int count = 2000;
            final int maxSize = 12 * 1024;
            final Receiver ra = new Receiver(sa, 1, count, maxSize);
            final Receiver rb = new Receiver(sb, 1, count, maxSize);
            final Sender ab = new Sender(sa, 1, List.of(sb.localAddress()), count, maxSize, true);
            final Sender ba = new Sender(sb, 2, List.of(sa.localAddress()), count, maxSize, true);
            ra.start();
            rb.start();
            ab.start();
            ba.start();
            ab.finish(120_000);
            ba.finish(120_000);
            ra.finish(120_000);
            rb.finish(120_000);
            compareDigests(List.of(ab, ba), Map.of(sa.localAddress(), ra, sb.localAddress(), rb));
            check(transportOf(a).startsWith("ib"), "transport " + transportOf(a));
            System.out.println("  a: " + ibCounters(a));
            allocation(a, b, sa, sb);
        }
    }

    /**
     * Near zero, where one 16-byte object per message would make 16. Looser than SteadyStateAllocationTest's 1 B
     * over TCP: the guest is slower, so what the stacks allocate by time (heartbeats) weighs more per message.
     * Measured 0.21 B, from the agents' timers. With a warm-up of 3,000 messages instead of 20,000 it was
     * 0.8-1.2 B, nearly all on the application thread: code the JIT had not yet compiled under emulation.
     */
    private static final double MAX_HEAP_BYTES_PER_MESSAGE = 2.0;

    /**
     * Steady-state heap allocation per 1 KiB message of every thread that handles it: both stacks' threads (agents,
     * IB event threads) and this one, which sends and receives ({@link ThreadMeter}).
     */
    static void allocation(final CoreStack a, final CoreStack b, final RdsSocket sa, final RdsSocket sb) throws Exception
    {
        final ThreadMeter threads = ThreadMeter.ofStacks(a.config().name(), b.config().name()).and(Thread.currentThread());
        final ByteBuffer out = ByteBuffer.allocateDirect(1024);
        final ByteBuffer in = ByteBuffer.allocateDirect(2048);
        final int warm = 20_000; // enough for the JIT under emulation (MAX_HEAP_BYTES_PER_MESSAGE)
        final int measured = 10_000;
        final int window = 100; // 100 in flight at a time: a pipeline, not one round trip per message
        final long runsBefore = b.counters().get("recv_runs");
        ThreadMeter.AllocationStart start = null;
        for (int i = 0; i < warm + measured; i += window)
        {
            if (i == warm)
            {
                start = threads.startAllocation();
            }
            for (int j = 0; j < window; j++)
            {
                out.clear();
                if (sa.send(out, sb.localAddress()) != 1024)
                {
                    throw new AssertionError("allocation run: a send failed"); // a message built only then: it allocates
                }
            }
            for (int j = 0; j < window; j++)
            {
                in.clear();
                if (sb.receive(in) == null)
                {
                    throw new AssertionError("allocation run: message " + (i + j) + " lost");
                }
            }
        }
        final long[] bytes = threads.allocatedSince(start);
        final long allocated = Arrays.stream(bytes).sum();
        final double perMessage = allocated / (double)measured;
        System.out.printf("  heap allocated by %s: %s bytes, %d in all over %d messages (%.4f B/message)%n",
            threads, Arrays.toString(bytes), allocated, measured, perMessage);
        check(perMessage < MAX_HEAP_BYTES_PER_MESSAGE, "the send/receive path allocates " + perMessage + " B per message");
        // messages of one fragment that one poll of the CQ brings are queued as runs (docs/receive-runs.md)
        final long runs = b.counters().get("recv_runs") - runsBefore;
        System.out.printf("  runs queued by the receiving stack: %d for %d messages%n", runs, warm + measured);
        check(runs > 0, "no run of messages of one CQ poll was queued (recv_runs)");
    }

    /** Three sockets per stack; each sends to every socket of the other stack; per-pair order and SHA-256. */
    static void allToAll() throws Exception
    {
        try (CoreStack a = stack(TransportType.IB, b -> b); CoreStack b = stack(TransportType.IB, x -> x))
        {
            final int perStack = 3;
            final int count = 300;
            final int maxSize = 9000;
            final List<RdsSocket> socketsA = new ArrayList<>();
            final List<RdsSocket> socketsB = new ArrayList<>();
            for (int i = 0; i < perStack; i++)
            {
                socketsA.add(socket(a, addressA, 4300 + i));
                socketsB.add(socket(b, addressB, 4300 + i));
            }
            final Map<InetSocketAddress, Receiver> receivers = new LinkedHashMap<>();
            for (final RdsSocket s : socketsA)
            {
                receivers.put(s.localAddress(), new Receiver(s, perStack, count, maxSize));
            }
            for (final RdsSocket s : socketsB)
            {
                receivers.put(s.localAddress(), new Receiver(s, perStack, count, maxSize));
            }
            final List<Sender> senders = new ArrayList<>();
            for (int i = 0; i < perStack; i++)
            {
                senders.add(new Sender(socketsA.get(i), 10 + i, socketsB.stream().map(RdsSocket::localAddress).toList(), count, maxSize, true));
                senders.add(new Sender(socketsB.get(i), 20 + i, socketsA.stream().map(RdsSocket::localAddress).toList(), count, maxSize, true));
            }
            receivers.values().forEach(Thread::start);
            senders.forEach(Thread::start);
            for (final Sender s : senders)
            {
                s.finish(180_000);
            }
            for (final Receiver r : receivers.values())
            {
                r.finish(180_000);
            }
            compareDigests(senders, receivers);
            socketsA.forEach(RdsSocket::close);
            socketsB.forEach(RdsSocket::close);
        }
    }

    /** 1 MiB messages (256 fragments each) both ways, content checked. */
    static void largeMessages() throws Exception
    {
        try (CoreStack a = stack(TransportType.IB, b -> b); CoreStack b = stack(TransportType.IB, x -> x);
             RdsSocket sa = socket(a, addressA, 4400); RdsSocket sb = socket(b, addressB, 4400))
        {
            final int count = 12;
            final int size = RdsSocket.MAX_MESSAGE_SIZE;
            final Receiver ra = new Receiver(sa, 1, count, size);
            final Receiver rb = new Receiver(sb, 1, count, size);
            final Sender ab = new Sender(sa, 1, List.of(sb.localAddress()), count, size, true);
            final Sender ba = new Sender(sb, 2, List.of(sa.localAddress()), count, size, true);
            ra.start();
            rb.start();
            ab.start();
            ba.start();
            ab.finish(120_000);
            ba.finish(120_000);
            ra.finish(120_000);
            rb.finish(120_000);
            compareDigests(List.of(ab, ba), Map.of(sa.localAddress(), ra, sb.localAddress(), rb));
            // the agent counts a batch just after posting it, and the peer may take the batch's last message first
            Await.within(Duration.ofSeconds(5), () -> a.counters().get("ib_fragments_sent") >= 256L * count);
            final long fragments = a.counters().get("ib_fragments_sent");
            System.out.println("  a: " + ibCounters(a));
            check(fragments >= 256L * count, "1 MiB messages should take 256 fragments each: " + fragments);
        }
    }

    /**
     * Receive rings of 16 buffers: the sender runs out of credits all the time; the receiving application stops
     * reading until its socket fills and its port goes congested: the sender sees back-pressure (EAGAIN /
     * ENOBUFS), never loss; when the application reads again, everything arrives in order.
     */
    static void creditsExhausted() throws Exception
    {
        try (CoreStack a = stack(TransportType.IB, b -> b
            .transportConfig(IbConfig.builder().ibReceiveRing(16).ibSendRing(16).build()));
             CoreStack b = stack(TransportType.IB, x -> x
                 .transportConfig(IbConfig.builder().ibReceiveRing(16).ibSendRing(16).build()));
             RdsSocket sa = socket(a, addressA, 4500); RdsSocket sb = socket(b, addressB, 4500))
        {
            sb.setOption(RdsOptions.SO_RCVBUF, 256 * 1024);
            sa.setOption(RdsOptions.SO_SNDBUF, 512 * 1024);
            final int count = 150;
            final int maxSize = 64 * 1024;
            final Sender ab = new Sender(sa, 1, List.of(sb.localAddress()), count, maxSize, false);
            ab.start();
            // the application does not read until its socket is full and the sender has seen its port congested
            // (the counter goes up inside send, the sender's own count after send returns: wait for both)
            Await.until(RECEIVE_TIMEOUT, () -> a.counters().get("send_cong_blocked") > 0 && ab.backPressure.get() > 0,
                () -> "congested port while the receiver does not read");
            final long pressure = ab.backPressure.get();
            final Receiver rb = new Receiver(sb, 1, count, maxSize);
            rb.start();
            ab.finish(120_000);
            rb.finish(120_000);
            compareDigests(List.of(ab), Map.of(sb.localAddress(), rb));
            System.out.println("  back-pressure while not reading: " + pressure + " refused sends; a: " + ibCounters(a));
            check(pressure > 0, "the sender saw no back-pressure while the receiver did not read");
            check(a.counters().get("ib_tx_throttle") > 0, "a ring of 16 should have run out of credits");
        }
    }

    /** Both sides have data and connect at once: exactly one path wins and all data arrives. */
    static void crossedConnect() throws Exception
    {
        for (int round = 0; round < 3; round++)
        {
            try (CoreStack a = stack(TransportType.IB, b -> b); CoreStack b = stack(TransportType.IB, x -> x);
                 RdsSocket sa = socket(a, addressA, 4600); RdsSocket sb = socket(b, addressB, 4600))
            {
                final int count = 200;
                final Receiver ra = new Receiver(sa, 1, count, 2000);
                final Receiver rb = new Receiver(sb, 1, count, 2000);
                final Sender ab = new Sender(sa, 1, List.of(sb.localAddress()), count, 2000, true);
                final Sender ba = new Sender(sb, 2, List.of(sa.localAddress()), count, 2000, true);
                ra.start();
                rb.start();
                ab.start();
                ba.start();
                ab.finish(60_000);
                ba.finish(60_000);
                ra.finish(60_000);
                rb.finish(60_000);
                final long ups = a.counters().get("conn_up") + b.counters().get("conn_up");
                check(ups >= 2, "both ends should be up: " + ups);
                check(a.connections().stream().filter(c -> c.transport().equals("ib")).count() == 1, "one IB connection at a");
                System.out.println("  round " + round + ": crossed connects resolved: a " +
                    a.counters().get("ib_connect_raced") + ", b " + b.counters().get("ib_connect_raced"));
            }
        }
    }

    /**
     * Senders in both directions while the connection is torn down five times (the test hook disconnects and
     * destroys the QPs, alternately on each side): it reconnects with the backoff and retransmits; every
     * message arrives once, in order (count, order, SHA-256 per pair).
     */
    static void teardownUnderLoad() throws Exception
    {
        try (CoreStack a = stack(TransportType.IB, b -> b); CoreStack b = stack(TransportType.IB, x -> x);
             RdsSocket sa = socket(a, addressA, 4700); RdsSocket sb = socket(b, addressB, 4700))
        {
            final int count = 8000;
            final int maxSize = 6000;
            final Receiver ra = new Receiver(sa, 1, count, maxSize);
            final Receiver rb = new Receiver(sb, 1, count, maxSize);
            final Sender ab = new Sender(sa, 1, List.of(sb.localAddress()), count, maxSize, true);
            final Sender ba = new Sender(sb, 2, List.of(sa.localAddress()), count, maxSize, true);
            ra.start();
            rb.start();
            ab.start();
            ba.start();
            int aborts = 0;
            final long giveUp = System.nanoTime() + 120_000_000_000L;
            while (aborts < 5 && (ab.isAlive() || ba.isAlive()) && System.nanoTime() < giveUp)
            {
                Thread.sleep(200); // the pace of the fault injection, as in ConnectionKillTest
                if (!a.connections().stream().anyMatch(c -> c.transport().equals("ib") && c.state().equals("UP")))
                {
                    continue; // still reconnecting from the last abort
                }
                final long before = a.counters().get("conn_reset") + b.counters().get("conn_reset");
                (aborts % 2 == 0 ? a : b).transport("ib").abortAll();
                // an abort that races a reconnect may find nothing to tear down: only a counted reset counts
                if (Await.within(Duration.ofSeconds(5), () -> a.counters().get("conn_reset") + b.counters().get("conn_reset") > before))
                {
                    aborts++;
                }
            }
            ab.finish(180_000);
            ba.finish(180_000);
            ra.finish(180_000);
            rb.finish(180_000);
            compareDigests(List.of(ab, ba), Map.of(sa.localAddress(), ra, sb.localAddress(), rb));
            final Map<String, Long> ca = a.counters();
            final Map<String, Long> cb = b.counters();
            System.out.printf("  aborts %d; conn_reset a %d b %d; retransmitted a %d b %d; dropped old seq a %d b %d%n",
                aborts, ca.get("conn_reset"), cb.get("conn_reset"), ca.get("send_retransmitted"), cb.get("send_retransmitted"),
                ca.get("recv_drop_old_seq"), cb.get("recv_drop_old_seq"));
            check(aborts >= 3, "the connection was torn down only " + aborts + " times while the senders ran");
        }
    }

    /** Fewer wake-ups a second than this for an idle agent (IdleAgentTest's bound). */
    private static final int IDLE_WAKE_UPS_PER_S = 100;
    /**
     * The most of one core an idle stack's threads may use in the guest: well below a core (a yielding agent takes
     * most of one, as the control in {@link #idleBurnsNoCpu} shows), well above the 0.7-7.7 % an idle agent's CPU
     * time moves between under emulation (docs/transport-ib.md). IdleAgentTest's bound over TCP on the host is 5 %.
     */
    private static final double MAX_IDLE_CPU_SHARE = 0.25;

    /**
     * After traffic stops, the CQs are armed and the agent and event threads wait. Over 3 idle seconds (the
     * heartbeat still runs) each IB stack's threads (agent and event thread) must use well under a core, which a
     * spinning or yielding agent would not, and each agent must wake no more often than an idle agent over TCP
     * may (it waits in the selector until its next timer once every completion queue is armed), which an agent
     * parking for 1 ms at a time would not. The same two stacks over TCP are printed beside them. The control:
     * two IB stacks whose agents yield instead of waiting fail the CPU bound.
     */
    static void idleBurnsNoCpu() throws Exception
    {
        idle(TransportType.TCP, 4810, "it", x -> x); // printed beside IB's
        for (final IdleWindow.Reading stack : idle(TransportType.IB, 4800, "ii", x -> x))
        {
            check(stack.cpuShare() < MAX_IDLE_CPU_SHARE, stack.toString());
            // as IdleAgentTest: timers and the parks that grow after each make tens a second; 1 ms waits, about 1000
            check(stack.agentWakeUps() < IDLE_WAKE_UPS_PER_S * stack.seconds(), stack.toString());
        }
        for (final IdleWindow.Reading stack : idle(TransportType.IB, 4820, "iy", x -> x.idleStrategy("yield")))
        {
            check(stack.cpuShare() > MAX_IDLE_CPU_SHARE, "control, a yielding IB stack: " + stack);
        }
    }

    /**
     * @param prefix the stacks' names are {@code prefix} plus 1 and 2: three characters, so that the agents'
     *               thread names stay whole in the kernel's 15 ({@link ThreadWakeUps}).
     * @return both stacks over 3 idle seconds, once every message is acknowledged both ways.
     */
    static List<IdleWindow.Reading> idle(final TransportType transport, final int port, final String prefix,
        final UnaryOperator<RdsStackConfig.Builder> tweak) throws Exception
    {
        try (CoreStack a = stack(transport, x -> tweak.apply(x.name(prefix + 1)));
             CoreStack b = stack(transport, x -> tweak.apply(x.name(prefix + 2)));
             RdsSocket sa = socket(a, addressA, port); RdsSocket sb = socket(b, addressB, port))
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(256);
            for (int i = 0; i < 200; i++)
            {
                buffer.clear();
                sa.send(buffer, sb.localAddress());
                buffer.clear();
                check(sb.receive(buffer) != null, "message " + i + " lost");
            }
            // settled: every message acknowledged both ways, so only the heartbeat is left to run
            Await.until(RECEIVE_TIMEOUT, () -> nothingUnacked(a) && nothingUnacked(b), () -> "all messages acknowledged");
            System.out.println("  idle over " + transport + " (" + a.config().idleStrategy() + "):");
            return IdleWindow.measure(Duration.ofSeconds(3), a.config().name(), b.config().name());
        }
    }

    // ------------------------------------------------------------------ admission

    /** The admission counters a refused connect request may move. */
    private static final String[] REFUSALS = {"conn_refused", "conn_refused_not_allowed", "conn_refused_rate", "conn_refused_limit"};

    /**
     * The peer cap over IB: a stack with {@code maxPeers=1} that talks to one peer rejects connect requests for
     * other peer addresses, each counted once in {@code conn_refused_limit} and nowhere else, while its pair with
     * that peer passes the cap when it reconnects after a tear-down. The other peers are connect requests whose
     * private data names them as the source (the stack takes the peer's address from there, as the kernel does).
     */
    static void peerCap() throws Exception
    {
        try (CoreStack a = stack(TransportType.IB, x -> x); CoreStack v = stack(TransportType.IB, x -> x.maxPeers(1));
             RdsSocket sa = socket(a, addressA, 4900); RdsSocket sv = socket(v, addressB, 4900))
        {
            deliver(sa, sv, 1);
            final Map<String, Long> before = refusals(v);
            final int strangers = 5;
            for (int i = 1; i <= strangers; i++)
            {
                final int outcome = connectRequest(addressA, InetAddress.getByName("10.9.0." + i), addressB);
                check(outcome == RDMA_CM_EVENT_REJECTED, "request from stranger " + i + ": " + CmEventChannel.CmEvent.name(outcome));
            }
            checkRefusals(v, before, "conn_refused_limit", strangers);
            // the pair the stack has passes the cap: torn down, it reconnects
            final long resets = v.counters().get("conn_reset");
            v.transport("ib").abortAll();
            Await.until(RECEIVE_TIMEOUT, () -> v.counters().get("conn_reset") > resets, () -> "the tear-down");
            deliver(sa, sv, 2);
            checkRefusals(v, before, "conn_refused_limit", strangers);
            System.out.println("  v: " + refusals(v));
        }
    }

    /**
     * The connect rate over IB, per node pair: with {@code peerConnectRate=1}, a pair's second connect request
     * within a second is refused ({@code conn_refused_rate}) and so is every later one for
     * {@link PeerAdmission#BLOCK_NS}; another pair from the same address is not. The stack has its one allowed
     * peer ({@code maxPeers=1}), so the requests the rate lets through are rejected by the cap: no request is
     * accepted and every one moves exactly one counter.
     */
    static void connectRate() throws Exception
    {
        try (CoreStack a = stack(TransportType.IB, x -> x);
             CoreStack v = stack(TransportType.IB, x -> x.maxPeers(1).peerConnectRate(1));
             RdsSocket sa = socket(a, addressA, 4910); RdsSocket sv = socket(v, addressB, 4910))
        {
            deliver(sa, sv, 1);
            final Map<String, Long> before = refusals(v);
            final InetAddress flooder = InetAddress.getByName("10.9.0.100");
            final int requests = 8;
            final long[] sentNs = new long[requests];
            for (int i = 0; i < requests; i++)
            {
                sentNs[i] = System.nanoTime();
                final int outcome = connectRequest(addressA, flooder, addressB);
                check(outcome == RDMA_CM_EVENT_REJECTED, "request " + i + ": " + CmEventChannel.CmEvent.name(outcome));
            }
            final long doneNs = System.nanoTime();
            // the counts below hold if the stack saw the first two within one second and the rest in the block
            check(sentNs[2] - sentNs[0] < TimeUnit.SECONDS.toNanos(1),
                "two requests took " + (sentNs[2] - sentNs[0]) / 1_000_000 + " ms: too slow for the exact count");
            check(doneNs - sentNs[1] < PeerAdmission.BLOCK_NS - TimeUnit.SECONDS.toNanos(1),
                "the requests took longer than the block");
            final Map<String, Long> after = refusals(v);
            check(after.get("conn_refused_limit") - before.get("conn_refused_limit") == 1 &&
                after.get("conn_refused_rate") - before.get("conn_refused_rate") == requests - 1,
                "one refused for the cap, then " + (requests - 1) + " for the rate: before " + before + ", after " + after);
            // the block is the pair's, not the address's
            check(connectRequest(addressA, InetAddress.getByName("10.9.0.101"), addressB) == RDMA_CM_EVENT_REJECTED,
                "another pair");
            final Map<String, Long> last = refusals(v);
            check(last.get("conn_refused_limit") - after.get("conn_refused_limit") == 1 &&
                last.get("conn_refused_rate").equals(after.get("conn_refused_rate")),
                "another pair from the same address is refused for the cap only: " + last);
            check(last.get("conn_refused").equals(before.get("conn_refused")) &&
                last.get("conn_refused_not_allowed").equals(before.get("conn_refused_not_allowed")),
                "no other refusal: before " + before + ", after " + last);
            deliver(sa, sv, 2);
            System.out.println("  v: " + last);
        }
    }

    /** Sends one message from {@code from} to {@code to} and receives it. */
    private static void deliver(final RdsSocket from, final RdsSocket to, final int mark) throws Exception
    {
        from.send(ByteBuffer.wrap(new byte[] {(byte)mark}), to.localAddress());
        final ByteBuffer buffer = ByteBuffer.allocate(16);
        check(to.receive(buffer) != null && buffer.get(0) == (byte)mark, "message " + mark + " not delivered");
    }

    private static Map<String, Long> refusals(final RdsStack stack)
    {
        final Map<String, Long> all = stack.counters();
        final Map<String, Long> values = new LinkedHashMap<>();
        for (final String name : REFUSALS)
        {
            values.put(name, all.get(name));
        }
        return values;
    }

    private static void checkRefusals(final RdsStack stack, final Map<String, Long> before, final String moved, final long by)
    {
        final Map<String, Long> after = refusals(stack);
        for (final String name : REFUSALS)
        {
            check(after.get(name) == before.get(name) + (name.equals(moved) ? by : 0),
                name + ": before " + before + ", after " + after);
        }
    }

    /**
     * One rdma_cm connect request to a stack's listener, with RDS private data that names {@code claimed} as
     * its source: what a peer at that address would send. Waits for the outcome; an accepted connection is
     * disconnected at once.
     *
     * @param from    the local RDMA address the request goes from.
     * @param claimed the source address in the private data.
     * @param to      the stack's address.
     * @return the final rdma_cm event ({@code RDMA_CM_EVENT_REJECTED}, {@code _ESTABLISHED} or an error), -1 if
     *         none came within the receive timeout.
     */
    static int connectRequest(final InetAddress from, final InetAddress claimed, final InetAddress to) throws Exception
    {
        try (CmEventChannel channel = new CmEventChannel())
        {
            final CmId id = CmId.create(channel);
            VerbsContext context = null;
            CompletionQueue cq = null;
            try
            {
                id.resolveAddress(new InetSocketAddress(from, 0), new InetSocketAddress(to, IbConfig.of(RdsStackConfig.builder().build()).ibPort()), 2000);
                final long deadline = System.nanoTime() + RECEIVE_TIMEOUT.toNanos();
                while (System.nanoTime() - deadline < 0)
                {
                    final CmEventChannel.CmEvent event = channel.next(1000);
                    if (event == null)
                    {
                        continue;
                    }
                    final int type = event.type();
                    event.ack();
                    if (type == RDMA_CM_EVENT_ADDR_RESOLVED)
                    {
                        id.resolveRoute(2000);
                    }
                    else if (type == RDMA_CM_EVENT_ROUTE_RESOLVED)
                    {
                        context = VerbsContext.borrow(id.verbs());
                        cq = context.createCompletionQueue(16, 8);
                        id.createQueuePair(context, cq, cq, 8, 8);
                        final IbPrivateData request = new IbPrivateData();
                        request.encode(claimed, to, IbPrivateData.VERSION_4_1, 0, 0);
                        id.connect(request.bytes, IbPrivateData.LENGTH, IbPath.RETRY_COUNT, IbPath.RNR_RETRY_COUNT);
                    }
                    else
                    {
                        return type;
                    }
                }
                return -1;
            }
            finally
            {
                id.disconnect();
                id.close();
                if (cq != null)
                {
                    cq.close();
                }
                if (context != null)
                {
                    context.close();
                }
            }
        }
    }
}
