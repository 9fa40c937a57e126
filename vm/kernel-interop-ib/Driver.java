import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The rds4j side of vm/kernel-interop-ib.sh, run as {@code java -cp rds.jar Driver.java ...} in the guest: one rds4j
 * stack forced onto the IB transport that talks to kernel RDS (rds_rdma). One PASS/FAIL line per check; exit status
 * 0 only if every check passed.
 * <pre>
 *   client LOCAL_IP PEER_IP PEER_PORT[,PORT...] SOCKETS ROUNDS SIZE[,SIZE...]
 *       SOCKETS rds4j sockets (ports 6000...), each sending ROUNDS rounds of the sizes to every kernel echo port
 *       (a window of 4 outstanding per pair), each echo checked: sender, order, bytes.
 *   sink LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT TAG COUNT SIZE[,SIZE...]
 *       receives COUNT messages from a kernel source, checking sender, order and bytes (payload(TAG, i, size)),
 *       then keeps the stack open until the file named by -Ddone.file exists (the kernel source saw all its
 *       messages acked) or 180 s.
 *   idle LOCAL_IP PEER_IP PEER_PORT SECONDS
 *       one echo from a kernel echo socket, SECONDS of silence, another echo: the connection must stay up (the
 *       heartbeat has to get answers from the kernel).
 *   source LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT TAG COUNT SIZE[,SIZE...]
 *       sends COUNT messages payload(TAG, i, size) to a kernel sink, as fast as the send buffer allows, then
 *       keeps the stack open until the file named by -Ddone.file exists (the sink got everything) or 180 s.
 * </pre>
 * payload(tag, i, size) is the bytes (tag * 31 + i * 7 + j) &amp; 0xFF, as kernel_ib_peer.py makes them.
 */
public final class Driver
{
    private static final int MAX = 1 << 20;

    static byte[] payload(final int tag, final int i, final int size)
    {
        final byte[] bytes = new byte[size];
        final int start = (tag * 31 + i * 7) & 0xFF;
        for (int j = 0; j < size; j++)
        {
            bytes[j] = (byte)(start + j);
        }
        return bytes;
    }

    static int[] sizes(final String list)
    {
        final String[] parts = list.split(",");
        final int[] sizes = new int[parts.length];
        for (int i = 0; i < parts.length; i++)
        {
            sizes[i] = Integer.parseInt(parts[i]);
        }
        return sizes;
    }

    static RdsStack stack(final String name)
    {
        return RdsStack.open(RdsStackConfig.builder().name(name).transport(TransportType.IB).build());
    }

    static RdsSocket socket(final RdsStack stack, final InetSocketAddress local) throws Exception
    {
        final RdsSocket socket = stack.openSocket();
        socket.setOption(RdsOptions.SO_SNDBUF, 16 << 20);
        socket.setOption(RdsOptions.SO_RCVBUF, 16 << 20);
        socket.bind(local);
        socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(60));
        socket.setOption(RdsOptions.SO_SNDTIMEO, Duration.ofSeconds(60));
        return socket;
    }

    public static void main(final String[] args) throws Exception
    {
        final int rc;
        switch (args[0])
        {
            case "client": rc = client(args); break;
            case "sink": rc = sink(args); break;
            case "idle": rc = idle(args); break;
            default: rc = source(args); break;
        }
        System.out.flush();
        System.exit(rc);
    }

    /** Several rds4j sockets, each to several kernel echo ports, all at once. */
    static int client(final String[] args) throws Exception
    {
        final InetAddress local = InetAddress.getByName(args[1]);
        final InetAddress peer = InetAddress.getByName(args[2]);
        final String[] peerPorts = args[3].split(",");
        final int sockets = Integer.parseInt(args[4]);
        final int rounds = Integer.parseInt(args[5]);
        final int[] sizes = sizes(args[6]);
        final AtomicInteger failures = new AtomicInteger();
        final long t0 = System.nanoTime();
        try (RdsStack stack = stack("interop-client"))
        {
            final List<Thread> threads = new ArrayList<>();
            for (int k = 0; k < sockets; k++)
            {
                final int localPort = 6000 + k;
                final RdsSocket socket = socket(stack, new InetSocketAddress(local, localPort));
                threads.add(new Thread(() ->
                {
                    try
                    {
                        if (!exchange(socket, localPort, peer, peerPorts, rounds, sizes))
                        {
                            failures.incrementAndGet();
                        }
                    }
                    catch (final Exception ex)
                    {
                        System.out.println("FAIL rds4j->kernel echo " + localPort + ": " + ex);
                        failures.incrementAndGet();
                    }
                }, "client-" + localPort));
            }
            threads.forEach(Thread::start);
            for (final Thread thread : threads)
            {
                thread.join();
            }
        }
        final int messages = sockets * peerPorts.length * rounds * sizes.length;
        if (failures.get() == 0)
        {
            System.out.printf("PASS rds4j->kernel echo: %d rds4j sockets x %d kernel sockets, %d messages in all " +
                "(%s bytes), each echoed by the kernel in order byte for byte, in %.1f s%n", sockets, peerPorts.length,
                messages, args[6].replace(',', '/'), (System.nanoTime() - t0) / 1e9);
        }
        return failures.get() == 0 ? 0 : 1;
    }

    /** One socket's share: round robin over the kernel ports, per-pair order checked. */
    static boolean exchange(final RdsSocket socket, final int localPort, final InetAddress peer, final String[] peerPorts,
        final int rounds, final int[] sizes) throws Exception
    {
        final int pairs = peerPorts.length;
        final int perPair = rounds * sizes.length;
        final int total = perPair * pairs;
        final int[] received = new int[pairs];
        final InetSocketAddress[] destinations = new InetSocketAddress[pairs];
        for (int p = 0; p < pairs; p++)
        {
            destinations[p] = new InetSocketAddress(peer, Integer.parseInt(peerPorts[p]));
        }
        final ByteBuffer in = ByteBuffer.allocateDirect(MAX);
        final int window = 4 * pairs;
        int sent = 0;
        int got = 0;
        while (got < total)
        {
            while (sent < total && sent - got < window)
            {
                final int p = sent % pairs;
                final int i = sent / pairs;
                final int result = socket.send(ByteBuffer.wrap(payload(localPort + destinations[p].getPort(), i,
                    sizes[i % sizes.length])), destinations[p]);
                if (result < 0)
                {
                    System.out.println("FAIL rds4j->kernel echo " + localPort + ": send " + sent + " returned " + result);
                    return false;
                }
                sent++;
            }
            in.clear();
            final InetSocketAddress sender = socket.receive(in);
            if (sender == null)
            {
                System.out.println("FAIL rds4j->kernel echo " + localPort + ": no echo within 60 s after " + got +
                    " of " + total + " (" + sent + " sent)");
                return false;
            }
            in.flip();
            int p = -1;
            for (int q = 0; q < pairs; q++)
            {
                if (destinations[q].equals(sender))
                {
                    p = q;
                }
            }
            if (p < 0)
            {
                System.out.println("FAIL rds4j->kernel echo " + localPort + ": a message from " + sender);
                return false;
            }
            final int i = received[p];
            final byte[] want = payload(localPort + destinations[p].getPort(), i, sizes[i % sizes.length]);
            final byte[] have = new byte[in.remaining()];
            in.get(have);
            if (!java.util.Arrays.equals(want, have))
            {
                System.out.println("FAIL rds4j->kernel echo " + localPort + ": echo " + i + " from " + sender + ": " +
                    have.length + " bytes, expected " + want.length + (have.length == want.length ? " (content differs)" : ""));
                return false;
            }
            received[p]++;
            got++;
        }
        return true;
    }

    /** A one-way stream from a kernel source. */
    static int sink(final String[] args) throws Exception
    {
        final InetSocketAddress local = new InetSocketAddress(InetAddress.getByName(args[1]), Integer.parseInt(args[2]));
        final InetSocketAddress peer = new InetSocketAddress(InetAddress.getByName(args[3]), Integer.parseInt(args[4]));
        final int tag = Integer.parseInt(args[5]);
        final int count = Integer.parseInt(args[6]);
        final int[] sizes = sizes(args[7]);
        final ByteBuffer in = ByteBuffer.allocateDirect(MAX);
        long bytes = 0;
        final long t0 = System.nanoTime();
        try (RdsStack stack = stack("interop-sink"); RdsSocket socket = socket(stack, local))
        {
            socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(120));
            System.out.println("sink: bound to " + local);
            for (int i = 0; i < count; i++)
            {
                in.clear();
                final InetSocketAddress sender = socket.receive(in);
                if (sender == null)
                {
                    System.out.println("FAIL kernel->rds4j stream: no message " + i + " of " + count + " within 120 s");
                    return 1;
                }
                in.flip();
                final byte[] have = new byte[in.remaining()];
                in.get(have);
                final byte[] want = payload(tag, i, sizes[i % sizes.length]);
                if (!peer.equals(sender) || !java.util.Arrays.equals(want, have))
                {
                    System.out.println("FAIL kernel->rds4j stream: message " + i + ": " + have.length + " bytes from " +
                        sender + ", expected " + want.length + " from " + peer + "; it is the source's message " +
                        indexOf(have, tag, count, sizes) + "; rds4j counters: " + dropCounters(stack));
                    return 1;
                }
                bytes += have.length;
            }
            System.out.printf("PASS kernel->rds4j stream: %d messages, %d bytes (over the kernel socket's 16 MiB send " +
                "buffer: only rds4j's RDS acks free it) from the kernel, in order, byte for byte, in %.1f s%n", count,
                bytes, (System.nanoTime() - t0) / 1e9);
            // closing now could lose the acks of the last messages: stay until the kernel source has them all
            awaitDoneFile();
        }
        return 0;
    }

    /** @return which of the source's messages these bytes are, -1 if none (the check failed: say what came). */
    static int indexOf(final byte[] have, final int tag, final int count, final int[] sizes)
    {
        for (int j = 0; j < count; j++)
        {
            if (java.util.Arrays.equals(have, payload(tag, j, sizes[j % sizes.length])))
            {
                return j;
            }
        }
        return -1;
    }

    /** The receive-side counters that tell where a missing message went. */
    static String dropCounters(final RdsStack stack)
    {
        final StringBuilder text = new StringBuilder();
        stack.counters().forEach((name, value) ->
        {
            if (name.startsWith("recv_") || name.startsWith("conn_") || name.startsWith("ib_"))
            {
                text.append(name).append(' ').append(value).append(", ");
            }
        });
        return text.toString();
    }

    /** An idle connection: one echo, silence, one echo. */
    static int idle(final String[] args) throws Exception
    {
        final InetSocketAddress local = new InetSocketAddress(InetAddress.getByName(args[1]), 6200);
        final InetSocketAddress peer = new InetSocketAddress(InetAddress.getByName(args[2]), Integer.parseInt(args[3]));
        final int seconds = Integer.parseInt(args[4]);
        final ByteBuffer in = ByteBuffer.allocateDirect(MAX);
        try (RdsStack stack = stack("interop-idle"); RdsSocket socket = socket(stack, local))
        {
            for (int round = 0; round < 2; round++)
            {
                if (round == 1)
                {
                    Thread.sleep(seconds * 1000L);
                }
                final byte[] want = payload(9, round, 1000);
                socket.send(ByteBuffer.wrap(want), peer);
                in.clear();
                final InetSocketAddress sender = socket.receive(in);
                in.flip();
                final byte[] have = new byte[in.remaining()];
                in.get(have);
                if (!peer.equals(sender) || !java.util.Arrays.equals(want, have))
                {
                    System.out.println("FAIL idle: echo " + round + " was " + have.length + " bytes from " + sender);
                    return 1;
                }
            }
        }
        System.out.println("idle: both echoes came back around " + seconds + " s of silence");
        return 0;
    }

    /** A one-way stream to a kernel sink. */
    static int source(final String[] args) throws Exception
    {
        final InetSocketAddress local = new InetSocketAddress(InetAddress.getByName(args[1]), Integer.parseInt(args[2]));
        final InetSocketAddress peer = new InetSocketAddress(InetAddress.getByName(args[3]), Integer.parseInt(args[4]));
        final int tag = Integer.parseInt(args[5]);
        final int count = Integer.parseInt(args[6]);
        final int[] sizes = sizes(args[7]);
        try (RdsStack stack = stack("interop-source"); RdsSocket socket = socket(stack, local))
        {
            for (int i = 0; i < count; i++)
            {
                final int result = socket.send(ByteBuffer.wrap(payload(tag, i, sizes[i % sizes.length])), peer);
                if (result < 0)
                {
                    System.out.println("FAIL rds4j source: send " + i + " returned " + result);
                    return 1;
                }
            }
            // the stack delivers what is queued while it is open: stay until the sink says it has everything
            awaitDoneFile();
        }
        return 0;
    }

    /** Waits (at most 180 s) until the file named by -Ddone.file exists: the other side has what it needs from us. */
    static void awaitDoneFile() throws InterruptedException
    {
        final java.nio.file.Path done = java.nio.file.Path.of(System.getProperty("done.file", "/nonexistent"));
        final long deadline = System.nanoTime() + 180_000_000_000L;
        while (!java.nio.file.Files.exists(done) && System.nanoTime() < deadline)
        {
            Thread.sleep(100);
        }
    }
}
