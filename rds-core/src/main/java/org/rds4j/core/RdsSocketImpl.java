package org.rds4j.core;

import org.jctools.queues.MpscArrayQueue;
import org.rds4j.PeerAllowList;
import org.rds4j.RdsClaim;
import org.rds4j.RdsException;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsReceiveInfo;
import org.rds4j.RdsResult;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.TransportType;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.RdsHeader;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The stack's implementation of {@link RdsSocket}. Application threads copy messages into pooled buffers
 * and hand them to the agent through a lock-free queue; the agent hands received messages back through
 * another. Send-buffer and receive-buffer bytes are counted with atomics both sides update. Its parts: the
 * options ({@link SocketOptions}), the receive side ({@link ReceiveQueue}), the send side of congestion
 * ({@link Congestion.Sender}) and the agent's own state ({@link SocketAgentState}).
 * <p>
 * A receive that waits registers in {@link Waiters} and calls {@link AgentCalls#await}, which runs the agent's
 * duty cycle on the waiting thread (or parks while another thread runs it), in both threading modes; a send
 * waiting for room calls {@link AgentCalls#awaitRoom}, which does the same in INVOKER mode and parks until the
 * agent frees room in AGENT mode. A blocking send that queues at once may run one duty cycle
 * ({@link AgentCalls#afterBlockingSend}). Non-blocking calls never run a duty cycle.
 */
final class RdsSocketImpl implements WatchableSocket, Congestion.Member
{
    // Fields by owning thread, as Aeron's NetworkPublication groups them.

    // Set at construction; any thread.
    private final CoreStack stack;
    private final StackCounters counters;
    private final MessagePool pool;
    /** The stack's allow-list: a send elsewhere is EACCES. */
    private final PeerAllowList allowedPeers;
    private final SocketOptions options;
    /** The send side of congestion: the destination check, and the refusals {@code RDS_CONG_MONITOR} reports. */
    private final Congestion.Sender congestion;
    /** The agent's side of this socket: fields of the agent's thread, apart. */
    private final SocketAgentState agentState = new SocketAgentState();

    // Application threads write, the agent reads (and frees send-buffer bytes).
    /** Messages to send. */
    final MpscArrayQueue<Message> outbound;
    private final AtomicLong sendQueued = new AtomicLong();
    /** Places in {@link #outbound} taken by messages sent or claimed and not yet taken by the agent. */
    private final AtomicInteger outboundSlots = new AtomicInteger();
    private final RdsClaim.Owner claimOwner = new ClaimOwner();
    /** Where messages are written, mapped at the first send (under {@link #stateLock}); the agent frees records. */
    private volatile SendRing sendRing;
    /** Set once by bind, under {@link #stateLock}; the agent reads them after the bind command. */
    private volatile InetSocketAddress localAddress;
    private volatile LocalEndpoint endpoint;
    private volatile Transport transport;
    private volatile boolean open = true;

    // The agent writes, application threads take.
    /** Received messages and events, and the threads waiting for them. */
    final ReceiveQueue received;
    /** Threads blocked in send: they register, the agent wakes them. */
    private final Waiters sendWaiters = new Waiters();
    /** A selector's key or push delivery, signalled when the waiters are woken; set under {@link #stateLock}, as close. */
    private volatile SocketWatcher watcher;

    // Application threads only.
    private volatile boolean blocking = true;
    /**
     * Bind, the transport option and close: a lock, not a monitor, so that a virtual thread in them never holds
     * its carrier on JDK 21-23 (none of them waits while holding it).
     */
    private final ReentrantLock stateLock = new ReentrantLock();

    RdsSocketImpl(final CoreStack stack)
    {
        this.stack = stack;
        this.counters = stack.stackCounters();
        this.pool = stack.pool();
        this.outbound = new MpscArrayQueue<>(stack.config().socketQueueCapacity());
        this.allowedPeers = stack.config().allowedPeers();
        this.congestion = new Congestion.Sender(stack::congestionMap, counters.sendCongBlocked);
        this.options = new SocketOptions(stack.config(), congestion);
        this.received = new ReceiveQueue(pool, this, stack::wakeAgent, Path.of(stack.config().infoDirectory()),
            stack.config().receiveRingBytes());
    }

    // ---------------------------------------------------------------- bind

    @Override
    public RdsSocket bind(final SocketAddress local) throws IOException
    {
        ensureOpen();
        if (local != null && !(local instanceof InetSocketAddress))
        {
            throw new UnsupportedAddressTypeException();
        }
        return bind((InetSocketAddress)local);
    }

    @Override
    public RdsSocket bind(final InetSocketAddress local) throws IOException
    {
        stateLock.lock();
        try
        {
            bindLocked(local);
        }
        finally
        {
            stateLock.unlock();
        }
        return this;
    }

    private void bindLocked(final InetSocketAddress local) throws IOException
    {
        ensureOpen();
        if (local == null)
        {
            // NIO's bind(null) asks for an address of the system's choosing: the wildcard, which RDS refuses
            throw new RdsException(RdsResult.EINVAL, "cannot bind null: RDS needs a local unicast address");
        }
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
        final Transport chosen = stack.selectTransport(options.transportType(), address);
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
    }

    @Override
    public InetSocketAddress localAddress()
    {
        return localAddress;
    }

    @Override
    public InetSocketAddress getLocalAddress() throws IOException
    {
        ensureOpen();
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
        Objects.requireNonNull(src, "src");
        final int length = src.remaining();
        final int checked = checkSend(destination, length);
        if (checked < 0)
        {
            return checked;
        }
        final InetSocketAddress local = localAddress;
        final int result = trySend(src, destination, length, local.getPort());
        if (result >= 0)
        {
            if (blocking)
            {
                stack.calls().afterBlockingSend(outbound, sendQueued.get() == result);
            }
            else
            {
                stack.wakeAgent();
            }
            return result;
        }
        if (!blocking)
        {
            if (result == RdsResult.ENOBUFS)
            {
                congestion.onRefusalReturned(destination);
            }
            return result;
        }
        return sendBlocking(src, destination, length, local.getPort());
    }

    /**
     * The checks of a send that need no room: the socket open and bound, the destination valid and allowed, the
     * length within 1 MiB and the send buffer.
     *
     * @return 0, or {@link RdsResult#ENOTCONN}, {@link RdsResult#EINVAL}, {@link RdsResult#EACCES} or
     *         {@link RdsResult#EMSGSIZE}.
     */
    private int checkSend(final InetSocketAddress destination, final int length) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(destination, "destination");
        return checkSend(localAddress, destination, length, allowedPeers, options.sendBufferBytes());
    }

    /**
     * The checks of a send that need no room, for any socket that sends as this one does (a driver's client too).
     *
     * @param local the socket's bound address, null if unbound.
     * @return 0, or {@link RdsResult#ENOTCONN}, {@link RdsResult#EINVAL}, {@link RdsResult#EACCES} or
     *         {@link RdsResult#EMSGSIZE}.
     */
    static int checkSend(final InetSocketAddress local, final InetSocketAddress destination, final int length,
        final PeerAllowList allowedPeers, final int sendBufferBytes)
    {
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
        if (length < 0 || length > MAX_MESSAGE_SIZE || length > sendBufferBytes)
        {
            return RdsResult.EMSGSIZE;
        }
        return 0;
    }

    /**
     * A driver's session: queues a message its client admitted. The client tested the destination and its congestion
     * and took the room in its own send buffer, whose bytes this socket's mirror ({@code SO_SNDBUF} set to the
     * client's), so neither is tested again: a map that changed since, or a buffer the client made smaller, must
     * not lose a message the client was told is sent. Never blocks.
     *
     * @return the length, or {@link RdsResult#EAGAIN} while {@link #outbound} is full (the session tries again once
     *         the agent took some), or a closed socket's {@link RdsResult#ENOTCONN}.
     */
    int sendAdmitted(final ByteBuffer src, final InetSocketAddress destination)
    {
        final InetSocketAddress local = localAddress;
        if (!open || local == null)
        {
            return RdsResult.ENOTCONN;
        }
        final int length = src.remaining();
        if (outboundSlots.incrementAndGet() > outbound.capacity())
        {
            outboundSlots.decrementAndGet();
            return RdsResult.EAGAIN;
        }
        final long queued = sendQueued.getAndAdd(length);
        final Message message = newMessage(destination, length, local.getPort(), queued);
        message.buffer.putBytes(RdsHeader.LENGTH, src, src.position(), length);
        outbound.offer(message); // never full: the slot is taken
        src.position(src.limit());
        stack.wakeAgent();
        return length;
    }

    private int sendBlocking(final ByteBuffer src, final InetSocketAddress destination, final int length, final int sport)
        throws IOException
    {
        final Thread me = Thread.currentThread();
        final long timeoutNs = options.sendTimeoutNs();
        final long deadlineNs = System.nanoTime() + timeoutNs;
        sendWaiters.add(me);
        stack.calls().beginRoomWait();
        try
        {
            while (true)
            {
                ensureOpen();
                final int result = trySend(src, destination, length, sport);
                if (result >= 0)
                {
                    stack.calls().afterBlockingSend(outbound, sendQueued.get() == result);
                    return result;
                }
                if (result == RdsResult.EMSGSIZE)
                {
                    return result;
                }
                final int waited = stack.calls().awaitRoom(timeoutNs, deadlineNs);
                if (waited < 0)
                {
                    return waited;
                }
            }
        }
        finally
        {
            sendWaiters.remove(me);
            stack.calls().endRoomWait();
        }
    }

    private int trySend(final ByteBuffer src, final InetSocketAddress destination, final int length, final int sport)
    {
        final long queued = reserve(destination, length);
        if (queued < 0)
        {
            return (int)queued;
        }
        final Message message = newMessage(destination, length, sport, queued);
        message.buffer.putBytes(RdsHeader.LENGTH, src, src.position(), length);
        outbound.offer(message); // never full: reserve took a slot
        src.position(src.limit());
        return length;
    }

    /**
     * Takes room for a message: its bytes in the send buffer and a slot in {@link #outbound}, so that queueing it
     * cannot fail afterwards (a claim's commit must not).
     *
     * @return the bytes queued before this message, or {@link RdsResult#ENOBUFS}, {@link RdsResult#EMSGSIZE} or
     *         {@link RdsResult#EAGAIN}.
     */
    private long reserve(final InetSocketAddress destination, final int length)
    {
        if (congestion.refuses(destination))
        {
            return RdsResult.ENOBUFS;
        }
        final int limit = options.sendBufferBytes();
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
        if (outboundSlots.incrementAndGet() > outbound.capacity())
        {
            outboundSlots.decrementAndGet();
            sendQueued.addAndGet(-length);
            counters.sendQueueFull.increment();
            return RdsResult.EAGAIN;
        }
        return queued;
    }

    private Message newMessage(final InetSocketAddress destination, final int length, final int sport, final long queued)
    {
        final SendRing ring = sendRing();
        final long position = ring.claim(RdsHeader.LENGTH + length);
        final Message message;
        if (position >= 0)
        {
            message = ring.message(position);
            message.payloadLength = length;
        }
        else
        {
            message = pool.acquire(length);
            counters.sendRingSpill.increment();
        }
        message.socket = this;
        message.destination = destination;
        message.sport = sport;
        message.dport = destination.getPort();
        if (queued + length >= options.sendBufferBytes() / 2)
        {
            message.flags = RdsHeader.FLAG_ACK_REQUIRED;
        }
        return message;
    }

    /** @return the socket's send ring, mapped at its first send. */
    private SendRing sendRing()
    {
        SendRing ring = sendRing;
        if (ring == null)
        {
            stateLock.lock();
            try
            {
                ring = sendRing;
                if (ring == null)
                {
                    ring = new SendRing(Path.of(stack.config().infoDirectory()), stack.config().sendRingBytes());
                    sendRing = ring;
                }
            }
            finally
            {
                stateLock.unlock();
            }
        }
        return ring;
    }

    /** @return the send ring if mapped, else null (tests). */
    SendRing mappedSendRing()
    {
        return sendRing;
    }

    /** Agent: moves the send ring's head over records that application threads freed (aborted claims), if any. */
    void reclaimAbortedClaims()
    {
        final SendRing ring = sendRing;
        if (ring != null)
        {
            ring.reclaimFreedByWriters();
        }
    }

    /** Agent, once the socket is unbound: the send ring is unmapped when its last record is freed. */
    void closeSendRing()
    {
        final SendRing ring = sendRing;
        if (ring != null)
        {
            ring.close();
        }
    }

    /** Agent: it took {@code count} messages from {@link #outbound}; their slots are free. */
    void outboundTaken(final int count)
    {
        outboundSlots.addAndGet(-count);
    }

    // ---------------------------------------------------------------- claim

    @Override
    public int tryClaim(final int length, final InetSocketAddress destination, final RdsClaim claim) throws IOException
    {
        Objects.requireNonNull(claim, "claim");
        if (claim.isClaimed())
        {
            throw new IllegalStateException("the claim already holds a message: commit or abort it first");
        }
        final int checked = checkSend(destination, length);
        if (checked < 0)
        {
            return checked;
        }
        final long queued = reserve(destination, length);
        if (queued < 0)
        {
            if (queued == RdsResult.ENOBUFS)
            {
                congestion.onRefusalReturned(destination);
            }
            return (int)queued;
        }
        final Message message = newMessage(destination, length, localAddress.getPort(), queued);
        claim.grant(claimOwner, message, message.claimedPayload(), RdsHeader.LENGTH, length);
        return length;
    }

    /** Completes this socket's claims. */
    private final class ClaimOwner implements RdsClaim.Owner
    {
        @Override
        public void commit(final Object token)
        {
            if (!open)
            {
                // the agent has forgotten the socket and will not take its queue again: drop it as close drops
                // what was queued
                abort(token);
                return;
            }
            outbound.offer((Message)token); // never full: reserve took a slot
            stack.wakeAgent();
        }

        @Override
        public void abort(final Object token)
        {
            final Message message = (Message)token;
            final int length = message.payloadLength;
            final SendRing ring = message.ring;
            pool.release(message);
            if (ring != null)
            {
                ring.freedByWriter();
            }
            outboundSlots.decrementAndGet();
            sendQueued.addAndGet(-length);
            // the room is free now, not at an ack: a blocked send or drain, or a select, has nobody else to wake it
            sendWaiters.wakeAll();
            signalWatcherOutsideCycle();
        }
    }

    /** Agent: an acked or cancelled message's bytes leave the send buffer; senders are woken by {@link #wakeSenders}. */
    void releaseSendBytes(final int length)
    {
        sendQueued.addAndGet(-length);
    }

    /** Agent: something a blocked sender waits for may have changed. */
    @Override
    public void wakeSenders()
    {
        sendWaiters.wakeAll();
        signalWatcher();
    }

    /** Agent, at the end of a duty cycle: something was delivered; wakes blocked receivers and the watcher. */
    void wakeReceivers()
    {
        received.waiters.wakeAll();
        signalWatcher();
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
        final InetSocketAddress sender = received.takeInto(dst, null);
        return sender != null || !blocking ? sender : receiveBlocking(dst, null);
    }

    @Override
    public int receive(final ByteBuffer dst, final RdsReceiveInfo info) throws IOException
    {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(info, "info");
        ensureReceivable();
        if (received.takeInto(dst, info) != null || (blocking && receiveBlocking(dst, info) != null))
        {
            return info.length();
        }
        info.clear();
        if (!blocking)
        {
            return RdsResult.EAGAIN;
        }
        // a blocking wait ends without a message only at its timeout or on an interrupt, whose status it leaves set
        return Thread.currentThread().isInterrupted() ? RdsResult.EINTR : RdsResult.ETIMEDOUT;
    }

    /** @param info filled as the message is taken; null: not wanted. */
    private InetSocketAddress receiveBlocking(final ByteBuffer dst, final RdsReceiveInfo info) throws IOException
    {
        final Thread me = Thread.currentThread();
        final long timeoutNs = options.receiveTimeoutNs();
        final long deadlineNs = System.nanoTime() + timeoutNs;
        received.waiters.add(me);
        stack.calls().beginWait();
        try
        {
            while (true)
            {
                ensureOpen();
                final InetSocketAddress sender = received.takeInto(dst, info);
                if (sender != null || stack.calls().await(timeoutNs, deadlineNs) < 0)
                {
                    return sender;
                }
            }
        }
        finally
        {
            received.waiters.remove(me);
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
        return received.poll(handler, limit);
    }

    // ---------------------------------------------------------------- notifications

    @Override
    public RdsSocket setNotificationListener(final RdsNotificationListener listener)
    {
        received.listener(listener);
        return this;
    }

    /** Agent: queues an event if someone listens. */
    @Override
    public void notifyListener(final Notification notification)
    {
        received.notifyListener(notification);
        signalWatcher();
    }

    // ---------------------------------------------------------------- readiness and push delivery

    /**
     * @return {@link RdsSelector#OP_ERROR} alone if the socket is closed; else
     *         {@link RdsSelector#OP_READ} if a message or notification is queued, or-ed with
     *         {@link RdsSelector#OP_WRITE} if the send buffer has room (the test {@link #reserve} makes).
     *         Any thread.
     */
    @Override
    public int readyOps()
    {
        if (!open)
        {
            return RdsSelector.OP_ERROR;
        }
        int ops = received.hasQueued() ? RdsSelector.OP_READ : 0;
        if (sendQueued.get() < options.sendBufferBytes())
        {
            ops |= RdsSelector.OP_WRITE;
        }
        return ops;
    }

    /**
     * Sets the socket's watcher, if it has none.
     *
     * @return the watcher it has: {@code watching} if set now, another one, or null if the socket is closed.
     */
    @Override
    public SocketWatcher watch(final SocketWatcher watching)
    {
        stateLock.lock();
        try
        {
            if (!open)
            {
                return null;
            }
            if (watcher == null)
            {
                watcher = watching;
            }
            return watcher;
        }
        finally
        {
            stateLock.unlock();
        }
    }

    /** Removes the watcher if it is {@code watching}. */
    @Override
    public void unwatch(final SocketWatcher watching)
    {
        stateLock.lock();
        try
        {
            if (watcher == watching)
            {
                watcher = null;
            }
        }
        finally
        {
            stateLock.unlock();
        }
    }

    private void signalWatcher()
    {
        final SocketWatcher current = watcher;
        if (current != null)
        {
            current.signal();
        }
    }

    /**
     * An application thread changed the socket's readiness: signals the watcher and wakes the thread leading
     * the duty cycle, which may be a select idling in the transport's wait, where an unpark does not reach it.
     */
    private void signalWatcherOutsideCycle()
    {
        final SocketWatcher current = watcher;
        if (current != null)
        {
            current.signal();
            stack.wakeAgent();
        }
    }

    @Override
    public RdsSocket startDelivery(final Executor executor, final RdsMessageHandler handler) throws IOException
    {
        Objects.requireNonNull(executor, "executor");
        Objects.requireNonNull(handler, "handler");
        ensureReceivable();
        final PushDelivery delivery = new PushDelivery(this, executor, handler);
        final SocketWatcher current = watch(delivery);
        if (current == null)
        {
            throw new ClosedChannelException();
        }
        if (current != delivery)
        {
            throw new IllegalStateException(current instanceof PushDelivery ? "delivery was started already" :
                "the socket is registered with a selector");
        }
        delivery.signal(); // what is queued already
        return this;
    }

    CoreStack stack()
    {
        return stack;
    }

    @Override
    public boolean hasQueued()
    {
        return received.hasQueued();
    }

    @Override
    public Waiting waiting()
    {
        return stack.calls();
    }

    // ---------------------------------------------------------------- options and state

    @Override
    public <T> RdsSocket setOption(final SocketOption<T> option, final T value) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(option, "option");
        Objects.requireNonNull(value, "value");
        if (option == RdsOptions.RDS_TRANSPORT)
        {
            stateLock.lock();
            try
            {
                options.transportType((TransportType)value, localAddress != null);
            }
            finally
            {
                stateLock.unlock();
            }
        }
        else
        {
            options.set(option, value);
            if (option == RdsOptions.SO_SNDBUF)
            {
                signalWatcherOutsideCycle(); // a larger buffer may have room now
            }
        }
        return this;
    }

    @Override
    public <T> T getOption(final SocketOption<T> option) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(option, "option");
        return options.get(option);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions()
    {
        return SocketOptions.SUPPORTED;
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
        return received.queuedBytes();
    }

    @Override
    public int receiveBufferBytes()
    {
        return options.receiveBufferBytes();
    }

    /** @return the socket's SO_SNDBUF in bytes; any thread. */
    int sendBufferBytes()
    {
        return options.sendBufferBytes();
    }

    @Override
    public LocalEndpoint endpoint()
    {
        return endpoint;
    }

    @Override
    public SocketAgentState agentState()
    {
        return agentState;
    }

    @Override
    public Congestion.Sender congestion()
    {
        return congestion;
    }

    Transport transport()
    {
        return transport;
    }

    @Override
    public boolean isOpen()
    {
        return open;
    }

    @Override
    public boolean awaitDrained(final Duration timeout) throws IOException
    {
        ensureOpen();
        if (sendQueued.get() == 0)
        {
            return true;
        }
        if (timeout.isNegative() || timeout.isZero())
        {
            return false;
        }
        return awaitDrained(saturatedNanos(timeout));
    }

    /**
     * Waits as a blocking send waits for room ({@link AgentCalls#awaitRoom}): woken with the send waiters, which
     * the agent wakes as acks and cancels free bytes.
     */
    private boolean awaitDrained(final long timeoutNs) throws ClosedChannelException
    {
        final Thread me = Thread.currentThread();
        final long deadlineNs = System.nanoTime() + timeoutNs;
        sendWaiters.add(me);
        stack.calls().beginRoomWait();
        try
        {
            while (true)
            {
                ensureOpen();
                if (sendQueued.get() == 0)
                {
                    return true;
                }
                if (stack.calls().awaitRoom(timeoutNs, deadlineNs) < 0)
                {
                    return sendQueued.get() == 0;
                }
            }
        }
        finally
        {
            sendWaiters.remove(me);
            stack.calls().endRoomWait();
        }
    }

    private static long saturatedNanos(final Duration timeout)
    {
        try
        {
            return timeout.toNanos();
        }
        catch (final ArithmeticException ex)
        {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public void close()
    {
        final int lingerSeconds = options.lingerSeconds();
        if (lingerSeconds > 0 && open)
        {
            try
            {
                awaitDrained(TimeUnit.SECONDS.toNanos(lingerSeconds));
            }
            catch (final ClosedChannelException ex)
            {
                return; // another thread closed it meanwhile
            }
        }
        closeNow();
    }

    /** Closes the socket without lingering: what {@link CoreStack#close()} does to the sockets left open. */
    void closeNow()
    {
        stateLock.lock();
        try
        {
            if (!open)
            {
                return;
            }
            open = false;
        }
        finally
        {
            stateLock.unlock();
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
        received.waiters.wakeAll();
        signalWatcherOutsideCycle();
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
