package org.rds4j;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * An RDS stack: the transports, the connections (one per node pair and transport), congestion maps,
 * counters and the background agent that runs them. Sockets are opened from a stack.
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
     * A connection as seen at the moment of the snapshot.
     *
     * @param local     local address.
     * @param remote    peer address.
     * @param transport transport name ({@code tcp}, {@code loop}, ...).
     * @param state     {@code DOWN}, {@code CONNECTING} or {@code UP} ({@code ERROR} and {@code DISCONNECTING}
     *                  pass within one step of the agent and are not seen in snapshots).
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
     * Closes every socket, every connection and the agent. Idempotent.
     */
    @Override
    void close();
}
