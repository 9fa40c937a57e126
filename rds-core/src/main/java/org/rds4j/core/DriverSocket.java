package org.rds4j.core;

import org.agrona.DirectBuffer;
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
import org.rds4j.core.wire.RdsHeader;

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
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A socket of a driver's stack, used from a client process ({@link DriverStack}). The driver holds the socket
 * itself (its port, its messages until acked); this side answers what a call must answer at once, as an embedded
 * socket does:
 * <ul>
 *   <li>a send is checked here ({@link RdsSocketImpl#checkSend}), tested against the destination's congestion bit
 *       in the driver's board, and admitted against this side's send-buffer count, which the driver's
 *       {@code RELEASED} frames lower as the stack frees bytes; so {@code EAGAIN}, {@code ENOBUFS} and the rest are
 *       returned by the call, and the driver queues every message it is sent;</li>
 *   <li>received messages and events are queued here ({@link ReceiveQueue}: its ring, spill and waiters), in the
 *       order the driver delivered them. The driver counts them in its socket's receive buffer until this side
 *       reports them taken ({@code CONSUMED}), so its port is marked congested, and released, as an embedded
 *       socket's. The reports are batched: one per eighth of {@code SO_RCVBUF} taken, or sooner when one may
 *       release the port (the driver's count is then at least half the buffer).</li>
 * </ul>
 * Bind, options the driver needs ({@code SO_SNDBUF}, {@code SO_RCVBUF}, {@code RDS_CONG_MONITOR},
 * {@code RDS_TRANSPORT} at bind) and {@code cancelSentTo} are calls to the driver, answered with the driver's
 * socket's own result. Selectors and push delivery watch it as they watch an embedded socket: the reader signals
 * its watcher where it wakes its blocked calls.
 */
final class DriverSocket implements WatchableSocket, Congestion.Member
{
    // Set at construction; any thread.
    private final DriverStack stack;
    private final int id;
    private final SocketOptions options;
    private final Congestion.Sender congestion;
    /** Never marked: the driver's socket holds the port and its mark. */
    private final SocketAgentState agentState = new SocketAgentState();
    final ReceiveQueue received;

    // Application threads add, the reader (RELEASED) subtracts.
    private final AtomicLong sendQueued = new AtomicLong();
    private final Waiters sendWaiters = new Waiters();
    private final RdsClaim.Owner claimOwner = new ClaimOwner();
    private final ReentrantLock stateLock = new ReentrantLock();
    private volatile InetSocketAddress localAddress;
    private volatile boolean open = true;
    private volatile boolean blocking = true;
    /** A selector's key or push delivery; set under {@link #stateLock}, as close. */
    private volatile SocketWatcher watcher;

    /** Bytes the application took that the driver has not been told of. */
    private final AtomicLong unreported = new AtomicLong();

    // The reader only.
    private long released;

    DriverSocket(final DriverStack stack, final int id)
    {
        this.stack = stack;
        this.id = id;
        final StackCounters counters = stack.stackCounters();
        this.congestion = new Congestion.Sender(address -> stack.board().find(address), counters.sendCongBlocked);
        this.options = new SocketOptions(stack.configuration(), congestion);
        this.received = new ReceiveQueue(stack.pool(), this, () -> { },
            Path.of(stack.configuration().infoDirectory()), stack.configuration().receiveRingBytes(), this::taken);
    }

    int id()
    {
        return id;
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
            ensureOpen();
            if (local == null)
            {
                throw new RdsException(RdsResult.EINVAL, "cannot bind null: RDS needs a local unicast address");
            }
            if (local.isUnresolved())
            {
                throw new RdsException(RdsResult.EINVAL, "unresolved address " + local);
            }
            if (localAddress != null)
            {
                throw new RdsException(RdsResult.EINVAL, "socket already bound to " + localAddress);
            }
            final DriverStack.Call call = stack.newCall();
            stack.writeSocketFrame(DriverProtocol.BIND, id, call.id, options.transportType().ordinal(), local);
            stack.await(call);
            if (call.result < 0)
            {
                throw new RdsException(call.result, call.text);
            }
            localAddress = new InetSocketAddress(local.getAddress(), (int)call.value);
        }
        finally
        {
            stateLock.unlock();
        }
        return this;
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

    @Override
    public int send(final ByteBuffer src, final InetSocketAddress destination) throws IOException
    {
        Objects.requireNonNull(src, "src");
        ensureOpen();
        Objects.requireNonNull(destination, "destination");
        final int length = src.remaining();
        final int checked = RdsSocketImpl.checkSend(localAddress, destination, length, stack.allowedPeers(),
            options.sendBufferBytes());
        if (checked < 0)
        {
            return checked;
        }
        stack.ensureAttached();
        final int result = reserve(destination, length);
        if (result >= 0)
        {
            stack.writeSend(id, destination, src);
            return length;
        }
        if (!blocking || result == RdsResult.EMSGSIZE)
        {
            if (result == RdsResult.ENOBUFS && congestion.monitor())
            {
                congestion.onRefusalReturned(destination);
                stack.writeSocketFrame(DriverProtocol.CONG_WAIT, id, 1, 0, destination);
            }
            return result;
        }
        return sendBlocking(src, destination, length);
    }

    private int sendBlocking(final ByteBuffer src, final InetSocketAddress destination, final int length)
        throws IOException
    {
        final Thread me = Thread.currentThread();
        final long timeoutNs = options.sendTimeoutNs();
        final long deadlineNs = System.nanoTime() + timeoutNs;
        sendWaiters.add(me);
        try
        {
            while (true)
            {
                ensureOpen();
                stack.ensureAttached();
                // tested again once registered: a release between the first test and the registration is not missed
                final int result = reserve(destination, length);
                if (result >= 0)
                {
                    stack.writeSend(id, destination, src);
                    return length;
                }
                if (result == RdsResult.ENOBUFS)
                {
                    // the driver answers at once if the port is free by now, else at its next change
                    stack.writeSocketFrame(DriverProtocol.CONG_WAIT, id, 0, 0, destination);
                }
                final int waited = stack.await(timeoutNs, deadlineNs);
                if (waited < 0)
                {
                    return waited;
                }
            }
        }
        finally
        {
            sendWaiters.remove(me);
        }
    }

    /** Takes the message's room in the send buffer, as an embedded socket's send does. */
    private int reserve(final InetSocketAddress destination, final int length)
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
                stack.stackCounters().sendQueueFull.increment();
                return RdsResult.EAGAIN;
            }
        }
        while (!sendQueued.compareAndSet(queued, queued + length));
        return 0;
    }

    /** The reader: the driver's socket has freed {@code total} bytes since it opened. */
    void onReleased(final long total)
    {
        final long freed = total - released;
        released = total;
        if (freed != 0)
        {
            sendQueued.addAndGet(-freed);
        }
        sendWaiters.wakeAll(); // also a congested port freed: the senders test again
        signalWatcher();
    }

    /**
     * Grants a pooled buffer of this process, sent on commit: the driver's send ring is in another process, so the
     * claim saves the caller's copy, not the copy to the driver.
     */
    @Override
    public int tryClaim(final int length, final InetSocketAddress destination, final RdsClaim claim) throws IOException
    {
        Objects.requireNonNull(claim, "claim");
        if (claim.isClaimed())
        {
            throw new IllegalStateException("the claim already holds a message: commit or abort it first");
        }
        ensureOpen();
        Objects.requireNonNull(destination, "destination");
        final int checked = RdsSocketImpl.checkSend(localAddress, destination, length, stack.allowedPeers(),
            options.sendBufferBytes());
        if (checked < 0)
        {
            return checked;
        }
        stack.ensureAttached();
        final int result = reserve(destination, length);
        if (result < 0)
        {
            if (result == RdsResult.ENOBUFS && congestion.monitor())
            {
                congestion.onRefusalReturned(destination);
                stack.writeSocketFrame(DriverProtocol.CONG_WAIT, id, 1, 0, destination);
            }
            return result;
        }
        final Message message = stack.pool().acquire(length);
        message.destination = destination;
        claim.grant(claimOwner, message, message.claimedPayload(), RdsHeader.LENGTH, length);
        return length;
    }

    /** Completes this socket's claims. */
    private final class ClaimOwner implements RdsClaim.Owner
    {
        @Override
        public void commit(final Object token)
        {
            final Message message = (Message)token;
            try
            {
                if (open)
                {
                    stack.writeSend(id, message.destination, message.claimedPayload());
                }
                else
                {
                    sendQueued.addAndGet(-message.payloadLength); // closed meanwhile: dropped, as close drops
                }
            }
            catch (final RdsException ex)
            {
                // the driver is gone, and what its socket held with it
            }
            finally
            {
                stack.pool().release(message);
            }
        }

        @Override
        public void abort(final Object token)
        {
            final Message message = (Message)token;
            sendQueued.addAndGet(-message.payloadLength);
            stack.pool().release(message);
            sendWaiters.wakeAll();
            signalWatcher();
        }
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
        final DriverStack.Call call = stack.newCall();
        stack.writeSocketFrame(DriverProtocol.CANCEL, id, call.id, 0, destination);
        stack.await(call);
        return call.result;
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

    private boolean awaitDrained(final long timeoutNs) throws IOException
    {
        final Thread me = Thread.currentThread();
        final long deadlineNs = System.nanoTime() + timeoutNs;
        sendWaiters.add(me);
        try
        {
            while (sendQueued.get() != 0)
            {
                ensureOpen();
                stack.ensureAttached();
                if (stack.await(timeoutNs, deadlineNs) < 0)
                {
                    return sendQueued.get() == 0;
                }
            }
            return true;
        }
        finally
        {
            sendWaiters.remove(me);
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

    // ---------------------------------------------------------------- receive

    /**
     * The reader: queues a delivered message.
     *
     * @return true if its receivers are to be woken.
     */
    boolean deliver(final InetSocketAddress sender, final DirectBuffer buffer, final int offset, final int length)
    {
        if (!open)
        {
            return false;
        }
        received.offer(sender, buffer, offset, length, stack.stackCounters());
        return true;
    }

    /**
     * The taking thread: tells the driver what the application took, in batches. The driver counts
     * {@code queued + unreported}; a report is due once a batch is complete, or when the driver's count has
     * reached half of {@code SO_RCVBUF} while what is queued here is below it: the port may be released.
     */
    private void taken(final int length)
    {
        final long owed = unreported.addAndGet(length);
        final long half = options.receiveBufferBytes() / 2;
        final long queued = received.queuedBytes();
        if (owed >= options.receiveBufferBytes() / 8 || (queued < half && queued + owed >= half))
        {
            final long bytes = unreported.getAndSet(0);
            if (bytes > 0)
            {
                try
                {
                    stack.writeConsumed(id, bytes);
                }
                catch (final RdsException ex)
                {
                    // the driver is gone: nothing to report to
                }
            }
        }
    }

    /** The reader, at the end of a read: wakes the blocked receivers. */
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
        return Thread.currentThread().isInterrupted() ? RdsResult.EINTR : RdsResult.ETIMEDOUT;
    }

    private InetSocketAddress receiveBlocking(final ByteBuffer dst, final RdsReceiveInfo info) throws IOException
    {
        final Thread me = Thread.currentThread();
        final long timeoutNs = options.receiveTimeoutNs();
        final long deadlineNs = System.nanoTime() + timeoutNs;
        received.waiters.add(me);
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
                stack.ensureAttached();
                if (stack.await(timeoutNs, deadlineNs) < 0)
                {
                    return null;
                }
            }
        }
        finally
        {
            received.waiters.remove(me);
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
            stack.ensureAttached();
        }
        return polled;
    }

    @Override
    public RdsSocket setNotificationListener(final RdsNotificationListener listener)
    {
        received.listener(listener);
        return this;
    }

    /** The reader: a NOTIFY frame. */
    @Override
    public void notifyListener(final Notification notification)
    {
        received.notifyListener(notification);
        signalWatcher();
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

    // ---------------------------------------------------------------- readiness

    @Override
    public int readyOps()
    {
        if (!open || !stack.isAttached())
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

    @Override
    public Waiting waiting()
    {
        return stack;
    }

    private void signalWatcher()
    {
        final SocketWatcher current = watcher;
        if (current != null)
        {
            current.signal();
        }
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
            return this;
        }
        options.set(option, value); // checks the value, as embedded
        final int wire = option == RdsOptions.SO_SNDBUF ? DriverProtocol.OPTION_SNDBUF :
            option == RdsOptions.SO_RCVBUF ? DriverProtocol.OPTION_RCVBUF :
            option == RdsOptions.RDS_CONG_MONITOR ? DriverProtocol.OPTION_CONG_MONITOR : 0;
        if (wire != 0)
        {
            final long number = value instanceof Boolean on ? (on ? 1 : 0) : ((Integer)value).longValue();
            final DriverStack.Call call = stack.newCall();
            stack.writeOption(id, call.id, wire, number);
            stack.await(call);
            if (call.result < 0)
            {
                throw new RdsException(call.result, call.text);
            }
            if (option == RdsOptions.SO_SNDBUF)
            {
                sendWaiters.wakeAll(); // a larger buffer may have room now
                signalWatcher();
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

    int sendBufferBytes()
    {
        return options.sendBufferBytes();
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
        if (lingerSeconds > 0 && open && stack.isAttached())
        {
            try
            {
                awaitDrained(TimeUnit.SECONDS.toNanos(lingerSeconds));
            }
            catch (final IOException ex)
            {
                // closed meanwhile, or the driver is gone: close now
            }
        }
        closeNow();
    }

    /** Closes without lingering; the driver's socket closes, freeing its port, and drops what it had queued. */
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
        try
        {
            stack.writeSocketFrame(DriverProtocol.CLOSE, id, 0, 0, null);
        }
        catch (final RdsException ex)
        {
            // the driver is gone, and its sockets with it
        }
        stack.forget(this);
        sendWaiters.wakeAll();
        received.waiters.wakeAll();
        signalWatcher();
    }

    /** The reader, once the socket is closed: frees the receive queue, whose one writer it is. */
    void released()
    {
        received.releaseAll();
    }

    /** The reader: the driver is gone; the waiting calls wake and fail. */
    void onDriverLost()
    {
        sendWaiters.wakeAll();
        received.waiters.wakeAll();
        signalWatcher();
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

    // ---------------------------------------------------------------- Congestion.Member: the receive queue's view

    @Override
    public LocalEndpoint endpoint()
    {
        return null; // the driver's socket holds the port and its mark
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
    public void wakeSenders()
    {
        sendWaiters.wakeAll();
    }

    @Override
    public String toString()
    {
        return "RdsSocket[" + (localAddress == null ? "unbound" : localAddress) + (open ? "" : " closed") +
            " via driver]";
    }
}
