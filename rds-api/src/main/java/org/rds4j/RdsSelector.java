package org.rds4j;

import java.io.Closeable;
import java.io.IOException;
import java.util.Set;

/**
 * Waits on many sockets of one stack at once, as {@link java.nio.channels.Selector} waits on channels and
 * {@code poll(2)} on the kernel's RDS sockets: one thread can serve any number of sockets without spinning.
 * Opened with {@link RdsStack#openSelector()}; its sockets must be of that stack.
 * <p>
 * A socket is registered with an interest set of {@link #OP_READ}, {@link #OP_WRITE} and {@link #OP_ERROR}.
 * {@link #select(long)} waits until at least one registered socket is ready for an operation of its interest,
 * puts its key in the {@linkplain #selectedKeys() selected-key set} with its {@linkplain RdsSelectionKey#readyOps()
 * ready operations}, and returns how many keys it found ready. The application handles them and removes each from
 * the set. Readiness is level-triggered, as with {@code poll(2)}: a socket that is still ready (a message left
 * queued) is reported again by the next select.
 * <ul>
 * <li><b>{@link #OP_READ}</b>: a message or a notification is queued, so that a non-blocking {@code receive} or
 * {@code poll} returns something. The kernel's POLLIN rule ({@code rs_recv_queue} or {@code rs_notify_queue} not
 * empty). A notification is queued only while the socket has a listener.</li>
 * <li><b>{@link #OP_WRITE}</b>: the socket's send buffer has room ({@link RdsSocket#sendQueuedBytes()} below
 * {@link RdsOptions#SO_SNDBUF}, the test {@code send} makes). The kernel's POLLOUT rule, with its caveat: it does
 * not mean that a given destination is uncongested. A send to a congested port still returns
 * {@link RdsResult#ENOBUFS}; a sender then waits for that port's {@link RdsNotificationListener#onUncongested}
 * notification (with {@link RdsOptions#RDS_CONG_MONITOR} on), which makes the socket readable.</li>
 * <li><b>{@link #OP_ERROR}</b>: the socket was closed, or its stack was. Reported whatever the interest set,
 * once: the key is then cancelled.</li>
 * </ul>
 * <p>
 * Who drives the stack: a select that waits drives it as a blocking {@code receive} does, in both threading
 * modes (it runs the agent's duty cycle itself, or parks while another thread runs it), so in
 * {@link Threading#INVOKER} mode a waiting select is all an application needs. {@link #selectNow()} never waits
 * and runs no duty cycle, as a non-blocking {@code poll}.
 * <p>
 * Threads: registration, {@link RdsSelectionKey#interestOps(int)}, {@link RdsSelectionKey#cancel()} and
 * {@link #wakeup()} may be called from any thread at any time; a select in progress sees the change. Selects
 * are serialized (a second thread's select waits for the first's to return). The selected-key set is not
 * thread-safe: use it from the selecting thread. A socket is registered with one selector at a time, and
 * not while it {@linkplain RdsSocket#startDelivery delivers to a handler}.
 */
public interface RdsSelector extends Closeable
{
    /** A message or a notification is queued: POLLIN. */
    int OP_READ = 1;
    /** The send buffer has room: POLLOUT (not a promise that a destination is uncongested). */
    int OP_WRITE = 1 << 2;
    /** The socket or its stack is closed: POLLERR/POLLHUP; always reported, whatever the interest set. */
    int OP_ERROR = 1 << 3;

    /**
     * Registers a socket, or changes the interest set and attachment of its key if it is registered already.
     * The socket's current readiness counts: a socket with a message queued is selected at once.
     *
     * @param socket     an open socket of this selector's stack, bound or not.
     * @param ops        the interest set: {@link #OP_READ}, {@link #OP_WRITE}, {@link #OP_ERROR}, or-ed; 0 to
     *                   keep the key but select nothing but errors.
     * @param attachment any object, returned by {@link RdsSelectionKey#attachment()}; may be null.
     * @return the socket's key on this selector.
     * @throws IllegalArgumentException       if the socket is of another stack, or {@code ops} has other bits.
     * @throws IllegalStateException          if the socket is registered with another selector or delivers to a
     *                                        handler.
     * @throws java.nio.channels.ClosedChannelException if the socket is closed.
     * @throws java.nio.channels.ClosedSelectorException if this selector is closed.
     */
    RdsSelectionKey register(RdsSocket socket, int ops, Object attachment) throws IOException;

    /**
     * Waits until at least one key is ready, {@link #wakeup()} is called, the thread is interrupted (its
     * interrupt status is left set) or the timeout expires. Once the selector's stack is closed (its sockets
     * reported with {@link #OP_ERROR}), it returns at once.
     *
     * @param timeoutMillis how long to wait at most; 0 waits without a limit.
     * @return the number of keys found ready, each now in {@link #selectedKeys()}; 0 on timeout, wake-up or
     *         interrupt.
     * @throws IllegalArgumentException if the timeout is negative.
     * @throws java.nio.channels.ClosedSelectorException if this selector is closed.
     */
    int select(long timeoutMillis);

    /**
     * {@link #select(long)} without a timeout.
     *
     * @return the number of keys found ready.
     */
    int select();

    /**
     * Looks at the registered sockets once, never waiting and running no duty cycle.
     *
     * @return the number of keys found ready, each now in {@link #selectedKeys()}.
     * @throws java.nio.channels.ClosedSelectorException if this selector is closed.
     */
    int selectNow();

    /**
     * Makes a select in progress return at once; if none is, the next select returns at once. Any thread.
     *
     * @return this selector.
     */
    RdsSelector wakeup();

    /**
     * @return the keys found ready and not yet removed by the application; remove each once handled. Not
     *         thread-safe: the selecting thread's.
     */
    Set<RdsSelectionKey> selectedKeys();

    /**
     * @return a snapshot of the keys registered and not cancelled.
     */
    Set<RdsSelectionKey> keys();

    /** @return whether the selector is open. */
    boolean isOpen();

    /**
     * Cancels every key and makes a select in progress return. The sockets stay open. Idempotent.
     */
    @Override
    void close();
}
