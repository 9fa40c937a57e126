package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.rds4j.RdsClaim;
import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.core.wire.RdsHeader;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Set;

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
final class DriverSocket extends SocketBase
{
    // Set at construction; any thread.
    private final DriverStack stack;
    private final int id;
    private final RdsClaim.Owner claimOwner = new ClaimOwner();

    // The taking threads, under the receive queue's lock.
    /** Bytes the application took that the driver has not been told of. */
    private long unreported;

    // The reader only.
    private long released;
    /** Listed to have its receivers woken at the end of the reader's batch of frames. */
    boolean wakePending;

    DriverSocket(final DriverStack stack, final int id)
    {
        // the receive queue never marks congestion here (the driver's socket holds the port): nothing to wake
        super(stack.configuration(), stack.allowedPeers(), address -> stack.board().find(address),
            stack.stackCounters().sendCongBlocked, stack.pool(), () -> { }, true);
        this.stack = stack;
        this.id = id;
    }

    @Override
    void ensureStack() throws RdsException
    {
        stack.ensureAttached();
    }

    @Override
    boolean isStackUp()
    {
        return stack.isAttached();
    }

    @Override
    public Waiting waiting()
    {
        return stack;
    }

    /** The options the driver's socket needs: its buffers (congestion, acks) and the congestion monitor. */
    @Override
    <T> void optionSet(final SocketOption<T> option, final T value) throws IOException
    {
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
        }
    }

    int id()
    {
        return id;
    }

    // ---------------------------------------------------------------- bind

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
        stack.ensureAttached();
        final int result = reserve(destination, length);
        if (result >= 0)
        {
            stack.writeSend(id, destination, src);
            return length;
        }
        if (!blocking || result == RdsResult.EMSGSIZE)
        {
            if (result == RdsResult.ENOBUFS)
            {
                refusalReturned(destination);
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
        stack.beginRoomWait();
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
                // parked: the reading thread hands the released bytes over (a send waiting for room reads nothing)
                final int waited = stack.awaitRoom(timeoutNs, deadlineNs);
                if (waited < 0)
                {
                    return waited;
                }
            }
        }
        finally
        {
            stack.endRoomWait();
            sendWaiters.remove(me);
        }
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
        wakeSenders(); // also when nothing was freed: a congested port freed, the senders test again
    }

    /**
     * Grants a pooled buffer of this process, sent on commit: the driver's send ring is in another process, so the
     * claim saves the caller's copy, not the copy to the driver.
     */
    @Override
    public int tryClaim(final int length, final InetSocketAddress destination, final RdsClaim claim) throws IOException
    {
        final int checked = checkClaim(claim, destination, length);
        if (checked < 0)
        {
            return checked;
        }
        final int result = reserve(destination, length);
        if (result < 0)
        {
            if (result == RdsResult.ENOBUFS)
            {
                refusalReturned(destination);
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
     * Asks the driver's socket to notify the destination's release, which its agent sees: the driver remembers the
     * refusal (and notifies at once if the port is free by the time it does). Once per destination until that
     * notification comes ({@link Congestion.Sender#awaitNotification}): the frame runs later than the refusal, and a
     * second one run after the port freed would bring a second notification.
     */
    @Override
    void refusalReturned(final InetSocketAddress destination) throws IOException
    {
        if (congestion.awaitNotification(destination))
        {
            stack.writeSocketFrame(DriverProtocol.CONG_WAIT, id, 1, 0, destination);
        }
    }

    /** Takes the message's room in the send buffer; 0 or a negative result. */
    private int reserve(final InetSocketAddress destination, final int length)
    {
        final long queued = reserveRoom(destination, length, stack.stackCounters().sendQueueFull);
        return queued < 0 ? (int)queued : 0;
    }

    /**
     * The taking thread, under the receive queue's lock: tells the driver what the application took, in batches. The
     * driver counts
     * {@code queued + unreported}; a report is due once a batch is complete, or when the driver's count has
     * reached half of {@code SO_RCVBUF} while what is queued here is below it: the port may be released.
     */
    @Override
    void taken(final int length)
    {
        unreported += length;
        final long owed = unreported;
        final long half = options.receiveBufferBytes() / 2;
        final long queued = received.queuedBytes();
        if (owed >= options.receiveBufferBytes() / 8 || (queued < half && queued + owed >= half))
        {
            unreported = 0;
            if (owed > 0)
            {
                try
                {
                    stack.writeConsumed(id, owed);
                }
                catch (final RdsException ex)
                {
                    // the driver is gone: nothing to report to
                }
            }
        }
    }

    /** Closes without lingering; the driver's socket closes, freeing its port, and drops what it had queued. */
    @Override
    void closeNow()
    {
        if (!markClosed())
        {
            return;
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
        wakeAllOnClose();
        stack.wakeWaiting(); // a receive of this socket may be the thread reading the connection, in its selector
    }

    /** The reader, once the socket is closed: frees the receive queue, whose one writer it is. */
    void released()
    {
        received.releaseAll();
    }

    /** The reader: the driver is gone; the waiting calls wake and fail. */
    void onDriverLost()
    {
        wakeAllOnClose();
    }

    // ---------------------------------------------------------------- Congestion.Member: the receive queue's view

    @Override
    public LocalEndpoint endpoint()
    {
        return null; // the driver's socket holds the port and its mark
    }

    @Override
    public String toString()
    {
        return "RdsSocket[" + (localAddress == null ? "unbound" : localAddress) + (open ? "" : " closed") +
            " via driver]";
    }
}
