package org.rds4j.transport.ib;

import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.core.CoreStack;

import java.net.InetAddress;
import java.util.Map;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;

/**
 * The figures of docs/transport-ib.md: rds4j over IB against rds4j over TCP between the same two addresses
 * (in CI: 10.77.0.1 and 10.77.0.2 on the rxe guest's dummy eth0): round-trip latency of 64 B messages
 * (ping-pong between two sockets), one-way throughput of 4 KiB and 64 KiB messages, and for IB the verbs
 * calls per message (post_send, post_recv, poll_cq, req_notify_cq, both stacks). Prints a markdown table.
 * <p>
 * {@code java -cp ... org.rds4j.transport.ib.IbBench [10.77.0.1 10.77.0.2 [scale]]}; run by
 * {@code IB_BENCH=1 transport-ib/src/test/vm/run-ib-tests.sh}.
 */
public final class IbBench
{
    private IbBench()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final InetAddress a = InetAddress.getByName(args.length > 0 ? args[0] : "10.77.0.1");
        final InetAddress b = InetAddress.getByName(args.length > 1 ? args[1] : "10.77.0.2");
        final double scale = args.length > 2 ? Double.parseDouble(args[2]) : 1.0;
        final String[] ib = run(TransportType.IB, a, b, scale);
        final String[] tcp = run(TransportType.TCP, a, b, scale);
        System.out.println();
        System.out.println("| measure | rds4j IB | rds4j TCP |");
        System.out.println("|---|---|---|");
        final String[] names = {"64 B round trip, median (mean) us", "4 KiB one-way, msg/s (MB/s)",
            "64 KiB one-way, msg/s (MB/s)", "verbs calls per 4 KiB message (both stacks)"};
        for (int i = 0; i < names.length; i++)
        {
            System.out.println("| " + names[i] + " | " + ib[i] + " | " + tcp[i] + " |");
        }
    }

    private static String[] run(final TransportType transport, final InetAddress a, final InetAddress b, final double scale)
        throws Exception
    {
        final String[] results = new String[4];
        try (CoreStack sa = stack("bench-a-" + transport, transport); CoreStack sb = stack("bench-b-" + transport, transport);
             RdsSocket pa = socket(sa, a, 5100); RdsSocket pb = socket(sb, b, 5100))
        {
            results[0] = pingPong(pa, pb, (int)(3000 * scale));
            final boolean ib = transport == TransportType.IB;
            final long callsBefore = verbsCalls(sa) + verbsCalls(sb);
            final int n4 = (int)(20000 * scale);
            results[1] = oneWay(pa, pb, 4096, n4);
            results[3] = ib ? String.format("%.2f", (verbsCalls(sa) + verbsCalls(sb) - callsBefore) / (double)n4) : "-";
            if (ib)
            {
                System.out.println(transport + " a: " + IbStackTests.ibCounters(sa));
                System.out.println(transport + " b: " + IbStackTests.ibCounters(sb));
            }
            results[2] = oneWay(pa, pb, 65536, (int)(3000 * scale));
        }
        System.out.println(transport + ": " + String.join(" | ", results));
        return results;
    }

    /** @return the verbs calls the stack's IB transport made so far (0 over TCP). */
    private static long verbsCalls(final CoreStack stack)
    {
        final Map<String, Long> counters = stack.counters();
        return counters.getOrDefault("ib_post_send", 0L) + counters.getOrDefault("ib_post_recv", 0L) +
            counters.getOrDefault("ib_poll_cq", 0L) + counters.getOrDefault("ib_req_notify_cq", 0L);
    }

    private static CoreStack stack(final String name, final TransportType transport)
    {
        return CoreStack.open(RdsStackConfig.builder().name(name).infoFile(false).transport(transport).build());
    }

    private static RdsSocket socket(final CoreStack stack, final InetAddress address, final int port) throws Exception
    {
        final RdsSocket socket = stack.openSocket();
        socket.setOption(RdsOptions.SO_SNDBUF, 16 << 20);
        socket.setOption(RdsOptions.SO_RCVBUF, 64 << 20);
        socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(30));
        return socket.bind(new InetSocketAddress(address, port));
    }

    private static String pingPong(final RdsSocket pa, final RdsSocket pb, final int rounds) throws Exception
    {
        final int warm = rounds / 5;
        final Thread echo = new Thread(() ->
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(64);
            try
            {
                for (int i = 0; i < warm + rounds; i++)
                {
                    buffer.clear();
                    final InetSocketAddress from = pb.receive(buffer);
                    buffer.flip();
                    pb.send(buffer, from);
                }
            }
            catch (final Exception ex)
            {
                ex.printStackTrace();
            }
        }, "echo");
        echo.start();
        final ByteBuffer buffer = ByteBuffer.allocateDirect(64);
        final long[] rtt = new long[rounds];
        for (int i = 0; i < warm + rounds; i++)
        {
            buffer.clear();
            final long t0 = System.nanoTime();
            pa.send(buffer, pb.localAddress());
            buffer.clear();
            if (pa.receive(buffer) == null)
            {
                throw new IllegalStateException("ping-pong: no answer to round " + i);
            }
            if (i >= warm)
            {
                rtt[i - warm] = System.nanoTime() - t0;
            }
        }
        echo.join();
        Arrays.sort(rtt);
        final double mean = Arrays.stream(rtt).average().orElse(0) / 1000.0;
        return String.format("%.0f (%.0f)", rtt[rounds / 2] / 1000.0, mean);
    }

    private static String oneWay(final RdsSocket pa, final RdsSocket pb, final int size, final int count) throws Exception
    {
        final long[] done = new long[1];
        final Thread receiver = new Thread(() ->
        {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(size);
            try
            {
                for (int i = 0; i < count; i++)
                {
                    buffer.clear();
                    if (pb.receive(buffer) == null)
                    {
                        throw new IllegalStateException("one-way: message " + i + " missing");
                    }
                }
                done[0] = System.nanoTime();
            }
            catch (final Exception ex)
            {
                ex.printStackTrace();
            }
        }, "sink");
        receiver.start();
        final ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        final long t0 = System.nanoTime();
        for (int i = 0; i < count; i++)
        {
            buffer.clear();
            pa.send(buffer, pb.localAddress());
        }
        receiver.join();
        final double seconds = (done[0] - t0) / 1e9;
        return String.format("%.0f (%.1f)", count / seconds, count * (double)size / seconds / 1e6);
    }
}
