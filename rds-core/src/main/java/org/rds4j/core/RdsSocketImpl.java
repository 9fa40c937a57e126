package org.rds4j.core;

import org.jctools.queues.MpscArrayQueue;
import org.jctools.queues.SpscGrowableArrayQueue;
import org.rds4j.PeerAllowList;
import org.rds4j.RdsException;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.TransportType;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The stack's implementation of {@link RdsSocket}. Application threads copy messages into pooled buffers
 * and hand them to the agent through a lock-free queue; the agent hands received messages back through
 * another. Send-buffer and receive-buffer bytes are counted with atomics both sides update.
 * <p>
 * A call that waits registers in {@link Waiters} and calls {@link AgentCalls#await}: in AGENT mode that parks
 * until the agent wakes it; in INVOKER mode it runs the agent's duty cycle on the waiting thread (or parks
 * briefly while another thread runs it). Non-blocking calls never run a duty cycle in either mode.
 */
final class RdsSocketImpl implements RdsSocket
{
    private final CoreStack stack;
    private final StackCounters counters;
    private final MessagePool pool;
    /** The stack's allow-list: a send elsewhere is EACCES. */
    private final PeerAllowList allowedPeers;

    /** Application threads to agent: messages to send. */
    final MpscArrayQueue<Message> outbound;
    /**
     * Agent to application threads (consumed under {@code receiveLock}): messages received. Practically
     * unbounded because congestion is advisory and a peer may overrun the receive buffer; it grows to the
     * deepest backlog seen and keeps that size, so steady state allocates nothing.
     */
    private final SpscGrowableArrayQueue<Message> inbound = new SpscGrowableArrayQueue<>(1024, 1 << 30);
    private final ConcurrentLinkedQueue<Notification> notifications = new ConcurrentLinkedQueue<>();
    private final ReentrantLock receiveLock = new ReentrantLock();
    private final AtomicLong sendQueued = new AtomicLong();
    private final AtomicLong receiveQueued = new AtomicLong();
    private final Waiters sendWaiters = new Waiters();
    private final Waiters receiveWaiters = new Waiters();
    private final Set<InetSocketAddress> refusedDestinations = ConcurrentHashMap.newKeySet();

    private volatile boolean open = true;
    private volatile boolean blocking = true;
    private volatile InetSocketAddress localAddress;
    private volatile LocalEndpoint endpoint;
    private volatile Transport transport;
    private volatile TransportType transportType;
    private boolean transportTypeSet;
    private volatile int sendBufferBytes;
    private volatile int receiveBufferBytes;
    private volatile long sendTimeoutNs;
    private volatile long receiveTimeoutNs;
    private volatile boolean congestionMonitor;
    private volatile RdsNotificationListener listener;

    /** Agent: this socket's port is marked congested in its endpoint's map. */
    volatile boolean congested;
    /** Agent only: whom to wake at the end of the duty cycle; either set means the socket is on the agent's list. */
    boolean wakeSendersPending;
    boolean wakeReceiversPending;
    /** Agent only: connections by remote address, and the last one used (most sockets talk to one peer at a time). */
    private final Map<InetAddress, Connection> connections = new HashMap<>();
    private InetAddress lastRemote;
    private Connection lastConnection;
    /** The congestion map of the last destination address sent to; replaced (never mutated) on change. */
    private volatile PeerMap lastPeerMap;

    private record PeerMap(InetAddress address, CongestionMap map)
    {
    }

    RdsSocketImpl(final CoreStack stack)
    {
        this.stack = stack;
        this.counters = stack.stackCounters();
        this.pool = stack.pool();
        this.outbound = new MpscArrayQueue<>(stack.config().socketQueueCapacity());
        this.sendBufferBytes = stack.config().sendBufferBytes();
        this.receiveBufferBytes = stack.config().receiveBufferBytes();
        this.transportType = stack.config().transport();
        this.allowedPeers = stack.config().allowedPeers();
    }

    // ---------------------------------------------------------------- bind

    @Override
    public synchronized RdsSocket bind(final InetSocketAddress local) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(local, "local");
        if (localAddress != null)
        {
            throw new RdsException(RdsResult.EINVAL, "socket already bound to " + localAddress);
        }
        if (local.isUnresolved())
        {
            throw new RdsException(RdsResult.EINVAL, "unresolved address " + local);
        }
        final InetAddress address = local.getAddress();
        if (!isUnicast(address))
        {
            throw new RdsException(RdsResult.EINVAL, "cannot bind a wildcard, broadcast or multicast address: " + address);
        }
        if (local.getPort() == 1)
        {
            throw new RdsException(RdsResult.EINVAL, "port 1 is reserved by RDS");
        }
        final Transport chosen = stack.selectTransport(transportType, address);
        chosen.addLocalAddress(address);
        final LocalEndpoint chosenEndpoint = stack.endpoint(address);
        final int port = chosenEndpoint.claim(local.getPort());
        if (port < 0)
        {
            throw new RdsException(RdsResult.EADDRINUSE, local + " is already bound");
        }
        transport = chosen;
        endpoint = chosenEndpoint;
        localAddress = new InetSocketAddress(address, port);
        stack.send(agent -> agent.bind(this));
        return this;
    }

    @Override
    public InetSocketAddress localAddress()
    {
        return localAddress;
    }

    static boolean isUnicast(final InetAddress address)
    {
        if (address.isAnyLocalAddress() || address.isMulticastAddress())
        {
            return false;
        }
        // an Inet4Address's hash code is its address: 255.255.255.255 without allocating its bytes
        return !(address instanceof Inet4Address) || address.hashCode() != -1;
    }

    // ---------------------------------------------------------------- send

    @Override
    public int send(final ByteBuffer src, final InetSocketAddress destination) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(destination, "destination");
        final InetSocketAddress local = localAddress;
        if (local == null)
        {
            return RdsResult.ENOTCONN;
        }
        if (destination.isUnresolved() || !isUnicast(destination.getAddress()) ||
            destination.getAddress().getClass() != local.getAddress().getClass())
        {
            return RdsResult.EINVAL;
        }
        if (!allowedPeers.allows(destination.getAddress()))
        {
            return RdsResult.EACCES;
        }
        final int length = src.remaining();
        if (length > MAX_MESSAGE_SIZE || length > sendBufferBytes)
        {
            return RdsResult.EMSGSIZE;
        }
        final int result = trySend(src, destination, length, local.getPort());
        if (result >= 0)
        {
            if (blocking)
            {
                stack.calls().afterBlockingSend();
            }
            return result;
        }
        if (!blocking)
        {
            if (result == RdsResult.ENOBUFS && congestionMonitor)
            {
                // only a refusal the caller sees is remembered (as the kernel's rs_cong_mask)
                refusedDestinations.add(destination);
            }
            return result;
        }
        return sendBlocking(src, destination, length, local.getPort());
    }

    private int sendBlocking(final ByteBuffer src, final InetSocketAddress destination, final int length, final int sport)
        throws IOException
    {
        final Thread me = Thread.currentThread();
        final long timeoutNs = sendTimeoutNs;
        final long deadlineNs = System.nanoTime() + timeoutNs;
        sendWaiters.add(me);
        try
        {
            while (true)
            {
                ensureOpen();
                final int result = trySend(src, destination, length, sport);
                if (result >= 0)
                {
                    stack.calls().afterBlockingSend();
                    return result;
                }
                if (result == RdsResult.EMSGSIZE)
                {
                    return result;
                }
                final int waited = stack.calls().await(timeoutNs, deadlineNs);
                if (waited < 0)
                {
                    return waited;
                }
            }
        }
        finally
        {
            sendWaiters.remove(me);
            stack.calls().endWait();
        }
    }

    private CongestionMap peerMap(final InetAddress address)
    {
        final PeerMap last = lastPeerMap;
        if (last != null && last.address == address)
        {
            return last.map;
        }
        final CongestionMap map = stack.congestionMap(address);
        if (map != null)
        {
            lastPeerMap = new PeerMap(address, map);
        }
        return map;
    }

    private int trySend(final ByteBuffer src, final InetSocketAddress destination, final int length, final int sport)
    {
        final CongestionMap peerMap = peerMap(destination.getAddress());
        if (peerMap != null && peerMap.isCongested(destination.getPort()))
        {
            counters.sendCongBlocked.increment();
            return RdsResult.ENOBUFS;
        }
        final int limit = sendBufferBytes;
        if (length > limit)
        {
            return RdsResult.EMSGSIZE;
        }
        long queued;
        do
        {
            queued = sendQueued.get();
            if (queued >= limit)
            {
                counters.sendQueueFull.increment();
                return RdsResult.EAGAIN;
            }
        }
        while (!sendQueued.compareAndSet(queued, queued + length));

        final Message message = pool.acquire(length);
        message.buffer.putBytes(RdsHeader.LENGTH, src, src.position(), length);
        message.socket = this;
        message.destination = destination;
        message.sport = sport;
        message.dport = destination.getPort();
        if (queued + length >= limit / 2)
        {
            message.flags = RdsHeader.FLAG_ACK_REQUIRED;
        }
        if (!outbound.offer(message))
        {
            sendQueued.addAndGet(-length);
            pool.release(message);
            counters.sendQueueFull.increment();
            return RdsResult.EAGAIN;
        }
        src.position(src.limit());
        stack.wakeAgent();
        return length;
    }

    /** Agent: an acked or cancelled message's bytes leave the send buffer; senders are woken by {@link #wakeSenders}. */
    void releaseSendBytes(final int length)
    {
        sendQueued.addAndGet(-length);
    }

    /** Agent: something a blocked sender waits for may have changed. */
    void wakeSenders()
    {
        sendWaiters.wakeAll();
    }

    /** Agent: once per duty cycle in which a message was delivered to this socket. */
    void wakeReceivers()
    {
        receiveWaiters.wakeAll();
    }

    @Override
    public int cancelSentTo(final InetSocketAddress destination) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(destination, "destination");
        if (localAddress == null)
        {
            return RdsResult.ENOTCONN;
        }
        if (destination.isUnresolved())
        {
            return RdsResult.EINVAL;
        }
        return stack.calls().call(agent -> agent.cancel(this, destination));
    }

    // ---------------------------------------------------------------- receive

    @Override
    public InetSocketAddress receive(final ByteBuffer dst) throws IOException
    {
        Objects.requireNonNull(dst, "dst");
        ensureReceivable();
        final InetSocketAddress sender = receiveNow(dst);
        return sender != null || !blocking ? sender : receiveBlocking(dst);
    }

    /** Takes one message if one is queued; the lock is held only while taking it, never while waiting. */
    private InetSocketAddress receiveNow(final ByteBuffer dst)
    {
        receiveLock.lock();
        try
        {
            final Message message = nextInbound();
            if (message == null)
            {
                return null;
            }
            final int length = Math.min(message.payloadLength, dst.remaining());
            message.buffer.getBytes(RdsHeader.LENGTH, dst, length);
            final InetSocketAddress sender = message.sender;
            consumed(message);
            return sender;
        }
        finally
        {
            receiveLock.unlock();
        }
    }

    private InetSocketAddress receiveBlocking(final ByteBuffer dst) throws IOException
    {
        final Thread me = Thread.currentThread();
        final long timeoutNs = receiveTimeoutNs;
        final long deadlineNs = System.nanoTime() + timeoutNs;
        receiveWaiters.add(me);
        try
        {
            while (true)
            {
                ensureOpen();
                final InetSocketAddress sender = receiveNow(dst);
                if (sender != null || stack.calls().await(timeoutNs, deadlineNs) < 0)
                {
                    return sender;
                }
            }
        }
        finally
        {
            receiveWaiters.remove(me);
            stack.calls().endWait();
        }
    }

    @Override
    public int poll(final RdsMessageHandler handler, final int limit) throws IOException
    {
        Objects.requireNonNull(handler, "handler");
        if (limit <= 0)
        {
            throw new IllegalArgumentException("limit must be positive: " + limit);
        }
        ensureReceivable();
        receiveLock.lock();
        try
        {
            int delivered = 0;
            Message message;
            while (delivered < limit && (message = nextInbound()) != null)
            {
                delivered++;
                try
                {
                    handler.onMessage(message.sender, message.payload());
                }
                finally
                {
                    consumed(message);
                }
            }
            return delivered;
        }
        finally
        {
            receiveLock.unlock();
        }
    }

    private Message nextInbound()
    {
        if (!notifications.isEmpty())
        {
            deliverNotifications();
        }
        return inbound.relaxedPoll();
    }

    private void deliverNotifications()
    {
        Notification notification;
        while ((notification = notifications.poll()) != null)
        {
            final RdsNotificationListener current = listener;
            if (current != null)
            {
                notification.deliverTo(current);
            }
        }
    }

    private void consumed(final Message message)
    {
        final long queued = receiveQueued.addAndGet(-message.payloadLength);
        if (congested && queued < receiveBufferBytes / 2)
        {
            stack.wakeAgent();
        }
        pool.release(message);
    }

    /**
     * Agent: queues a received message; receivers are woken by {@link #wakeReceivers}.
     *
     * @return the bytes now queued.
     */
    long enqueueInbound(final Message message)
    {
        final long queued = receiveQueued.addAndGet(message.payloadLength);
        inbound.offer(message);
        return queued;
    }

    /**
     * Agent, when the socket is closed: recycles what the application did not receive. Never waits for an
     * application thread: if one is still inside receive or poll, the messages are left to the garbage
     * collector instead.
     */
    void releaseInbound()
    {
        if (!receiveLock.tryLock())
        {
            return;
        }
        try
        {
            Message message;
            while ((message = inbound.relaxedPoll()) != null)
            {
                receiveQueued.addAndGet(-message.payloadLength);
                pool.release(message);
            }
        }
        finally
        {
            receiveLock.unlock();
        }
    }

    // ---------------------------------------------------------------- notifications

    @Override
    public RdsSocket setNotificationListener(final RdsNotificationListener listener)
    {
        this.listener = listener;
        return this;
    }

    /** Agent: queues an event if someone listens. */
    void notifyListener(final Notification notification)
    {
        if (listener != null)
        {
            notifications.offer(notification);
            receiveWaiters.wakeAll();
        }
    }

    /** Agent: a congested port became free; notify if this socket was refused by it while monitoring. */
    void onPortFreed(final InetAddress address, final int port)
    {
        if (refusedDestinations.isEmpty())
        {
            return;
        }
        for (final Iterator<InetSocketAddress> it = refusedDestinations.iterator(); it.hasNext(); )
        {
            final InetSocketAddress refused = it.next();
            if (refused.getPort() == port && refused.getAddress().equals(address))
            {
                it.remove();
                notifyListener(new Notification(Notification.Kind.UNCONGESTED, refused));
            }
        }
    }

    // ---------------------------------------------------------------- options and state

    @Override
    public <T> RdsSocket setOption(final SocketOption<T> option, final T value) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(option, "option");
        Objects.requireNonNull(value, "value");
        if (option == RdsOptions.SO_SNDBUF)
        {
            sendBufferBytes = positive(option, (Integer)value);
        }
        else if (option == RdsOptions.SO_RCVBUF)
        {
            receiveBufferBytes = positive(option, (Integer)value);
        }
        else if (option == RdsOptions.SO_SNDTIMEO)
        {
            sendTimeoutNs = timeout(option, (Duration)value);
        }
        else if (option == RdsOptions.SO_RCVTIMEO)
        {
            receiveTimeoutNs = timeout(option, (Duration)value);
        }
        else if (option == RdsOptions.RDS_CONG_MONITOR)
        {
            congestionMonitor = (Boolean)value;
            if (!congestionMonitor)
            {
                refusedDestinations.clear();
            }
        }
        else if (option == RdsOptions.RDS_TRANSPORT)
        {
            setTransport((TransportType)value);
        }
        else
        {
            throw new UnsupportedOperationException("not an RDS socket option: " + option);
        }
        return this;
    }

    private synchronized void setTransport(final TransportType type) throws RdsException
    {
        if (localAddress != null || transportTypeSet)
        {
            throw new RdsException(RdsResult.EOPNOTSUPP, "the transport can be set once, before bind");
        }
        transportType = type;
        transportTypeSet = true;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(final SocketOption<T> option) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(option, "option");
        final Object value;
        if (option == RdsOptions.SO_SNDBUF)
        {
            value = sendBufferBytes;
        }
        else if (option == RdsOptions.SO_RCVBUF)
        {
            value = receiveBufferBytes;
        }
        else if (option == RdsOptions.SO_SNDTIMEO)
        {
            value = Duration.ofNanos(sendTimeoutNs);
        }
        else if (option == RdsOptions.SO_RCVTIMEO)
        {
            value = Duration.ofNanos(receiveTimeoutNs);
        }
        else if (option == RdsOptions.RDS_CONG_MONITOR)
        {
            value = congestionMonitor;
        }
        else if (option == RdsOptions.RDS_TRANSPORT)
        {
            value = transportType;
        }
        else
        {
            throw new UnsupportedOperationException("not an RDS socket option: " + option);
        }
        return (T)value;
    }

    private static int positive(final SocketOption<?> option, final int value)
    {
        if (value <= 0)
        {
            throw new IllegalArgumentException(option + " must be positive: " + value);
        }
        return value;
    }

    private static long timeout(final SocketOption<?> option, final Duration value)
    {
        if (value.isNegative())
        {
            throw new IllegalArgumentException(option + " must not be negative: " + value);
        }
        return value.isZero() ? 0 : Math.max(1, value.toNanos());
    }

    @Override
    public RdsSocket configureBlocking(final boolean blocking)
    {
        this.blocking = blocking;
        return this;
    }

    @Override
    public boolean isBlocking()
    {
        return blocking;
    }

    @Override
    public long sendQueuedBytes()
    {
        return sendQueued.get();
    }

    @Override
    public long receiveQueuedBytes()
    {
        return receiveQueued.get();
    }

    int receiveBufferBytes()
    {
        return receiveBufferBytes;
    }

    /** @return the socket's SO_SNDBUF in bytes; any thread. */
    int sendBufferBytes()
    {
        return sendBufferBytes;
    }

    LocalEndpoint endpoint()
    {
        return endpoint;
    }

    Transport transport()
    {
        return transport;
    }

    /** Agent only: the connection to a remote node, cached per socket. */
    Connection connectionTo(final InetAddress remote, final StackAgent agent)
    {
        if (remote == lastRemote)
        {
            return lastConnection;
        }
        Connection connection = connections.get(remote);
        if (connection == null)
        {
            connection = agent.connection(endpoint, remote, transport);
            connections.put(remote, connection);
        }
        lastRemote = remote;
        lastConnection = connection;
        return connection;
    }

    @Override
    public boolean isOpen()
    {
        return open;
    }

    @Override
    public void close()
    {
        synchronized (this)
        {
            if (!open)
            {
                return;
            }
            open = false;
        }
        final InetSocketAddress local = localAddress;
        if (local != null)
        {
            // the port is free when close returns, as in the kernel; the agent forgets the socket next
            endpoint.release(local.getPort());
            stack.send(agent -> agent.unbind(this));
        }
        stack.onSocketClosed(this);
        sendWaiters.wakeAll();
        receiveWaiters.wakeAll();
    }

    private void ensureOpen() throws ClosedChannelException
    {
        if (!open)
        {
            throw new ClosedChannelException();
        }
    }

    private void ensureReceivable() throws IOException
    {
        ensureOpen();
        if (localAddress == null)
        {
            throw new RdsException(RdsResult.ENOTCONN, "socket is not bound");
        }
    }

    @Override
    public String toString()
    {
        return "RdsSocket[" + (localAddress == null ? "unbound" : localAddress) + (open ? "" : " closed") + "]";
    }
}
