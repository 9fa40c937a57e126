package org.rds4j.transport.tcp;

import jdk.net.ExtendedSocketOptions;
import org.agrona.concurrent.status.AtomicCounter;
import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.core.spi.Admission;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.TransportCounters;
import org.rds4j.core.spi.Addresses;
import org.rds4j.core.spi.IdleWaiter;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * RDS over TCP. One TCP connection per node pair, set up by the kernel's rules: the node with the lower
 * address connects; a connection from a higher address is closed unread and answered by connecting back;
 * a higher node with data connects and closes at once ("pokes") to ask for that; a connection from the lower
 * node while one is up replaces it (ours is stale). Every bound local address gets a listener on the
 * configured port (16385). The stack's admission rules ({@code allowedPeers}, {@code peerConnectRate},
 * {@code maxPeers}) are asked before anything is made for an accepted connection.
 * <p>
 * Unlike the kernel's {@code rds_tcp}, which counts bytes acked by TCP as delivered, rds4j sends RDS acks
 * over TCP as over IB, so a message leaves the sender's retransmission list only once the peer's stack has
 * it. Headers are not checksummed (TCP checks the bytes), as in the kernel.
 * <p>
 * Threading: {@link #addLocalAddress} and {@link #abortAll} may be called from any thread; all I/O
 * runs on the agent thread in {@link #doWork}, with a non-blocking {@link Selector}.
 */
public final class TcpTransport implements Transport
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);
    private static final int ACCEPT_BACKLOG = 128;
    /**
     * Up to this many connections are read directly every duty cycle, without asking the selector first: one
     * system call per cycle instead of two when a frame is waiting, which is most of a round trip's cost on
     * loopback. With more, the selector finds the readable ones.
     */
    static final int DIRECT_READ_PATHS = 4;
    /** While connections are read directly, how often the selector is asked about accepts and other events. */
    private static final long DIRECT_READ_SELECT_INTERVAL_NS = TimeUnit.MICROSECONDS.toNanos(50);
    /** How often paths are checked for a frame left incomplete longer than the frame timeout. */
    private static final long FRAME_CHECK_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(5);

    private final TransportContext context;
    private final RdsStackConfig config;
    private final TcpConfig tcpConfig;
    private final TransportCounters counters;
    /** Writes the socket took only in part: it waits for room (kernel {@code tcp_sndbuf_full}). */
    private final AtomicCounter sndbufFull;
    /** Bytes sent with {@code sendfile} from the paths' send rings instead of copied into the socket. */
    private final AtomicCounter zeroCopyBytes;
    /** Lends the paths their read buffers and copy stages; counts its allocations in {@code tcp_buffer_alloc}. */
    private final TcpBufferPool buffers;
    private final Selector selector;
    private final Map<InetAddress, ServerSocketChannel> listeners = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final List<TcpPath> paths = new ArrayList<>();
    private final List<ConnectAttempt> attempts = new ArrayList<>();
    private final Consumer<SelectionKey> onSelected = this::onSelected;
    private final IdleWaiter selectorWaiter = new IdleWaiter()
    {
        @Override
        public void await(final long timeoutNs)
        {
            try
            {
                // ready keys are handled by the next duty cycle's selectNow; this only waits for readiness
                selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNs)));
                selector.selectedKeys().clear();
            }
            catch (final IOException ex)
            {
                LOG.error("select failed", ex);
            }
        }

        @Override
        public void wake()
        {
            selector.wakeup();
        }
    };
    private final long frameTimeoutNs;
    private long nowNs;
    private long lastFrameCheckNs;
    private int selectedWork;
    private int readBufferHighWater;
    /** This cycle reads every path directly (few paths); the selector reports only accepts, connects and room. */
    private boolean directRead;
    private long nextSelectNs;

    /** A connect in progress, or a poke waiting for the peer to connect back. */
    private static final class ConnectAttempt
    {
        final ConnectionPath connection;
        final SocketChannel channel;
        final boolean poke;
        final long deadlineNs;
        boolean awaitingPeer;

        ConnectAttempt(final ConnectionPath connection, final SocketChannel channel, final boolean poke, final long deadlineNs)
        {
            this.connection = connection;
            this.channel = channel;
            this.poke = poke;
            this.deadlineNs = deadlineNs;
        }
    }

    private static final class Listener
    {
        final ServerSocketChannel channel;
        final InetAddress local;

        Listener(final ServerSocketChannel channel, final InetAddress local)
        {
            this.channel = channel;
            this.local = local;
        }
    }

    TcpTransport(final TransportContext context)
    {
        this.context = context;
        this.config = context.config();
        this.tcpConfig = TcpConfig.of(config);
        this.counters = context.counters();
        this.sndbufFull = counters.newTransportCounter("tcp_sndbuf_full");
        this.zeroCopyBytes = counters.newTransportCounter("tcp_zero_copy_bytes");
        this.buffers = new TcpBufferPool(TcpBufferPool.DEFAULT_SMALLEST_CLASS, TcpBufferPool.DEFAULT_MAX_IDLE_BYTES,
            counters.newTransportCounter("tcp_buffer_alloc"));
        this.frameTimeoutNs = tcpConfig.frameTimeout().toNanos();
        try
        {
            this.selector = Selector.open();
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot open a selector", ex);
        }
    }

    @Override
    public String name()
    {
        return "tcp";
    }

    @Override
    public TransportType type()
    {
        return TransportType.TCP;
    }

    @Override
    public boolean canServe(final InetAddress local)
    {
        try
        {
            return local.isLoopbackAddress() || NetworkInterface.getByInetAddress(local) != null;
        }
        catch (final SocketException ex)
        {
            return false;
        }
    }

    @Override
    public void addLocalAddress(final InetAddress local) throws RdsException
    {
        if (listeners.containsKey(local))
        {
            return;
        }
        synchronized (listeners)
        {
            if (listeners.containsKey(local))
            {
                return;
            }
            final InetSocketAddress address = new InetSocketAddress(local, tcpConfig.tcpPort());
            ServerSocketChannel channel = null;
            try
            {
                channel = ServerSocketChannel.open();
                channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                channel.bind(address, ACCEPT_BACKLOG);
                channel.configureBlocking(false);
            }
            catch (final BindException ex)
            {
                closeQuietly(channel);
                final boolean inUse = String.valueOf(ex.getMessage()).contains("in use");
                throw new RdsException(inUse ? RdsResult.EADDRINUSE : RdsResult.EADDRNOTAVAIL,
                    "cannot listen on " + address + " for RDS over TCP: " + ex.getMessage());
            }
            catch (final IOException ex)
            {
                closeQuietly(channel);
                throw new RdsException(RdsResult.EADDRNOTAVAIL, "cannot listen on " + address + ": " + ex);
            }
            listeners.put(local, channel);
            final ServerSocketChannel listening = channel;
            tasks.add(() -> register(listening, local));
            context.wakeAgent();
            LOG.debug("listening on {}", address);
        }
    }

    private void register(final ServerSocketChannel channel, final InetAddress local)
    {
        try
        {
            channel.register(selector, SelectionKey.OP_ACCEPT, new Listener(channel, local));
        }
        catch (final IOException ex)
        {
            LOG.error("cannot register listener on {}", local, ex);
        }
    }

    /**
     * The agent waits for TCP I/O in this transport's selector: a frame arriving, a connection accepted or a
     * connect completing ends the wait at once; {@link IdleWaiter#wake()} is {@link Selector#wakeup()}.
     */
    @Override
    public IdleWaiter idleWaiter()
    {
        return selectorWaiter;
    }

    @Override
    public boolean checksumsHeaders()
    {
        return false;
    }

    /**
     * Resets every TCP connection (RST) as a network fault would; the connections reconnect and retransmit.
     * Thread safe; takes effect on the agent's next duty cycle.
     */
    @Override
    public void abortAll()
    {
        tasks.add(() ->
        {
            for (final TcpPath path : new ArrayList<>(paths))
            {
                path.abort();
            }
        });
        context.wakeAgent();
    }

    @Override
    public void connect(final ConnectionPath connection)
    {
        final InetAddress local = connection.localAddress();
        final InetAddress remote = connection.remoteAddress();
        if (!context.admitOutgoing(local, remote))
        {
            connection.onConnectFailed("peer outside allowedPeers");
            return;
        }
        final boolean poke = Addresses.compare(local, remote) > 0;
        SocketChannel channel = null;
        try
        {
            channel = SocketChannel.open();
            channel.configureBlocking(false);
            configure(channel);
            channel.bind(new InetSocketAddress(local, 0));
            final ConnectAttempt attempt = new ConnectAttempt(connection, channel, poke,
                nowNs + config.connectTimeout().toNanos());
            attempts.add(attempt);
            if (channel.connect(new InetSocketAddress(remote, tcpConfig.tcpPort())))
            {
                onConnectFinished(attempt, null);
            }
            else
            {
                channel.register(selector, SelectionKey.OP_CONNECT, attempt);
            }
        }
        catch (final IOException ex)
        {
            closeQuietly(channel);
            attempts.removeIf(a -> a.connection == connection);
            connection.onConnectFailed(ex.toString());
        }
    }

    private void configure(final SocketChannel channel) throws IOException
    {
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        try
        {
            channel.setOption(ExtendedSocketOptions.TCP_KEEPIDLE, (int)tcpConfig.keepAliveIdle().toSeconds());
            channel.setOption(ExtendedSocketOptions.TCP_KEEPINTERVAL, (int)tcpConfig.keepAliveInterval().toSeconds());
            channel.setOption(ExtendedSocketOptions.TCP_KEEPCOUNT, tcpConfig.keepAliveCount());
        }
        catch (final UnsupportedOperationException ex)
        {
            LOG.debug("TCP keepalive tuning not supported here; the system's defaults apply");
        }
    }

    private void onConnectFinished(final ConnectAttempt attempt, final SelectionKey key) throws IOException
    {
        if (attempt.poke)
        {
            // the lower node answers a connection from us by connecting back
            if (key != null)
            {
                key.cancel();
            }
            closeQuietly(attempt.channel);
            attempt.awaitingPeer = true;
            return;
        }
        attempts.remove(attempt);
        final TcpPath path = new TcpPath(
            attempt.connection, attempt.channel, counters, sndbufFull, zeroCopyBytes, buffers, tcpConfig.tcpSendRingBytes());
        path.attach(key != null ? key : attempt.channel.register(selector, SelectionKey.OP_READ));
        paths.add(path);
        attempt.connection.onConnected(path);
    }

    @Override
    public int doWork(final long nowNs)
    {
        this.nowNs = nowNs;
        int work = 0;
        Runnable task;
        while ((task = tasks.poll()) != null)
        {
            task.run();
            work++;
        }
        directRead = paths.size() <= DIRECT_READ_PATHS;
        if (directRead)
        {
            for (int i = 0; i < paths.size(); i++)
            {
                work += readPath(paths.get(i));
            }
        }
        if (!directRead || nowNs - nextSelectNs >= 0 || !attempts.isEmpty() || anyPathWaitingForRoom())
        {
            nextSelectNs = nowNs + DIRECT_READ_SELECT_INTERVAL_NS;
            selectedWork = 0;
            try
            {
                selector.selectNow(onSelected);
            }
            catch (final IOException ex)
            {
                LOG.error("select failed", ex);
            }
            work += selectedWork;
        }
        if (!attempts.isEmpty())
        {
            work += expireAttempts(nowNs);
        }
        if (!paths.isEmpty())
        {
            for (int i = 0; i < paths.size(); i++)
            {
                work += paths.get(i).pollTransportAcks();
            }
            if (nowNs - lastFrameCheckNs >= FRAME_CHECK_INTERVAL_NS)
            {
                lastFrameCheckNs = nowNs;
                work += expireFrames(nowNs);
            }
            paths.removeIf(TcpPath::releaseBuffersIfClosed);
        }
        return work;
    }

    /**
     * Polled work keeps the agent's idle waits short: tasks handed over, connects in progress (their timeout),
     * a path with a frame part way in (the frame timeout) or whose peer's TCP acks stand in for RDS acks.
     * Otherwise only I/O and the application wake the agent for this transport.
     */
    @Override
    public long idleDeadlineNs(final long nowNs)
    {
        if (!tasks.isEmpty() || !attempts.isEmpty())
        {
            return nowNs;
        }
        for (int i = 0; i < paths.size(); i++)
        {
            if (paths.get(i).isPolled())
            {
                return nowNs;
            }
        }
        return NO_DEADLINE;
    }

    private void onSelected(final SelectionKey key)
    {
        final Object attachment = key.attachment();
        if (!key.isValid())
        {
            return;
        }
        if (attachment instanceof TcpPath)
        {
            final TcpPath path = (TcpPath)attachment;
            if (key.isWritable())
            {
                selectedWork += path.onWritable();
            }
            if (key.isValid() && key.isReadable() && !directRead)
            {
                selectedWork += readPath(path);
            }
        }
        else if (attachment instanceof ConnectAttempt)
        {
            finishConnect((ConnectAttempt)attachment, key);
            selectedWork++;
        }
        else if (attachment instanceof Listener)
        {
            selectedWork += accept((Listener)attachment);
        }
    }

    private int readPath(final TcpPath path)
    {
        if (path.isClosed())
        {
            return 0;
        }
        final int frames = path.onReadable(nowNs);
        readBufferHighWater = Math.max(readBufferHighWater, path.readBufferHighWater());
        return frames;
    }

    private boolean anyPathWaitingForRoom()
    {
        for (int i = 0; i < paths.size(); i++)
        {
            if (paths.get(i).isWaitingForRoom())
            {
                return true;
            }
        }
        return false;
    }

    private void finishConnect(final ConnectAttempt attempt, final SelectionKey key)
    {
        try
        {
            if (attempt.channel.finishConnect())
            {
                onConnectFinished(attempt, key);
            }
        }
        catch (final IOException ex)
        {
            key.cancel();
            closeQuietly(attempt.channel);
            attempts.remove(attempt);
            attempt.connection.onConnectFailed(ex.toString());
        }
    }

    private int expireFrames(final long nowNs)
    {
        int dropped = 0;
        for (int i = 0; i < paths.size(); i++)
        {
            final TcpPath path = paths.get(i);
            if (path.isFrameOverdue(nowNs, frameTimeoutNs))
            {
                path.dropForFrameTimeout(frameTimeoutNs);
                dropped++;
            }
        }
        return dropped;
    }

    /**
     * @return the largest read buffer a connection of this transport has had (tests: memory stays bounded
     *         whatever a peer announces).
     */
    int readBufferHighWater()
    {
        return readBufferHighWater;
    }

    /** @return the pool that lends the paths their buffers; agent thread only (tests: from a task or INVOKER mode). */
    TcpBufferPool bufferPool()
    {
        return buffers;
    }

    /** @return the paths, open or closed and not yet forgotten; agent thread only (tests). */
    List<TcpPath> paths()
    {
        return paths;
    }

    private int expireAttempts(final long nowNs)
    {
        int expired = 0;
        for (int i = attempts.size() - 1; i >= 0; i--)
        {
            final ConnectAttempt attempt = attempts.get(i);
            if (!attempt.connection.isConnecting())
            {
                attempts.remove(i);
            }
            else if (nowNs - attempt.deadlineNs >= 0)
            {
                attempts.remove(i);
                closeQuietly(attempt.channel);
                attempt.connection.onConnectFailed(attempt.awaitingPeer ? "peer did not connect back" : "connect timed out");
                expired++;
            }
        }
        return expired;
    }

    private int accept(final Listener listener)
    {
        int accepted = 0;
        while (true)
        {
            final SocketChannel channel;
            try
            {
                channel = listener.channel.accept();
            }
            catch (final IOException ex)
            {
                LOG.warn("accept on {} failed: {}", listener.local, ex.toString());
                return accepted;
            }
            if (channel == null)
            {
                return accepted;
            }
            accepted++;
            onAccepted(listener.local, channel);
        }
    }

    private void onAccepted(final InetAddress local, final SocketChannel channel)
    {
        final InetAddress remote;
        try
        {
            remote = ((InetSocketAddress)channel.getRemoteAddress()).getAddress();
        }
        catch (final IOException ex)
        {
            closeQuietly(channel);
            return;
        }
        if (context.admitIncoming(local, remote, nowNs) != Admission.ADMITTED)
        {
            closeQuietly(channel);
            return;
        }
        final int order = Addresses.compare(remote, local);
        final ConnectionPath connection = order == 0 ? null : context.connection(local, remote, this);
        if (connection == null)
        {
            counters.connRefused().incrementOrdered();
            closeQuietly(channel);
            return;
        }
        if (order > 0)
        {
            // a higher node asks us to connect: close unread, then connect back
            counters.connRefused().incrementOrdered();
            closeQuietly(channel);
            connection.connectIfDown();
            return;
        }
        if (connection.isUp())
        {
            // Ours is stale: drop it, after reading what arrived on it, and take the newcomer as the path.
            // Refusing the newcomer, as kernel 6.1 (and rds4j's IB) does, would lose what a kernel peer already
            // sent on it: it counts what TCP acked as delivered.
            connection.onPeerConnectedAgain();
        }
        try
        {
            channel.configureBlocking(false);
            configure(channel);
            final TcpPath path = new TcpPath(
                connection, channel, counters, sndbufFull, zeroCopyBytes, buffers, tcpConfig.tcpSendRingBytes());
            path.attach(channel.register(selector, SelectionKey.OP_READ));
            paths.add(path);
            attempts.removeIf(a -> a.connection == connection);
            connection.onConnected(path);
        }
        catch (final IOException ex)
        {
            closeQuietly(channel);
            LOG.debug("accepted connection from {} failed: {}", remote, ex.toString());
        }
    }

    @Override
    public void close()
    {
        for (final TcpPath path : paths)
        {
            path.close();
            TcpPath.releaseBuffersIfClosed(path);
        }
        paths.clear();
        for (final ConnectAttempt attempt : attempts)
        {
            closeQuietly(attempt.channel);
        }
        attempts.clear();
        for (final ServerSocketChannel listener : listeners.values())
        {
            closeQuietly(listener);
        }
        listeners.clear();
        closeQuietly(selector);
    }

    static void closeQuietly(final Closeable closeable)
    {
        if (closeable == null)
        {
            return;
        }
        try
        {
            closeable.close();
        }
        catch (final IOException ex)
        {
            LOG.debug("close failed", ex);
        }
    }
}
