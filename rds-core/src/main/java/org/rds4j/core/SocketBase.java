package org.rds4j.core;

import org.agrona.concurrent.status.AtomicCounter;
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
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.core.wire.CongestionMap;

import java.io.IOException;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * What every socket of the API does the same way, whether its stack runs in this process ({@link RdsSocketImpl})
 * or in a driver ({@link DriverSocket}): its options, the send-buffer count and its waiters, the receive queue and
 * how calls take from it and wait on it, readiness for selectors and push delivery, lingering close. How a call
 * waits is the stack's ({@link #waiting()}): an embedded stack's waiting thread drives it, a client of a driver
 * parks until its reader wakes it.
 */
abstract class SocketBase implements WatchableSocket, Congestion.Member
{
    // Set at construction; any thread.
    /** The stack's allow-list: a send elsewhere is EACCES. */
    final PeerAllowList allowedPeers;
    final SocketOptions options;
    /** The send side of congestion: the destination check, and the refusals {@code RDS_CONG_MONITOR} reports. */
    final Congestion.Sender congestion;
    /** The stack's side of this socket: fields of the thread running the duty cycle, apart. */
    private final SocketAgentState agentState = new SocketAgentState();

    // Application threads add, the stack subtracts.
    final AtomicLong sendQueued = new AtomicLong();
    /** Threads blocked in send: they register, the stack wakes them. */
    final Waiters sendWaiters = new Waiters();
    /** Set once by bind, under {@link #stateLock}. */
    volatile InetSocketAddress localAddress;
    volatile boolean open = true;

    // The stack writes, application threads take.
    /** Received messages and events, and the threads waiting for them. */
    final ReceiveQueue received;
    /** A selector's key or push delivery, signalled when the waiters are woken; set under {@link #stateLock}, as close. */
    private volatile SocketWatcher watcher;

    // Application threads only.
    volatile boolean blocking = true;
    /**
     * Bind, the transport option and close: a lock, not a monitor, so that a virtual thread in them never holds
     * its carrier on JDK 21-23 (none of them waits while holding it).
     */
    final ReentrantLock stateLock = new ReentrantLock();

    /**
     * @param config       the stack's configuration: the socket's defaults, where its receive ring is mapped.
     * @param allowedPeers the destinations a send may go to.
     * @param maps         the congestion map of an address, or null if none is known.
     * @param refusals     counts sends refused for congestion.
     * @param pool         where received messages that wait outside the ring come from.
     * @param wakeAgent    wakes the stack, so that it releases the socket's port at once when taking drains it.
     * @param reportTaken  whether {@link #taken} is told of each message the application takes.
     */
    SocketBase(
        final RdsStackConfig config, final PeerAllowList allowedPeers, final Function<InetAddress, CongestionMap> maps,
        final AtomicCounter refusals, final MessagePool pool, final Runnable wakeAgent, final boolean reportTaken)
    {
        this.allowedPeers = allowedPeers;
        this.congestion = new Congestion.Sender(maps, refusals);
        this.options = new SocketOptions(config, congestion);
        this.received = new ReceiveQueue(pool, this, wakeAgent, Path.of(config.infoDirectory()),
            config.receiveRingBytes(), reportTaken ? this::taken : null);
    }

    /**
     * The taking thread, if the constructor asked: the application took a message of {@code length} bytes.
     *
     * @param length the message's length.
     */
    void taken(final int length)
    {
    }

    /** @throws IOException if the socket's stack cannot serve calls any more (a driver that is gone). */
    abstract void ensureStack() throws IOException;

    /** @return whether the socket's stack can serve calls. */
    abstract boolean isStackUp();

    /** Closes the socket without lingering. */
    abstract void closeNow();

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

    // ---------------------------------------------------------------- send

    /**
     * The checks of a send that need no room: the socket open and bound, the destination valid and allowed, the
     * length within 1 MiB and the send buffer.
     *
     * @return 0, or {@link RdsResult#ENOTCONN}, {@link RdsResult#EINVAL}, {@link RdsResult#EACCES} or
     *         {@link RdsResult#EMSGSIZE}.
     */
    final int checkSend(final InetSocketAddress destination, final int length) throws IOException
    {
        ensureOpen();
        Objects.requireNonNull(destination, "destination");
        return RdsSocketImpl.checkSend(localAddress, destination, length, allowedPeers, options.sendBufferBytes());
    }

    /**
     * The checks of a claim before its room is taken: the claim free, then those of a send, then the stack.
     *
     * @return 0, or the send's result.
     */
    final int checkClaim(final RdsClaim claim, final InetSocketAddress destination, final int length)
        throws IOException
    {
        Objects.requireNonNull(claim, "claim");
        if (claim.isClaimed())
        {
            throw new IllegalStateException("the claim already holds a message: commit or abort it first");
        }
        final int checked = checkSend(destination, length);
        if (checked == 0)
        {
            ensureStack();
        }
        return checked;
    }

    /**
     * A non-blocking send or a claim returns {@link RdsResult#ENOBUFS} to its caller: with {@code RDS_CONG_MONITOR}
     * on, the destination is remembered, to be notified once its port is free (at once, if it freed meanwhile).
     */
    void refusalReturned(final InetSocketAddress destination) throws IOException
    {
        if (congestion.onRefusalReturned(destination))
        {
            // freed between the refusal and now: the agent's update found nothing to notify
            received.notifyListener(new Notification(Notification.Kind.UNCONGESTED, destination));
            signalWatcherOutsideCycle();
        }
    }

    /**
     * Takes a message's room in the send buffer: refused if its destination is congested, or if the bytes queued
     * already reach {@code SO_SNDBUF}.
     *
     * @return the bytes queued before this message, or {@link RdsResult#ENOBUFS}, {@link RdsResult#EMSGSIZE} or
     *         {@link RdsResult#EAGAIN}.
     */
    final long reserveRoom(final InetSocketAddress destination, final int length, final AtomicCounter full)
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
                full.increment();
                return RdsResult.EAGAIN;
            }
        }
        while (!sendQueued.compareAndSet(queued, queued + length));
        return queued;
    }

    /** The stack: something a blocked sender waits for may have changed. */
    @Override
    public void wakeSenders()
    {
        sendWaiters.wakeAll();
        signalWatcher();
    }

    @Override
    public boolean awaitDrained(final Duration timeout) throws IOException
    {
        if (drained())
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
     * Waits as a blocking send waits for room ({@link Waiting#awaitRoom}): woken with the send waiters, which the
     * stack wakes as acks and cancels free bytes.
     */
    private boolean awaitDrained(final long timeoutNs) throws IOException
    {
        final Thread me = Thread.currentThread();
        final long deadlineNs = System.nanoTime() + timeoutNs;
        final Waiting waiting = waiting();
        sendWaiters.add(me);
        waiting.beginRoomWait();
        try
        {
            while (true)
            {
                if (drained())
                {
                    return true;
                }
                ensureStack();
                if (waiting.awaitRoom(timeoutNs, deadlineNs) < 0)
                {
                    return drained();
                }
            }
        }
        finally
        {
            sendWaiters.remove(me);
            waiting.endRoomWait();
        }
    }

    /**
     * Whether no byte is queued, read before the socket's state: a close marks the socket closed before it drops the
     * queued messages, so a count emptied by a close is never reported as drained.
     */
    private boolean drained() throws ClosedChannelException
    {
        final boolean drained = sendQueued.get() == 0;
        ensureOpen();
        return drained;
    }

    static long saturatedNanos(final Duration timeout)
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

    // ---------------------------------------------------------------- receive

    /** The stack, once per duty cycle or read: something was delivered; wakes blocked receivers and the watcher. */
    void wakeReceivers()
    {
        received.waiters.wakeAll();
        signalWatcher();
    }

    @Override
    public InetSocketAddress receive(final ByteBuffer dst) throws IOException
    {
        Objects.requireNonNull(dst, "dst");
        ensureReceivable();
        final InetSocketAddress sender = received.takeInto(dst, null);
        if (sender != null)
        {
            return sender;
        }
        if (blocking)
        {
            return receiveBlocking(dst, null);
        }
        waiting().foundNothing();
        return null;
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
            waiting().foundNothing();
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
        final Waiting waiting = waiting();
        received.waiters.add(me);
        waiting.beginWait();
        try
        {
            while (true)
            {
                ensureOpen();
                final InetSocketAddress sender = received.takeInto(dst, info);
                if (sender != null)
                {
                    return sender;
                }
                ensureStack();
                if (waiting.await(timeoutNs, deadlineNs) < 0)
                {
                    return null;
                }
            }
        }
        finally
        {
            received.waiters.remove(me);
            waiting.endWait();
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
        final int polled = received.poll(handler, limit);
        if (polled == 0)
        {
            ensureStack();
            waiting().foundNothing();
        }
        return polled;
    }

    // ---------------------------------------------------------------- notifications

    @Override
    public RdsSocket setNotificationListener(final RdsNotificationListener listener)
    {
        received.listener(listener);
        return this;
    }

    /** The stack: queues an event if someone listens. */
    @Override
    public void notifyListener(final Notification notification)
    {
        received.notifyListener(notification);
        signalWatcher();
    }

    // ---------------------------------------------------------------- readiness and push delivery

    @Override
    public int readyOps()
    {
        if (!open || !isStackUp())
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

    @Override
    public boolean hasQueued()
    {
        return received.hasQueued();
    }

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

    final SocketWatcher watcher()
    {
        return watcher;
    }

    final void signalWatcher()
    {
        final SocketWatcher current = watcher;
        if (current != null)
        {
            current.signal();
        }
    }

    /**
     * An application thread changed the socket's readiness: signals the watcher and wakes whoever else a waiting
     * select may need ({@link Waiting#wakeWaiting}: an embedded stack's leader idling in the transport's wait).
     */
    final void signalWatcherOutsideCycle()
    {
        final SocketWatcher current = watcher;
        if (current != null)
        {
            current.signal();
            waiting().wakeWaiting();
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

    // ---------------------------------------------------------------- options and state

    @Override
    public final <T> RdsSocket setOption(final SocketOption<T> option, final T value) throws IOException
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
            return this;
        }
        options.set(option, value);
        optionSet(option, value);
        if (option == RdsOptions.SO_SNDBUF)
        {
            sendWaiters.wakeAll(); // a larger buffer may have room now
            signalWatcherOutsideCycle();
        }
        return this;
    }

    /** An option other than the transport was set and checked: what the stack must be told of it. */
    abstract <T> void optionSet(SocketOption<T> option, T value) throws IOException;

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
    public SocketAgentState agentState()
    {
        return agentState;
    }

    @Override
    public Congestion.Sender congestion()
    {
        return congestion;
    }

    @Override
    public boolean isOpen()
    {
        return open;
    }

    @Override
    public void close()
    {
        final int lingerSeconds = options.lingerSeconds();
        if (lingerSeconds > 0 && open && isStackUp())
        {
            try
            {
                awaitDrained(TimeUnit.SECONDS.toNanos(lingerSeconds));
            }
            catch (final IOException ex)
            {
                // closed meanwhile by another thread, or the stack is gone: close now
            }
        }
        closeNow();
    }

    /** @return true if this call closed the socket, false if it was closed already. Wakes nobody. */
    final boolean markClosed()
    {
        stateLock.lock();
        try
        {
            if (!open)
            {
                return false;
            }
            open = false;
            return true;
        }
        finally
        {
            stateLock.unlock();
        }
    }

    /** After close: every thread blocked in the socket, and its watcher, look again and find it closed. */
    final void wakeAllOnClose()
    {
        sendWaiters.wakeAll();
        received.waiters.wakeAll();
        signalWatcherOutsideCycle();
    }

    final void ensureOpen() throws ClosedChannelException
    {
        if (!open)
        {
            throw new ClosedChannelException();
        }
    }

    final void ensureReceivable() throws IOException
    {
        ensureOpen();
        if (localAddress == null)
        {
            throw new RdsException(RdsResult.ENOTCONN, "socket is not bound");
        }
    }
}
