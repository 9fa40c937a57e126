package org.rds4j;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.Executor;

/**
 * An RDS stack: the transports, the connections (one per node pair and transport), congestion maps,
 * counters and the agent that runs them. Sockets are opened from a stack.
 * <p>
 * By default ({@link Threading#AGENT}) the agent runs on the stack's own thread. With
 * {@link Threading#INVOKER} the stack starts no thread and the application runs the agent's duty cycle:
 * see {@link #invoke()}.
 * <p>
 * One stack per process is the usual case ({@link #defaultStack()}); several stacks in one JVM work, each
 * with its own local addresses. The implementation is found with {@link ServiceLoader}: put {@code rds-core}
 * and a transport (e.g. {@code transport-tcp}) on the class path.
 */
public interface RdsStack extends Closeable
{
    /**
     * Opens a new stack.
     *
     * @param config its configuration.
     * @return the stack, running; close it when done.
     * @throws IllegalStateException if no implementation is on the class path.
     */
    static RdsStack open(final RdsStackConfig config)
    {
        for (final RdsStackProvider provider : ServiceLoader.load(RdsStackProvider.class))
        {
            return provider.open(config);
        }
        throw new IllegalStateException("no RdsStackProvider on the class path: add org.rds4j:rds-core");
    }

    /**
     * @return the process-wide stack with the default configuration, opened on first use and closed at JVM
     *         exit.
     */
    static RdsStack defaultStack()
    {
        return DefaultStackHolder.STACK;
    }

    /**
     * Opens an unbound socket with the stack's default options.
     *
     * @return the socket.
     * @throws IOException if the stack is closed.
     */
    RdsSocket openSocket() throws IOException;

    /**
     * Opens a selector for this stack's sockets: one thread can then wait on many of them.
     *
     * @return a new selector; close it when done (closing the stack closes its sockets, which selects them with
     *         {@link RdsSelector#OP_ERROR}).
     * @throws IOException if the stack is closed.
     */
    RdsSelector openSelector() throws IOException;

    /**
     * Sets the listener for the stack's peer events: each connection between a local address and a peer
     * coming up or going down, whatever its sockets do. Events are handed to {@code executor} in the order they
     * happened, one at a time (never two of this listener's calls at once); the duty cycle only queues them.
     *
     * @param executor runs the listener; it must run tasks on another thread than its caller (not
     *                 {@code Runnable::run}).
     * @param listener the listener, or null to stop (events not yet handed over are dropped).
     * @return this stack.
     */
    RdsStack setPeerListener(Executor executor, RdsPeerListener listener);

    /**
     * @return the configuration the stack was opened with.
     */
    RdsStackConfig config();

    /**
     * @return a snapshot of the stack's counters by name (for example {@code send_queued},
     *         {@code recv_delivered}, {@code conn_reset}).
     */
    Map<String, Long> counters();

    /**
     * @return a snapshot of the stack's connections.
     */
    List<ConnectionInfo> connections();

    /**
     * Runs one duty cycle of the stack's agent on the calling thread, for a stack opened with
     * {@link Threading#INVOKER}: runs queued commands, moves sent messages into their connections, does the
     * transports' I/O (accepts, connects, reads, writes), runs the connections' timers (acks, heartbeats,
     * reconnects) and delivers what arrived. It never waits: it returns at once when there is nothing to do.
     * <p>
     * What the caller must do:
     * <ul>
     * <li>Call it often enough. Non-blocking sends only queue messages, and nothing arrives, is acked or
     * reconnects between duty cycles: a polling application calls {@code invoke()} in its loop next to its
     * {@code send}, {@code receive} and {@code poll} calls (which do not run duty cycles) and idles with its
     * own idle strategy when both did nothing, as an Aeron client calls its {@code AgentInvoker}. Acks go
     * within {@code ackDelay} only if duty cycles run that often, and a stack that runs none for
     * {@code heartbeatTimeout} is dropped by its peers as dead.</li>
     * <li>Calls that wait drive the stack themselves while they wait, so they need nobody else to call
     * {@code invoke()}: a blocking {@code send} or {@code receive}, {@link #connections()},
     * {@link RdsSocket#cancelSentTo}, {@link #close()}.</li>
     * </ul>
     * Thread safety: any thread may call it. One duty cycle runs at a time; a thread that finds another
     * thread running one returns 0 at once, without waiting. The duty cycle runs no application code.
     *
     * @return the work done (commands run, messages moved, frames read or written, timers fired); 0 when there
     *         was nothing to do, when another thread is running a duty cycle, or after {@link #close()}.
     * @throws IllegalStateException if the stack runs its own agent thread ({@link Threading#AGENT}).
     */
    int invoke();

    /**
     * A connection as seen at the moment of the snapshot.
     *
     * @param local     local address.
     * @param remote    peer address.
     * @param transport transport name ({@code tcp}, {@code loop}, ...).
     * @param state     {@code DOWN}, {@code CONNECTING}, {@code HANDSHAKE} (the transport connection is up, the
     *                  peer has not yet answered the handshake) or {@code UP}.
     * @param nextTxSequence sequence number the next new message gets.
     * @param nextRxSequence sequence number expected next from the peer.
     * @param unacked   messages sent or queued and not yet acknowledged (the connection's send queue).
     */
    record ConnectionInfo(
        InetAddress local,
        InetAddress remote,
        String transport,
        String state,
        long nextTxSequence,
        long nextRxSequence,
        int unacked)
    {
    }

    /**
     * Closes every socket, every connection and the agent. Idempotent. With {@link Threading#INVOKER} the
     * agent's shutdown runs on the calling thread, after any duty cycle in progress on another thread.
     */
    @Override
    void close();
}
