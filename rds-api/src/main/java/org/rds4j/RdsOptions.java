package org.rds4j;

import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.time.Duration;

/**
 * The options of an {@link RdsSocket}, set with {@link RdsSocket#setOption(SocketOption, Object)}.
 * <p>
 * {@link #SO_SNDBUF}, {@link #SO_RCVBUF} and {@link #RDS_TRANSPORT} default to the stack's
 * {@link RdsStackConfig}; the timeouts default to zero (wait forever), {@link #SO_LINGER} to -1 (off) and
 * {@link #RDS_CONG_MONITOR} to off. {@link RdsSocket#supportedOptions()} is the set of them all. Where an option
 * means what a standard one means, it is that one ({@link StandardSocketOptions}); the others are rds4j's.
 */
public final class RdsOptions
{
    /**
     * Send buffer in bytes: payload bytes queued and not yet acknowledged by the peer's stack. A send is
     * admitted while the bytes already queued are below this limit; a message larger than it fails with
     * {@link RdsResult#EMSGSIZE}. Must be positive.
     */
    public static final SocketOption<Integer> SO_SNDBUF = StandardSocketOptions.SO_SNDBUF;

    /**
     * Receive buffer in bytes: payload bytes delivered to the socket and not yet received by the
     * application. Above it the socket's port is marked congested for every peer; below half of it the
     * mark is cleared. Must be positive.
     */
    public static final SocketOption<Integer> SO_RCVBUF = StandardSocketOptions.SO_RCVBUF;

    /**
     * How long {@link RdsSocket#close()} waits, in seconds, for the socket's queued messages to be acknowledged
     * before it drops what is left ({@link RdsSocket#awaitDrained}). Negative (the default, off) or 0: close drops
     * them at once, as the kernel's RDS does. As TCP's linger, with acks in place of the peer's TCP acks.
     */
    public static final SocketOption<Integer> SO_LINGER = StandardSocketOptions.SO_LINGER;

    /** How long a blocking send waits for room or for an uncongested destination; {@link Duration#ZERO} waits forever. */
    public static final SocketOption<Duration> SO_SNDTIMEO = new RdsOption<>("SO_SNDTIMEO", Duration.class);

    /** How long a blocking receive waits for a message; {@link Duration#ZERO} waits forever. */
    public static final SocketOption<Duration> SO_RCVTIMEO = new RdsOption<>("SO_RCVTIMEO", Duration.class);

    /** The transport; may be set once and only before bind (like {@code SO_RDS_TRANSPORT}). */
    public static final SocketOption<TransportType> RDS_TRANSPORT = new RdsOption<>("RDS_TRANSPORT", TransportType.class);

    /**
     * Congestion monitoring (like {@code RDS_CONG_MONITOR}): when on, a destination port that refused a
     * send with {@link RdsResult#ENOBUFS} is remembered and the socket's
     * {@link RdsNotificationListener#onUncongested} is called once it is free again.
     */
    public static final SocketOption<Boolean> RDS_CONG_MONITOR = new RdsOption<>("RDS_CONG_MONITOR", Boolean.class);

    private RdsOptions()
    {
    }

    private static final class RdsOption<T> implements SocketOption<T>
    {
        private final String name;
        private final Class<T> type;

        RdsOption(final String name, final Class<T> type)
        {
            this.name = name;
            this.type = type;
        }

        @Override
        public String name()
        {
            return name;
        }

        @Override
        public Class<T> type()
        {
            return type;
        }

        @Override
        public String toString()
        {
            return name;
        }
    }
}
