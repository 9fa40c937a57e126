package org.rds4j.core;

import org.jctools.queues.MpscArrayQueue;
import org.rds4j.PeerAllowList;
import org.rds4j.RdsClaim;
import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.RdsHeader;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The stack's implementation of {@link RdsSocket}. Application threads write messages into the socket's send ring,
 * which the thread running the duty cycle reads in order ({@link SendRing}); what does not go there (a message the
 * ring has no room for, a committed claim) reaches it through a lock-free queue, in order with the ring. Received
 * messages come back through the receive ring. Send-buffer and receive-buffer bytes are counted with atomics both
 * sides update. Its parts: the options ({@link SocketOptions}), the receive side ({@link ReceiveQueue}), the send side of congestion
 * ({@link Congestion.Sender}) and the agent's own state ({@link SocketAgentState}).
 * <p>
 * A receive that waits registers in {@link Waiters} and calls {@link AgentCalls#await}, which runs the agent's
 * duty cycle on the waiting thread (or parks while another thread runs it), in both threading modes; a send
 * waiting for room calls {@link AgentCalls#awaitRoom}, which does the same in INVOKER mode and parks until the
 * agent frees room in AGENT mode. A blocking send that queues at once may run one duty cycle
 * ({@link AgentCalls#afterBlockingSend}). Non-blocking calls never run a duty cycle. What it shares with a driver's
 * client socket (options, buffers, the receive side, readiness, close) is in {@link SocketBase}; this class adds the
 * stack's side: bind, the send ring and {@code outbound}, claims, cancel.
 */
final class RdsSocketImpl extends SocketBase
{
    // Fields by owning thread, as Aeron's NetworkPublication groups them (the shared ones in SocketBase).

    // Set at construction; any thread.
    private final CoreStack stack;
    private final StackCounters counters;
    private final MessagePool pool;

    // Application threads write, the agent reads.
    /**
     * Messages to send that are not read from the send ring: pooled messages (the ring had no room, or earlier ones
     * of these were still waiting: a send must not pass them), and committed claims, in the order of commits. Each
     * carries the ring's tail when it was handed over ({@link Message#mark}): the stack takes it after the ring's
     * records before that mark, so that it follows every send that returned before it.
     */
    final MpscArrayQueue<Message> outbound;
    /** Places in {@link #outbound} taken by messages spilled or claimed and not yet taken by the agent. */
    private final AtomicInteger outboundSlots = new AtomicInteger();
    /** The connection this socket's blocking sends last appended to ({@link #append}); theirs only. */
    private Connection appendedTo;
    /** Whether this socket's appends wake a thread waiting to lead; its senders', under the hold. */
    private final FollowerWakes followerWakes = new FollowerWakes();
    /** The last destination address whose connection's transport was found to take no appended frames. */
    private InetAddress appendsNever;
    private final RdsClaim.Owner claimOwner = new ClaimOwner();
    /** Where messages are written, mapped at the first send (under {@link #stateLock}); the agent frees records. */
    private volatile SendRing sendRing;
    /** Set once by bind, under {@link #stateLock}; the agent reads them after the bind command. */
    private volatile LocalEndpoint endpoint;
    private volatile Transport transport;

    RdsSocketImpl(final CoreStack stack)
    {
        super(stack.config(), stack.config().allowedPeers(), stack::congestionMap, stack.stackCounters().sendCongBlocked,
            stack.pool(), stack::wakeAgent, false);
        this.stack = stack;
        this.counters = stack.stackCounters();
        this.pool = stack.pool();
        this.outbound = new MpscArrayQueue<>(stack.config().socketQueueCapacity());
    }

    /** An embedded stack serves its sockets until they are closed. */
    @Override
    void ensureStack()
    {
    }

    @Override
    boolean isStackUp()
    {
        return true;
    }

    @Override
    <T> void optionSet(final SocketOption<T> option, final T value)
    {
        // the agent reads the options when it needs them
    }

    // ---------------------------------------------------------------- bind

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
        chosenEndpoint.bindingStarts(port, this);
        stack.send(agent -> agent.bind(this));
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
        if (blocking && length <= AgentCalls.SENDER_STREAM_MAX_PAYLOAD)
        {
            final int appended = append(src, destination, length, local.getPort());
            if (appended >= 0)
            {
                return appended;
            }
        }
        final int result = trySend(src, destination, length, local.getPort());
        if (result >= 0)
        {
            if (blocking)
            {
                afterBlockingSend(result);
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
                refusalReturned(destination);
            }
            return result;
        }
        return sendBlocking(src, destination, length, local.getPort());
    }

    /** {@link #append} returns this when the message must go the usual way (nothing was taken). */
    private static final int NOT_APPENDED = -1;

    /**
     * A blocking send of a small message, once its socket has nothing waiting for the stack: under the duty cycle's
     * lock it takes room in the send buffer and has the connection's transport write the frame once, straight into
     * the memory it is sent from (as the kernel's {@code rds_sendmsg} queues under the path's lock and transmits
     * in the caller). The appended frames go out as one write once {@link AgentCalls#appendBatchBytes} of them
     * wait, at once if the cycle before it took acks that left the message alone in its send buffer, before the
     * sender waits for room, and otherwise by the agent, woken at a batch's first frame, once a cycle of its own
     * finds no frame appended since its last. Before the frame, the cycle it runs takes in what the stack owes this
     * socket (its earlier messages, acks that came).
     *
     * @return the length, or {@link #NOT_APPENDED}.
     */
    private int append(final ByteBuffer src, final InetSocketAddress destination, final int length, final int sport)
    {
        final SendRing ring = sendRing;
        if (!mayAppend(ring, destination) || !outbound.isEmpty()) // messages handed over outside the ring go first
        {
            return NOT_APPENDED;
        }
        final AgentCalls calls = stack.calls();
        if (!calls.tryHold())
        {
            return NOT_APPENDED;
        }
        boolean unflushed = false;
        boolean wakeFollower = true;
        try
        {
            final Connection connection = appendingConnection(destination);
            if (connection == null)
            {
                return NOT_APPENDED;
            }
            if (ring.unreadBytes() > 0)
            {
                calls.cycleHeld(); // this socket's earlier messages go first
                if (ring.unreadBytes() > 0)
                {
                    return NOT_APPENDED;
                }
            }
            final long queued = reserveRoom(destination, length, counters.sendQueueFull);
            if (queued < 0)
            {
                return NOT_APPENDED; // the usual way waits for room, or refuses
            }
            final int sendBuffer = options.sendBufferBytes();
            final int flags = appendFlags(queued, length, sendBuffer);
            int appended = connection.append(this, src, length, sport, destination.getPort(), flags);
            if (appended < 0)
            {
                calls.cycleHeld(); // frames queued before it wait to be sent: they go now if the socket takes them
                appended = connection.append(this, src, length, sport, destination.getPort(), flags);
                if (appended < 0)
                {
                    sendQueued.addAndGet(-length);
                    return NOT_APPENDED;
                }
            }
            // after the append: a full stage, or the cycle before the retry, may have sent the batch it would have joined
            final boolean first = appended == RdsHeader.LENGTH + length;
            counters.sendQueued.incrementOrdered();
            counters.sendAppended.incrementOrdered();
            src.position(src.limit());
            wakeFollower = followerWakes.appended(first);
            if (queued == 0 || appended >= AgentCalls.appendBatchBytes(sendBuffer))
            {
                if (queued != 0)
                {
                    followerWakes.filled();
                    counters.sendAppendedBatches.incrementOrdered();
                }
                connection.flushAppended();
                calls.cycleHeld(); // the acks that came meanwhile, as a sender's own duty cycle takes them
            }
            else
            {
                unflushed = first;
            }
            appendedTo = connection;
            return length;
        }
        finally
        {
            calls.unhold(wakeFollower);
            if (unflushed)
            {
                // a batch begins: if this sender stops before it is full, the agent sends it once no more come
                stack.wakeAgent();
            }
        }
    }

    /**
     * Whether a message to {@code destination} may be appended at all, whichever thread appends it: the first send maps
     * the ring; a message alone in the send buffer (a request, a reply) goes the usual way, a duty cycle that writes it
     * from memory used again at once (appended, the round trip's p90 was a quarter longer: benchmarks.md, 2026-12-02).
     * Each caller then tests what the stack holds of this socket's earlier messages.
     */
    private boolean mayAppend(final SendRing ring, final InetSocketAddress destination)
    {
        return ring != null && sendQueued.get() != 0 && mayAppendTo(destination.getAddress());
    }

    /**
     * Whether a message to {@code destination} may be appended as far as this socket has seen: false once its transport
     * turned out never to take appended frames. Any thread (a driver's conductor may read a stale answer: then the
     * agent runs a send it would have left, or leaves one it would have run, both correct).
     */
    boolean mayAppendTo(final InetAddress destination)
    {
        return destination != appendsNever;
    }

    /** Whether {@link #mayAppendTo} is true of every destination, which a caller may test before it has the one. */
    boolean mayAppendToAll()
    {
        return appendsNever == null;
    }

    /**
     * The thread running the duty cycle: the connection to {@code destination} if its transport takes appended frames
     * now, else null (and never again from this socket if it never does).
     */
    private Connection appendingConnection(final InetSocketAddress destination)
    {
        final Connection connection = agentState().connectionTo(destination.getAddress(), this, stack.agent());
        final int appends = connection.appends();
        if (appends < 0)
        {
            appendsNever = destination.getAddress(); // its transport never takes appended frames
        }
        return appends > 0 ? connection : null;
    }

    /** The flags of an appended frame: an ack asked for once half the send buffer is taken, as a queued one's. */
    private static int appendFlags(final long queued, final int length, final int sendBuffer)
    {
        return queued + length >= sendBuffer / 2 ? RdsHeader.FLAG_ACK_REQUIRED : 0;
    }

    /**
     * The thread running the duty cycle (a driver's agent running its client's send): appends a message the client
     * admitted, as a blocking sender appends its own (one copy, into the memory the transport sends from, instead of
     * one into the send ring and the kernel's out of it), unless the socket's earlier messages wait unread. A full
     * batch goes out at once; the rest at the end of a cycle with no frame appended ({@code TransportPath#transmit}).
     *
     * @return the length, or {@link #NOT_APPENDED}.
     */
    private int appendAdmitted(final ByteBuffer src, final InetSocketAddress destination, final int length,
        final int sport)
    {
        final SendRing ring = sendRing;
        if (!mayAppend(ring, destination))
        {
            return NOT_APPENDED;
        }
        // the connection first, whatever else stops this message: a transport that never takes appended frames is
        // learnt at the first send behind unacked ones (a driver's conductor then keeps the small sends, agentMayRun)
        final Connection connection = appendingConnection(destination);
        if (connection == null || !outbound.isEmpty() || ring.unreadBytes() > 0)
        {
            return NOT_APPENDED;
        }
        final long queued = sendQueued.getAndAdd(length);
        final int sendBuffer = options.sendBufferBytes();
        final int appended =
            connection.append(this, src, length, sport, destination.getPort(), appendFlags(queued, length, sendBuffer));
        if (appended < 0)
        {
            sendQueued.addAndGet(-length);
            return NOT_APPENDED;
        }
        counters.sendQueued.incrementOrdered();
        counters.sendAppended.incrementOrdered();
        src.position(src.limit());
        if (appended >= AgentCalls.appendBatchBytes(sendBuffer))
        {
            counters.sendAppendedBatches.incrementOrdered();
            connection.flushAppended();
        }
        return length;
    }

    /**
     * Before a blocking send waits for room: what it appended goes out, or it would wait for acks of frames unsent. A
     * cycle follows, as after every batch: on a lock a sleeping leader lent, it is what tells the sleeper that a write
     * the socket could not take whole waits for room, which only the transport's wait sees.
     */
    private void flushAppended()
    {
        final Connection connection = appendedTo;
        final AgentCalls calls = stack.calls();
        if (connection != null && calls.tryHold())
        {
            try
            {
                connection.flushAppended();
                calls.cycleHeld();
            }
            finally
            {
                calls.unhold(true);
            }
        }
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
     * not lose a message the client was told is sent. Never blocks, and does not wake the stack's agent: the
     * driver's conductor does, once per read of the rings or turn of its loop ({@link DriverServer}), and the agent
     * needs no wake for its own. Run by the agent, the message is appended if it may be ({@link #appendAdmitted}).
     *
     * @param onCycle the calling thread runs the duty cycle (the driver's agent), which appending needs.
     * @return the length, or {@link RdsResult#EAGAIN} while the message must go to {@link #outbound} and that is full
     *         (the session tries again once the agent took some), or a closed socket's {@link RdsResult#ENOTCONN}.
     */
    int sendAdmitted(final ByteBuffer src, final InetSocketAddress destination, final boolean onCycle)
    {
        final InetSocketAddress local = localAddress;
        if (!open || local == null)
        {
            return RdsResult.ENOTCONN;
        }
        final int length = src.remaining();
        if (onCycle)
        {
            final int appended = appendAdmitted(src, destination, length, local.getPort());
            if (appended >= 0)
            {
                return appended;
            }
        }
        if (!queue(src, destination, length, local.getPort(), sendQueued.getAndAdd(length)))
        {
            sendQueued.addAndGet(-length);
            return RdsResult.EAGAIN;
        }
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
                    afterBlockingSend(result);
                    return result;
                }
                if (result == RdsResult.EMSGSIZE)
                {
                    return result;
                }
                flushAppended();
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

    /** A blocking send queued its message of {@code length} bytes: see {@link AgentCalls#afterBlockingSend}. */
    private void afterBlockingSend(final int length)
    {
        stack.calls().afterBlockingSend(this, sendQueued.get() == length, length);
    }

    /**
     * Any thread, after a send: the bytes of the send ring the stack has not read yet (records being written
     * included), as the reader last published its position.
     */
    long unreadSendBytes()
    {
        return sendRing.unreadBytes();
    }

    /** The thread running the duty cycle: whether messages wait for it, committed in the ring or in {@link #outbound}. */
    boolean hasSendsForStack()
    {
        final SendRing ring = sendRing;
        return !outbound.isEmpty() || ring != null && ring.hasCommitted();
    }

    /** Any thread, after a send: whether messages wait for the stack, in the ring or in {@link #outbound}. */
    boolean hasUnreadSends()
    {
        return !outbound.isEmpty() || sendRing.unreadBytes() > 0;
    }

    private int trySend(final ByteBuffer src, final InetSocketAddress destination, final int length, final int sport)
    {
        final long queued = reserveRoom(destination, length, counters.sendQueueFull);
        if (queued < 0)
        {
            return (int)queued;
        }
        if (!queue(src, destination, length, sport, queued))
        {
            sendQueued.addAndGet(-length);
            counters.sendQueueFull.increment();
            return RdsResult.EAGAIN;
        }
        return length;
    }

    /**
     * Copies the payload into a record of the send ring, or into a pooled message handed over through
     * {@link #outbound} if the ring has no room or messages wait there (a record would pass them).
     *
     * @return false if the message needed a place in {@link #outbound} and there is none.
     */
    private boolean queue(final ByteBuffer src, final InetSocketAddress destination, final int length, final int sport,
        final long queued)
    {
        final SendRing ring = sendRing();
        // both of the queue's indices stay in this core's cache while nothing is spilled
        final long position = outbound.isEmpty() ? ring.claim(RdsHeader.LENGTH + length) : -1;
        if (position < 0 && !takeOutboundSlot())
        {
            return false;
        }
        final Message message;
        try
        {
            message = messageFor(ring, position, destination, length, sport, queued);
            message.buffer.putBytes(RdsHeader.LENGTH, src, src.position(), length);
        }
        catch (final RuntimeException | Error ex)
        {
            // the slot's first message not made (out of memory), a source changed under the copy: the reader must
            // not wait for a record that will never be committed, and the message's room is free again
            if (position >= 0)
            {
                ring.free(position);
                ring.freedByWriter();
            }
            else
            {
                outboundSlots.decrementAndGet();
            }
            sendQueued.addAndGet(-length);
            throw ex;
        }
        if (position >= 0)
        {
            ring.commit(position);
        }
        else
        {
            handOver(message, ring);
        }
        src.position(src.limit());
        return true;
    }

    /** Hands a message to the stack through {@link #outbound}, marked with the ring's tail; its place is taken. */
    private void handOver(final Message message, final SendRing ring)
    {
        message.mark = ring.tail();
        outbound.offer(message); // never full: the place is taken
    }

    /** @return whether a place in {@link #outbound} was taken (false: it is full). */
    private boolean takeOutboundSlot()
    {
        if (outboundSlots.incrementAndGet() > outbound.capacity())
        {
            outboundSlots.decrementAndGet();
            return false;
        }
        return true;
    }

    /**
     * Takes room for a claim: its bytes in the send buffer and a slot in {@link #outbound}, so that its commit cannot
     * fail.
     *
     * @return the bytes queued before this message, or {@link RdsResult#ENOBUFS}, {@link RdsResult#EMSGSIZE} or
     *         {@link RdsResult#EAGAIN}.
     */
    private long reserveClaim(final InetSocketAddress destination, final int length)
    {
        final long queued = reserveRoom(destination, length, counters.sendQueueFull);
        if (queued < 0)
        {
            return queued;
        }
        if (!takeOutboundSlot())
        {
            sendQueued.addAndGet(-length);
            counters.sendQueueFull.increment();
            return RdsResult.EAGAIN;
        }
        return queued;
    }

    /**
     * @param position a record of {@code ring}, or -1 for a pooled message ({@code send_ring_spill}).
     * @param queued   the send buffer's bytes before this message: from half of it, the message asks for an ack.
     * @return the message to write, addressed.
     */
    private Message messageFor(final SendRing ring, final long position, final InetSocketAddress destination,
        final int length, final int sport, final long queued)
    {
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
        final int checked = checkClaim(claim, destination, length);
        if (checked < 0)
        {
            return checked;
        }
        final long queued = reserveClaim(destination, length);
        if (queued < 0)
        {
            if (queued == RdsResult.ENOBUFS)
            {
                refusalReturned(destination);
            }
            return (int)queued;
        }
        final SendRing ring = sendRing();
        // a record the ring's reader passes by: the claim reaches the stack at its commit, in the order of commits
        final Message message = messageFor(ring, ring.claimAside(RdsHeader.LENGTH + length), destination, length,
            localAddress.getPort(), queued);
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
            handOver((Message)token, sendRing);
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
    void releaseSendBytes(final long length)
    {
        sendQueued.addAndGet(-length);
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

    // ---------------------------------------------------------------- notifications

    // ---------------------------------------------------------------- readiness and push delivery

    CoreStack stack()
    {
        return stack;
    }

    @Override
    public Waiting waiting()
    {
        return stack.calls();
    }

    // ---------------------------------------------------------------- options and state

    @Override
    public LocalEndpoint endpoint()
    {
        return endpoint;
    }

    Transport transport()
    {
        return transport;
    }

    /** Closes the socket without lingering: what {@link CoreStack#close()} does to the sockets left open. */
    @Override
    void closeNow()
    {
        if (!markClosed())
        {
            return;
        }
        final InetSocketAddress local = localAddress;
        if (local != null)
        {
            // the port is free when close returns, as in the kernel; the agent forgets the socket next
            endpoint.release(local.getPort());
            stack.send(agent -> agent.unbind(this));
        }
        stack.onSocketClosed(this);
        wakeAllOnClose();
    }

    @Override
    public String toString()
    {
        return "RdsSocket[" + (localAddress == null ? "unbound" : localAddress) + (open ? "" : " closed") + "]";
    }
}
