package org.rds4j.core.test;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.TransportType;
import org.rds4j.core.spi.Addresses;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportContext;
import org.rds4j.core.spi.TransportCounters;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One stack's transport on a {@link MemoryNetwork}, written against the public SPI only: the reference for what
 * a transport must do. It stands in for TCP ({@link TransportType#TCP}, so sockets asking for AUTO or TCP get
 * it) and follows the same connection rules: the node with the lower address connects; a higher node with
 * something to send asks the lower one to connect ("pokes"); a connect while a path is up replaces it.
 * <p>
 * What a transport owes the generic layer, and how this one keeps it on a faulty network: every frame it hands
 * in passed {@link RdsHeader#validate}, arrives once, and in the order it was sent on its path; what cannot be
 * delivered so breaks the path (the connection then retransmits on a new one). Each path end numbers the frames
 * it sends; the other end discards numbers it has seen (duplicates), keeps frames that arrive early (reordered)
 * until the gap before them fills, and breaks the path if a gap stays open for the network's gap timeout
 * (a dropped frame). Frames in flight on a path that is closed are discarded.
 * <p>
 * Threading: events from other stacks (connects, frames, closes) are queued to this transport's inbox and run
 * on its agent thread in {@link #doWork}; {@link #addLocalAddress} and {@link #abortAll} may be called from any
 * thread. Allocates per frame (a copy in flight): a test transport, not a fast one.
 */
public final class MemoryTransport implements Transport
{
    private static final int FRAMES_PER_TRANSMIT = 64;

    private final MemoryNetwork network;
    private final TransportContext context;
    private final TransportCounters counters;
    private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();
    private final List<Attempt> attempts = new ArrayList<>();
    private final List<End> ends = new ArrayList<>();
    private final ByteBuffer[] frames = new ByteBuffer[FRAMES_PER_TRANSMIT];
    private final long connectTimeoutNs;
    private long nowNs;
    private volatile boolean closed;

    /** A connect in progress: ours to a lower address ({@code end} set), or a poke waiting for the peer. */
    private static final class Attempt
    {
        final ConnectionPath connection;
        final long deadlineNs;
        final End end;

        Attempt(final ConnectionPath connection, final long deadlineNs, final End end)
        {
            this.connection = connection;
            this.deadlineNs = deadlineNs;
            this.end = end;
        }
    }

    MemoryTransport(final MemoryNetwork network, final TransportContext context)
    {
        this.network = network;
        this.context = context;
        this.counters = context.counters();
        this.connectTimeoutNs = context.config().connectTimeout().toNanos();
    }

    @Override
    public String name()
    {
        return "mem";
    }

    @Override
    public TransportType type()
    {
        return TransportType.TCP;
    }

    @Override
    public boolean canServe(final InetAddress local)
    {
        return network.serves(local);
    }

    @Override
    public void addLocalAddress(final InetAddress local) throws RdsException
    {
        if (!network.serves(local))
        {
            throw new RdsException(RdsResult.EADDRNOTAVAIL, local.getHostAddress() + " is not on the memory network");
        }
        if (network.claim(local, this) != this)
        {
            throw new RdsException(RdsResult.EADDRINUSE, local.getHostAddress() + " is served by another stack");
        }
    }

    @Override
    public boolean checksumsHeaders()
    {
        return false;
    }

    @Override
    public void connect(final ConnectionPath connection)
    {
        final InetAddress local = connection.localAddress();
        final InetAddress remote = connection.remoteAddress();
        final MemoryTransport peer = network.owner(remote);
        if (peer == null || network.isCut(local, remote))
        {
            connection.onConnectFailed(peer == null ? "no node has " + remote.getHostAddress() : "the network is cut");
            return;
        }
        if (Addresses.compare(local, remote) < 0)
        {
            final End end = new End(connection, peer);
            attempts.add(new Attempt(connection, nowNs + connectTimeoutNs, end));
            peer.post(() -> peer.onConnectRequest(remote, local, end, this));
        }
        else
        {
            attempts.add(new Attempt(connection, nowNs + connectTimeoutNs, null));
            peer.post(() -> peer.onPoke(remote, local));
        }
    }

    @Override
    public int doWork(final long nowNs)
    {
        this.nowNs = nowNs;
        int work = 0;
        Runnable event;
        while (!closed && (event = inbox.poll()) != null)
        {
            event.run();
            work++;
        }
        for (int i = attempts.size() - 1; i >= 0; i--)
        {
            final Attempt attempt = attempts.get(i);
            if (nowNs - attempt.deadlineNs >= 0)
            {
                attempts.remove(i);
                attempt.connection.onConnectFailed("connect timed out");
                work++;
            }
        }
        for (int i = ends.size() - 1; i >= 0; i--)
        {
            if (i < ends.size())
            {
                work += ends.get(i).poll(nowNs);
            }
        }
        return work;
    }

    @Override
    public long idleDeadlineNs(final long nowNs)
    {
        if (!inbox.isEmpty())
        {
            return nowNs;
        }
        long deadline = NO_DEADLINE;
        for (int i = 0; i < attempts.size(); i++)
        {
            deadline = Math.min(deadline, attempts.get(i).deadlineNs);
        }
        for (int i = 0; i < ends.size(); i++)
        {
            deadline = Math.min(deadline, ends.get(i).deadlineNs(nowNs));
        }
        return deadline;
    }

    @Override
    public void abortAll()
    {
        post(() -> failPaths(null, null, "aborted"));
    }

    @Override
    public void close()
    {
        closed = true;
        for (int i = ends.size() - 1; i >= 0; i--)
        {
            ends.get(i).close();
        }
        attempts.clear();
        inbox.clear();
        network.release(this);
    }

    // ---------------------------------------------------------------- events, on this transport's agent

    /** Any thread: queues an event for this transport's agent, and wakes it if the network wakes stacks. */
    private void post(final Runnable event)
    {
        if (!closed)
        {
            inbox.offer(event);
            if (network.wakes())
            {
                context.wakeAgent();
            }
        }
    }

    /** Any thread: the network was cut between two addresses. */
    void breakPaths(final InetAddress a, final InetAddress b)
    {
        post(() -> failPaths(a, b, "the network was cut"));
    }

    /** Fails the paths between {@code a} and {@code b}, or every path if they are null. */
    private void failPaths(final InetAddress a, final InetAddress b, final String reason)
    {
        for (int i = ends.size() - 1; i >= 0; i--)
        {
            final End end = ends.get(i);
            final InetAddress local = end.connection.localAddress();
            final InetAddress remote = end.connection.remoteAddress();
            if (a == null || (local.equals(a) && remote.equals(b)) || (local.equals(b) && remote.equals(a)))
            {
                end.fail(reason);
            }
        }
    }

    /** A lower address connects to our {@code local}: accept as TCP does, replacing a path that is up. */
    private void onConnectRequest(
        final InetAddress local, final InetAddress remote, final End theirs, final MemoryTransport peer)
    {
        final ConnectionPath connection = network.isCut(local, remote) ? null : context.connection(local, remote, this);
        if (connection == null)
        {
            counters.connRefused().incrementOrdered();
            peer.post(() -> peer.onRefused(theirs));
            return;
        }
        if (connection.isUp())
        {
            connection.drop("the peer connected again");
        }
        attempts.removeIf(attempt -> attempt.connection == connection);
        final End mine = new End(connection, peer);
        mine.peer = theirs;
        ends.add(mine);
        connection.onConnected(mine);
        peer.post(() -> peer.onAccepted(theirs, mine));
    }

    private void onAccepted(final End mine, final End theirs)
    {
        mine.peer = theirs;
        final Attempt attempt = attempt(mine);
        if (attempt == null)
        {
            // our attempt timed out or was given up: the peer's end must go
            mine.close();
            return;
        }
        attempts.remove(attempt);
        ends.add(mine);
        mine.connection.onConnected(mine);
    }

    private void onRefused(final End mine)
    {
        final Attempt attempt = attempt(mine);
        if (attempt != null)
        {
            attempts.remove(attempt);
            attempt.connection.onConnectFailed("refused by the peer");
        }
    }

    /** A higher address has something to send to our {@code local}: connect to it now if down. */
    private void onPoke(final InetAddress local, final InetAddress remote)
    {
        final ConnectionPath connection = context.connection(local, remote, this);
        if (connection != null)
        {
            connection.connectIfDown();
        }
    }

    private Attempt attempt(final End end)
    {
        for (int i = 0; i < attempts.size(); i++)
        {
            if (attempts.get(i).end == end)
            {
                return attempts.get(i);
            }
        }
        return null;
    }

    /** One end of a path: numbers what it sends, puts what arrives back in order. Agent thread only. */
    private final class End implements TransportPath
    {
        final ConnectionPath connection;
        final MemoryTransport peerTransport;
        /** The other end; null until the acceptor has answered. */
        End peer;
        private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        private final TreeMap<Long, byte[]> early = new TreeMap<>();
        private long nextSendNumber;
        private long nextReceiveNumber;
        private long gapDeadlineNs;
        private byte[] swapped;
        private long swappedNumber;
        private boolean closed;

        End(final ConnectionPath connection, final MemoryTransport peerTransport)
        {
            this.connection = connection;
            this.peerTransport = peerTransport;
        }

        @Override
        public int transmit()
        {
            final int count = connection.fillTransmit(frames, FRAMES_PER_TRANSMIT);
            for (int i = 0; i < count; i++)
            {
                final ByteBuffer frame = frames[i];
                final byte[] bytes = new byte[frame.remaining()];
                frame.get(bytes);
                send(nextSendNumber++, bytes);
            }
            return connection.onTransmitted(frames, count);
        }

        private void send(final long number, final byte[] bytes)
        {
            switch (network.fate(connection.localAddress(), connection.remoteAddress(), bytes.length))
            {
                case DROP ->
                {
                }
                case DUPLICATE ->
                {
                    deliver(number, bytes);
                    deliver(number, bytes);
                }
                case SWAP ->
                {
                    flushSwapped();
                    swapped = bytes;
                    swappedNumber = number;
                    return;
                }
                case HOLD ->
                {
                    final End to = peer;
                    network.hold(() -> peerTransport.post(() -> to.onArrived(number, bytes)));
                }
                default -> deliver(number, bytes);
            }
            flushSwapped();
        }

        private void flushSwapped()
        {
            if (swapped != null)
            {
                final byte[] bytes = swapped;
                swapped = null;
                deliver(swappedNumber, bytes);
            }
        }

        private void deliver(final long number, final byte[] bytes)
        {
            final End to = peer;
            peerTransport.post(() -> to.onArrived(number, bytes));
        }

        /** The peer's agent: a frame of this path arrived. */
        private void onArrived(final long number, final byte[] bytes)
        {
            if (closed)
            {
                return; // in flight when the path closed: lost with it, as bytes on a reset TCP connection
            }
            if (number < nextReceiveNumber || early.containsKey(number))
            {
                network.duplicateDiscarded();
                return;
            }
            if (number > nextReceiveNumber)
            {
                if (early.isEmpty())
                {
                    gapDeadlineNs = nowNs + network.gapTimeoutNs();
                }
                early.put(number, bytes);
                return;
            }
            hand(bytes);
            while (!closed && !early.isEmpty() && early.firstKey() == nextReceiveNumber)
            {
                hand(early.pollFirstEntry().getValue());
            }
            if (!early.isEmpty())
            {
                gapDeadlineNs = nowNs + network.gapTimeoutNs();
            }
        }

        /** Validates a frame and hands it to the connection, as every transport must. */
        private void hand(final byte[] bytes)
        {
            nextReceiveNumber++;
            view.wrap(bytes);
            final int verdict = bytes.length < RdsHeader.LENGTH ? RdsHeader.BAD_LENGTH : RdsHeader.validate(view, 0);
            if (verdict != RdsHeader.VALID || RdsHeader.LENGTH + RdsHeader.length(view, 0) != bytes.length)
            {
                counters.connBadFrame().incrementOrdered();
                connection.onPeerMisbehaved(this, "bad frame: " + (verdict != RdsHeader.VALID ?
                    RdsHeader.describeValidation(verdict) : "length does not match"));
                close();
                return;
            }
            connection.onFrame(view, 0);
        }

        /** This end's agent, each duty cycle: sends a frame held for a swap; breaks the path on a lasting gap. */
        int poll(final long nowNs)
        {
            int work = 0;
            if (swapped != null)
            {
                flushSwapped();
                work++;
            }
            if (!early.isEmpty() && nowNs - gapDeadlineNs >= 0)
            {
                network.pathBrokenByLoss();
                fail("a frame was lost");
                work++;
            }
            return work;
        }

        long deadlineNs(final long nowNs)
        {
            return swapped != null ? nowNs : early.isEmpty() ? NO_DEADLINE : gapDeadlineNs;
        }

        /** A fault of the network: the connection sees the path go down; the peer's end goes down too. */
        void fail(final String reason)
        {
            if (!closed)
            {
                connection.onPathDown(this, reason);
                close();
            }
        }

        /** The peer's agent: the other end closed. */
        private void onPeerClosed()
        {
            if (!closed)
            {
                closed = true;
                ends.remove(this);
                connection.onPathDown(this, "closed by the peer");
            }
        }

        @Override
        public void close()
        {
            if (closed)
            {
                return;
            }
            closed = true;
            ends.remove(this);
            early.clear();
            swapped = null;
            final End other = peer;
            if (other != null)
            {
                peerTransport.post(other::onPeerClosed);
            }
        }

        @Override
        public String toString()
        {
            return "mem " + connection.localAddress().getHostAddress() + " -> " +
                connection.remoteAddress().getHostAddress();
        }
    }
}
