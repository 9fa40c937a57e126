package org.rds4j;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.NetworkChannel;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * A reliable datagram socket: bound to one local {@code ip:port}, it sends messages to any {@code ip:port}
 * of the cluster and receives messages from any of them, each with its sender's address.
 * <p>
 * Messages between two nodes arrive reliably, in order and exactly once, across dropped and re-established
 * connections; all sockets of a stack share one connection per node pair.
 * <p>
 * Calls the caller must handle return codes ({@link RdsResult}); misuse (a closed socket, a null argument,
 * an out-of-range option) throws. A socket is safe for use by several threads.
 * <p>
 * A socket is a {@link NetworkChannel}: {@link #bind(SocketAddress)}, {@link #getLocalAddress()}, the options
 * ({@link #supportedOptions()}: those of {@link RdsOptions}) and {@link #close()} work as NIO's do, with the
 * result codes above where RDS has its own.
 */
public interface RdsSocket extends NetworkChannel
{
    /** The largest payload a message may carry: 1 MiB, as in the kernel's RDS. */
    int MAX_MESSAGE_SIZE = 1 << 20;

    /**
     * Binds the socket to a local address of one of the stack's transports.
     *
     * @param local the local address and port; port 0 picks a free ephemeral port (never 0 or 1).
     * @return this socket.
     * @throws RdsException with {@link RdsResult#EINVAL} for a wildcard, broadcast or multicast address, for
     *                      {@code null} (which asks NIO for a wildcard address), for port 1 (reserved by RDS) or
     *                      when already bound; {@link RdsResult#EADDRINUSE} when another socket holds the
     *                      address; {@link RdsResult#EADDRNOTAVAIL} when no transport can serve the address.
     * @throws IOException  if the socket is closed ({@link java.nio.channels.ClosedChannelException}).
     */
    RdsSocket bind(InetSocketAddress local) throws IOException;

    /**
     * {@link NetworkChannel}'s bind: as {@link #bind(InetSocketAddress)}.
     *
     * @param local an {@link InetSocketAddress}.
     * @return this socket.
     * @throws java.nio.channels.UnsupportedAddressTypeException if {@code local} is not an {@link InetSocketAddress}.
     * @throws RdsException                                      as {@link #bind(InetSocketAddress)}, for
     *                                                           {@code null} too.
     * @throws IOException                                       if the socket is closed.
     */
    @Override
    RdsSocket bind(SocketAddress local) throws IOException;

    /**
     * @return the bound address, or {@code null} before bind; also once closed.
     */
    InetSocketAddress localAddress();

    /**
     * {@link NetworkChannel}'s local address: as {@link #localAddress()}, but a closed socket throws.
     *
     * @return the bound address, or {@code null} before bind.
     * @throws java.nio.channels.ClosedChannelException if the socket is closed.
     */
    @Override
    InetSocketAddress getLocalAddress() throws IOException;

    /**
     * Queues one message to a destination. The payload is copied from {@code src}'s position to its limit;
     * on success the position moves to the limit.
     * <p>
     * In blocking mode (the default) the call waits up to {@link RdsOptions#SO_SNDTIMEO} for send-buffer room
     * and for the destination port to be uncongested.
     *
     * @param src         the payload, zero to {@link #MAX_MESSAGE_SIZE} bytes.
     * @param destination the receiving socket's address; port 0 is the destination stack's ping responder.
     * @return the number of bytes queued ({@code >= 0}); or {@link RdsResult#EMSGSIZE} (too large for 1 MiB or
     *         the send buffer: never retry), {@link RdsResult#EAGAIN} (non-blocking: queue full, retry later),
     *         {@link RdsResult#ENOBUFS} (non-blocking: destination port congested, retry after an uncongested
     *         notification), {@link RdsResult#ENOTCONN} (not bound), {@link RdsResult#EINVAL} (a wildcard,
     *         broadcast or multicast destination), {@link RdsResult#ETIMEDOUT} or {@link RdsResult#EINTR}
     *         (blocking mode).
     * @throws IOException if the socket is closed.
     */
    int send(ByteBuffer src, InetSocketAddress destination) throws IOException;

    /**
     * Zero-copy send: takes room in the send buffer for a message of {@code length} bytes to a destination and
     * hands {@code claim} the stack's own buffer to write the payload into; {@link RdsClaim#commit()} then queues
     * it with no copy from an application buffer, {@link RdsClaim#abort()} frees the room. As a non-blocking
     * {@link #send}, whatever the socket's blocking mode: it never waits.
     *
     * @param length      the payload's length, zero to {@link #MAX_MESSAGE_SIZE} bytes.
     * @param destination the receiving socket's address.
     * @param claim       a claim holding no message; it holds this one on success.
     * @return {@code length} on success; otherwise, as {@link #send} in non-blocking mode,
     *         {@link RdsResult#EMSGSIZE}, {@link RdsResult#EAGAIN}, {@link RdsResult#ENOBUFS},
     *         {@link RdsResult#ENOTCONN}, {@link RdsResult#EINVAL} or {@link RdsResult#EACCES}, and the claim holds
     *         nothing.
     * @throws IllegalStateException if {@code claim} already holds a message.
     * @throws IOException           if the socket is closed.
     */
    int tryClaim(int length, InetSocketAddress destination, RdsClaim claim) throws IOException;

    /**
     * Receives one message, copying it into {@code dst}; a message longer than {@code dst.remaining()} is
     * truncated and the rest discarded, without an indication here ({@link #receive(ByteBuffer, RdsReceiveInfo)}
     * reports it; {@link #poll} hands over whole messages). Pending notifications are passed to the listener
     * first, on this thread.
     * <p>
     * In blocking mode the call waits up to {@link RdsOptions#SO_RCVTIMEO}.
     *
     * @param dst where the payload goes, from its position.
     * @return the sender's address; {@code null} if no message is queued (non-blocking), the timeout expired,
     *         or the thread was interrupted (its interrupt status is left set).
     * @throws IOException if the socket is closed or not bound.
     */
    InetSocketAddress receive(ByteBuffer dst) throws IOException;

    /**
     * Receives one message as {@link #receive(ByteBuffer)} does, and reports what it took in {@code info}: the
     * sender, the message's full length and whether it was truncated. As the kernel's {@code recvmsg} with
     * {@code MSG_TRUNC}: the result is the full length even where only {@code dst.remaining()} bytes were copied
     * ({@code dst}'s position moves by those), and a truncated message is consumed, its rest discarded.
     * Allocates nothing.
     *
     * @param dst  where the payload goes, from its position.
     * @param info filled with the message's sender, full length and truncation; cleared when none was taken.
     * @return the message's full payload length ({@code >= 0}); or {@link RdsResult#EAGAIN} (non-blocking:
     *         nothing queued), {@link RdsResult#ETIMEDOUT} ({@link RdsOptions#SO_RCVTIMEO} expired) or
     *         {@link RdsResult#EINTR} (the thread was interrupted; its interrupt status is left set).
     * @throws IOException if the socket is closed or not bound.
     */
    int receive(ByteBuffer dst, RdsReceiveInfo info) throws IOException;

    /**
     * Hands up to {@code limit} queued messages to a handler without copying them, never blocking.
     * Pending notifications are passed to the listener first. The handler must not receive or poll this socket: the
     * message it is handed is still the first queued, so it would get it again, and this call then throws
     * {@link IllegalStateException} (no message is skipped).
     *
     * @param handler called once per message, on this thread.
     * @param limit   most messages to deliver in this call; must be positive.
     * @return the number of messages delivered, {@code 0} if none was queued.
     * @throws IOException if the socket is closed or not bound.
     * @throws IllegalStateException if the handler received or polled this socket.
     */
    int poll(RdsMessageHandler handler, int limit) throws IOException;

    /**
     * Push delivery: from now on the stack hands this socket's messages to {@code handler} on {@code executor},
     * instead of the application receiving them. Notifications go to the socket's listener first, on the same
     * executor, before the messages queued after them (as {@link #poll} delivers them).
     * <ul>
     * <li><b>In order, one at a time.</b> At most one task of this socket runs on the executor at a time, and it
     * hands over messages in their queue order; a pool of many threads may serve many sockets.</li>
     * <li><b>Back-pressure.</b> A message's bytes stay counted in the receive buffer ({@link #receiveQueuedBytes()},
     * against {@link RdsOptions#SO_RCVBUF}) until its handler returns, so a slow handler congests the socket's port
     * exactly as a slow reader does, and senders see {@link RdsResult#ENOBUFS} or wait.</li>
     * <li><b>No thread of its own.</b> A task is submitted when the duty cycle delivers something to an idle
     * socket; nothing runs while nothing arrives. In {@link Threading#INVOKER} mode messages arrive only while
     * something drives the stack ({@link RdsStack#invoke()}, a blocking call, a waiting select).</li>
     * <li><b>Until close.</b> Delivery stops when the socket closes; what was queued and not handed over is
     * dropped, as close drops it.</li>
     * </ul>
     * The executor must run tasks on another thread than the caller of {@code execute} (not
     * {@code Runnable::run}): it is called from the stack's duty cycle. A handler that throws is logged and the
     * next message delivered. While delivery is on, do not {@code receive} or {@code poll} the socket yourself.
     *
     * @param executor runs the deliveries.
     * @param handler  gets each message; the payload is valid only during the call, as with {@link #poll}.
     * @return this socket.
     * @throws IllegalStateException if delivery was started already, or the socket is registered with a selector.
     * @throws IOException           if the socket is closed or not bound.
     */
    RdsSocket startDelivery(Executor executor, RdsMessageHandler handler) throws IOException;

    /**
     * {@link #startDelivery(Executor, RdsMessageHandler)} with a notification listener, set as by
     * {@link #setNotificationListener} and called on the executor.
     *
     * @param executor runs the deliveries.
     * @param handler  gets each message.
     * @param listener gets the socket's notifications, in order with the messages; null discards them.
     * @return this socket.
     * @throws IllegalStateException if delivery was started already, or the socket is registered with a selector.
     * @throws IOException           if the socket is closed or not bound.
     */
    default RdsSocket startDelivery(
        final Executor executor, final RdsMessageHandler handler, final RdsNotificationListener listener)
        throws IOException
    {
        setNotificationListener(listener);
        return startDelivery(executor, handler);
    }

    /**
     * Drops every message of this socket to a destination that is not yet acknowledged: from the send queue
     * and from the retransmission list (like {@code RDS_CANCEL_SENT_TO}). Their bytes leave the send buffer
     * and blocked senders are woken. A message already on the wire may still arrive.
     *
     * @param destination the destination address and port.
     * @return the number of messages dropped, or {@link RdsResult#ENOTCONN} if the socket is not bound.
     * @throws IOException if the socket is closed.
     */
    int cancelSentTo(InetSocketAddress destination) throws IOException;

    /**
     * Waits until every message this socket queued has been acknowledged by its destination's stack (or
     * cancelled): until {@link #sendQueuedBytes()} is 0, as {@link RdsOptions#SO_LINGER} makes {@link #close()}
     * wait. Claimed messages not yet committed or aborted count as queued. A waiting call is woken by the acks,
     * and in {@link Threading#INVOKER} mode runs the stack's duty cycles meanwhile, as blocking calls do.
     *
     * @param timeout how long to wait at most; zero or negative: only look.
     * @return true if nothing is queued; false at the timeout, or if the thread is interrupted (its interrupt
     *         status is left set).
     * @throws IOException if the socket is closed, also while waiting.
     */
    boolean awaitDrained(Duration timeout) throws IOException;

    /**
     * Sets an option; see {@link RdsOptions}.
     *
     * @param option the option.
     * @param value  its new value.
     * @param <T>    the option's type.
     * @return this socket.
     * @throws RdsException                  with {@link RdsResult#EOPNOTSUPP} when changing the transport after
     *                                       bind or a second time.
     * @throws IllegalArgumentException      for an out-of-range value.
     * @throws UnsupportedOperationException for an option not in {@link #supportedOptions()}.
     * @throws IOException                   if the socket is closed.
     */
    @Override
    <T> RdsSocket setOption(SocketOption<T> option, T value) throws IOException;

    /**
     * @param option the option.
     * @param <T>    the option's type.
     * @return the option's current value.
     * @throws UnsupportedOperationException for an option not in {@link #supportedOptions()}.
     * @throws IOException                   if the socket is closed.
     */
    @Override
    <T> T getOption(SocketOption<T> option) throws IOException;

    /**
     * @return the options of {@link RdsOptions}, unmodifiable; also on a closed socket.
     */
    @Override
    Set<SocketOption<?>> supportedOptions();

    /**
     * @param blocking {@code true} (the default) for calls that wait, {@code false} for calls that return a
     *                 code at once.
     * @return this socket.
     */
    RdsSocket configureBlocking(boolean blocking);

    /**
     * @return whether calls wait.
     */
    boolean isBlocking();

    /**
     * Sets the listener for this socket's notifications; {@code null} discards them.
     *
     * @param listener called on the thread that receives or polls.
     * @return this socket.
     */
    RdsSocket setNotificationListener(RdsNotificationListener listener);

    /**
     * @return the bytes queued and not yet acknowledged, counted against {@link RdsOptions#SO_SNDBUF}.
     */
    long sendQueuedBytes();

    /**
     * @return the bytes delivered and not yet received, counted against {@link RdsOptions#SO_RCVBUF}.
     */
    long receiveQueuedBytes();

    /**
     * @return whether the socket is open.
     */
    boolean isOpen();

    /**
     * Closes the socket: its port is free when this returns, its queued and unacknowledged messages are
     * dropped (not sent), and calls blocked on it throw {@link java.nio.channels.ClosedChannelException}.
     * Idempotent. With {@link RdsOptions#SO_LINGER} set to a positive number of seconds, it first waits up to
     * that long for them to be acknowledged ({@link #awaitDrained}), in either blocking mode; an interrupt ends
     * that wait (its status is left set).
     */
    @Override
    void close();
}
