package org.rds4j.compare;

import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Receiver;
import org.jgroups.View;
import org.jgroups.protocols.Bundler;
import org.jgroups.protocols.TransferQueueBundler;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * JGroups over TCP with UNICAST3 and UFC ({@code jgroups-tcp.xml}): every node is a member of one cluster;
 * messages are unicasts, {@link JChannel#send(Address, byte[])}, received by {@link Receiver#receive(Message)}
 * (regular messages, so UNICAST3 delivers them in order per sender). The server/sink members bind
 * {@code --server-ip} (127.0.0.2) on consecutive ports from {@code --port}, the client/source member
 * {@code --client-ip} (127.0.0.1) on {@code --port}; TCPPING lists them all. {@code --ufc-credits} sets UFC's
 * and MFC's max_credits (default 1M for messages up to 256 B, else the shipped 10M; jgroups-tcp.xml says why). The fan-out sink runs
 * {@code --receivers} channels (members) in its one process, so the cluster has receivers + 1 members.
 * {@code --bundler} is the transport's bundler_type: as shipped {@code transfer-queue}, which drops a message
 * when its queue is full (UNICAST3 resends it when the receiver asks), or {@code per-destination}, which never
 * drops: a queue and a sending thread per destination, and a full queue blocks the sender. The measuring roles
 * and the source log how many messages their bundler dropped.
 * <p>
 * Each message is a new {@code byte[]}: UNICAST3 keeps a reference to the array in its retransmission table
 * until the receiver acks it, so an application cannot reuse a buffer as it can with rds4j, NIO or Aeron,
 * which copy the payload at send time.
 */
final class JGroupsBench
{
    private static final String CLUSTER = "rds4j-compare";

    private final Bench bench;
    private final String serverIp;
    private final String clientIp;
    private final int port;
    /** UFC and MFC max_credits: 1M for small messages, the shipped 10M for larger ones (see jgroups-tcp.xml). */
    private final String credits;
    /** The transport's bundler_type. */
    private final String bundler;

    JGroupsBench(final Bench bench)
    {
        this.bench = bench;
        this.serverIp = bench.args.str("server-ip", "127.0.0.2");
        this.clientIp = bench.args.str("client-ip", "127.0.0.1");
        this.port = bench.args.integer("port", 5000);
        this.credits = bench.args.str("ufc-credits", bench.size <= 256 ? "1M" : "10M");
        this.bundler = bench.args.str("bundler", "transfer-queue");
        System.setProperty("java.net.preferIPv4Stack", "true");
    }

    private String initialHosts()
    {
        final StringBuilder sb = new StringBuilder(clientIp + "[" + port + "]");
        for (int i = 0; i < bench.receivers; i++)
        {
            sb.append(',').append(serverIp).append('[').append(port + i).append(']');
        }
        return sb.toString();
    }

    private JChannel channel(final String ip, final int bindPort) throws Exception
    {
        System.setProperty("compare.bind_addr", ip);
        System.setProperty("compare.bind_port", Integer.toString(bindPort));
        System.setProperty("compare.initial_hosts", initialHosts());
        System.setProperty("compare.ufc_credits", credits);
        System.setProperty("compare.bundler_type", bundler);
        return new JChannel("jgroups-tcp.xml");
    }

    /**
     * Logs the channels' bundler and how many messages it dropped on a full queue. JGroups 5.4 has no getter for
     * the transfer-queue bundler's count, a protected field; the per-destination bundler has none to count.
     */
    private static void logDrops(final String role, final JChannel... channels)
    {
        try
        {
            final Field dropCount = TransferQueueBundler.class.getDeclaredField("num_drops_on_full_queue");
            dropCount.setAccessible(true);
            long drops = 0;
            String type = "";
            for (final JChannel channel : channels)
            {
                final Bundler b = channel.getProtocolStack().getTransport().getBundler();
                type = b.getClass().getSimpleName();
                if (b instanceof TransferQueueBundler)
                {
                    drops += dropCount.getLong(b);
                }
            }
            Bench.log("jgroups " + role + ": " + type + ", messages dropped on a full queue: " + drops);
        }
        catch (final ReflectiveOperationException ex)
        {
            Bench.log("jgroups " + role + ": bundler drops: " + ex);
        }
    }

    /** Waits until the view has {@code members} members; @return the others, in view order. */
    private List<Address> awaitMembers(final JChannel channel, final int members) throws IOException
    {
        final long deadline = System.nanoTime() + bench.startTimeoutNs;
        while (true)
        {
            final View view = channel.getView();
            if (view != null && view.size() >= members)
            {
                final List<Address> others = new ArrayList<>(view.getMembers());
                others.remove(channel.getAddress());
                return others;
            }
            if (System.nanoTime() > deadline)
            {
                throw new IOException("jgroups: view " + view + " still short of " + members + " members");
            }
            Bench.sleepNs(5_000_000);
        }
    }

    private Json extra()
    {
        return new Json().put("stack", "jgroups-tcp.xml").put("ufc_credits", credits).put("bundler", bundler);
    }

    private static byte[] message(final int size, final long seq)
    {
        final byte[] bytes = new byte[size];
        ByteBuffer.wrap(bytes).putLong(0, seq);
        return bytes;
    }

    // ------------------------------------------------------------------ RTT

    void rttServer() throws Exception
    {
        final JChannel channel = channel(serverIp, port);
        channel.setReceiver(new Receiver()
        {
            @Override
            public void receive(final Message msg)
            {
                try
                {
                    // the received array is this message's own: it can travel back as it is
                    channel.send(msg.getSrc(), msg.getArray(), msg.getOffset(), msg.getLength());
                }
                catch (final Exception ex)
                {
                    Bench.log("jgroups rtt-server: echo failed: " + ex);
                }
            }
        });
        channel.connect(CLUSTER);
        Main.ready();
        Thread.sleep(Long.MAX_VALUE);
    }

    void rttClient() throws Exception
    {
        final JChannel channel = channel(clientIp, port);
        final Thread me = Thread.currentThread();
        final class Echo implements Receiver
        {
            volatile long got;

            @Override
            public void receive(final Message msg)
            {
                got = ByteBuffer.wrap(msg.getArray(), msg.getOffset(), msg.getLength()).getLong(msg.getOffset());
                LockSupport.unpark(me);
            }
        }
        final Echo echo = new Echo();
        channel.setReceiver(echo);
        channel.connect(CLUSTER);
        final Address server = awaitMembers(channel, 2).get(0);
        bench.rttClient(seq ->
        {
            echo.got = 0;
            channel.send(server, message(bench.size, seq));
            final long limit = System.nanoTime() + 5_000_000_000L;
            while (echo.got == 0)
            {
                LockSupport.parkNanos(1_000_000);
                if (System.nanoTime() > limit)
                {
                    throw new IOException("no echo within 5 s for " + seq);
                }
            }
            Bench.checkEcho(seq, echo.got);
        }, extra());
        logDrops("rtt-client", channel);
        Bench.finish(channel);
    }

    // ------------------------------------------------------------------ throughput

    void sink() throws Exception
    {
        final int n = bench.receivers;
        final Bench.Counts counts = new Bench.Counts(n);
        final JChannel[] channels = new JChannel[n];
        for (int i = 0; i < n; i++)
        {
            final int index = i;
            channels[i] = channel(serverIp, port + i);
            channels[i].setReceiver(new Receiver()
            {
                private long expected = -1;

                @Override
                public void receive(final Message msg)
                {
                    final long seq = ByteBuffer.wrap(msg.getArray()).getLong(msg.getOffset());
                    if (expected >= 0 && seq != expected)
                    {
                        counts.seqError(index);
                    }
                    expected = seq + 1;
                    counts.addAtomic(index, 1);
                }
            });
            channels[i].connect(CLUSTER);
        }
        awaitMembers(channels[0], n);
        Main.ready();
        bench.measureSink(counts, extra());
        logDrops("sink", channels);
        // no orderly leave: 16 members leaving one by one takes seconds; run.sh ends the source anyway
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    void source() throws Exception
    {
        final int n = bench.receivers;
        final JChannel channel = channel(clientIp, port);
        channel.connect(CLUSTER);
        final List<Address> targets = awaitMembers(channel, n + 1);
        final Address[] dest = targets.subList(0, n).toArray(new Address[0]);
        final Bench.SourceState state = new Bench.SourceState();
        final Thread sender = new Thread(() ->
        {
            final long[] seq = new long[n];
            try
            {
                int d = 0;
                while (state.running)
                {
                    channel.send(dest[d], message(bench.size, seq[d]++));
                    state.sent(1);
                    if (++d == n)
                    {
                        d = 0;
                    }
                }
            }
            catch (final Exception ex)
            {
                if (state.running)
                {
                    Bench.log("jgroups source: " + ex);
                }
            }
        }, "jgroups-source");
        sender.setDaemon(true);
        sender.start();
        bench.measureSource(state, sender, extra());
        logDrops("source", channel);
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
