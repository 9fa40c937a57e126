package org.rds4j.core;

import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;

import java.net.SocketOption;
import java.time.Duration;
import java.util.Set;

/**
 * A socket's options ({@link RdsOptions}): their values, checks and defaults from the stack's configuration.
 * <p>
 * Threads: set and read by application threads; the agent reads the buffer sizes. {@code RDS_CONG_MONITOR}
 * is kept by the socket's {@link Congestion.Sender}, which acts on it.
 */
final class SocketOptions
{
    /** {@link org.rds4j.RdsSocket#supportedOptions()}: every option of {@link RdsOptions}. */
    static final Set<SocketOption<?>> SUPPORTED = Set.of(RdsOptions.SO_SNDBUF, RdsOptions.SO_RCVBUF,
        RdsOptions.SO_SNDTIMEO, RdsOptions.SO_RCVTIMEO, RdsOptions.SO_LINGER, RdsOptions.RDS_TRANSPORT,
        RdsOptions.RDS_CONG_MONITOR);

    private final Congestion.Sender congestion;
    /** {@link RdsStackConfig#maxSocketBufferBytes()}. */
    private final int maxBufferBytes;
    private volatile int sendBufferBytes;
    private volatile int receiveBufferBytes;
    private volatile long sendTimeoutNs;
    private volatile long receiveTimeoutNs;
    /** {@code SO_LINGER}: seconds, -1 for off. */
    private volatile int lingerSeconds = -1;
    private volatile TransportType transportType;
    /** Under the socket's lock, with its bind: the transport can be chosen once. */
    private boolean transportTypeSet;

    /**
     * @param config     the stack's configuration: the default buffer sizes and transport.
     * @param congestion the socket's send side of congestion, which keeps {@code RDS_CONG_MONITOR}.
     */
    SocketOptions(final RdsStackConfig config, final Congestion.Sender congestion)
    {
        this.congestion = congestion;
        this.maxBufferBytes = config.maxSocketBufferBytes();
        this.sendBufferBytes = config.sendBufferBytes();
        this.receiveBufferBytes = config.receiveBufferBytes();
        this.transportType = config.transport();
    }

    /**
     * Sets any option but {@code RDS_TRANSPORT} (see {@link #transportType(TransportType, boolean)}).
     *
     * @param <T>    the option's type.
     * @param option the option.
     * @param value  its value, not null.
     * @throws UnsupportedOperationException if it is not an RDS socket option.
     * @throws IllegalArgumentException      if the value is out of range.
     */
    <T> void set(final SocketOption<T> option, final T value)
    {
        if (option == RdsOptions.SO_SNDBUF)
        {
            sendBufferBytes = buffer(option, (Integer)value);
        }
        else if (option == RdsOptions.SO_RCVBUF)
        {
            receiveBufferBytes = buffer(option, (Integer)value);
        }
        else if (option == RdsOptions.SO_SNDTIMEO)
        {
            sendTimeoutNs = timeout(option, (Duration)value);
        }
        else if (option == RdsOptions.SO_RCVTIMEO)
        {
            receiveTimeoutNs = timeout(option, (Duration)value);
        }
        else if (option == RdsOptions.SO_LINGER)
        {
            // as NIO: any negative value turns it off, and reads back as -1
            lingerSeconds = Math.max(-1, (Integer)value);
        }
        else if (option == RdsOptions.RDS_CONG_MONITOR)
        {
            congestion.monitor((Boolean)value);
        }
        else
        {
            throw new UnsupportedOperationException("not an RDS socket option: " + option);
        }
    }

    /**
     * Sets {@code RDS_TRANSPORT}, once and before bind; called under the socket's lock.
     *
     * @param type  the transport.
     * @param bound whether the socket is bound.
     * @throws RdsException EOPNOTSUPP if bound or set before.
     */
    void transportType(final TransportType type, final boolean bound) throws RdsException
    {
        if (bound || transportTypeSet)
        {
            throw new RdsException(RdsResult.EOPNOTSUPP, "the transport can be set once, before bind");
        }
        transportType = type;
        transportTypeSet = true;
    }

    /**
     * @param <T>    the option's type.
     * @param option the option.
     * @return its value.
     * @throws UnsupportedOperationException if it is not an RDS socket option.
     */
    @SuppressWarnings("unchecked")
    <T> T get(final SocketOption<T> option)
    {
        final Object value;
        if (option == RdsOptions.SO_SNDBUF)
        {
            value = sendBufferBytes;
        }
        else if (option == RdsOptions.SO_RCVBUF)
        {
            value = receiveBufferBytes;
        }
        else if (option == RdsOptions.SO_SNDTIMEO)
        {
            value = Duration.ofNanos(sendTimeoutNs);
        }
        else if (option == RdsOptions.SO_RCVTIMEO)
        {
            value = Duration.ofNanos(receiveTimeoutNs);
        }
        else if (option == RdsOptions.SO_LINGER)
        {
            value = lingerSeconds;
        }
        else if (option == RdsOptions.RDS_CONG_MONITOR)
        {
            value = congestion.monitor();
        }
        else if (option == RdsOptions.RDS_TRANSPORT)
        {
            value = transportType;
        }
        else
        {
            throw new UnsupportedOperationException("not an RDS socket option: " + option);
        }
        return (T)value;
    }

    /** @return {@code SO_SNDBUF} in bytes. */
    int sendBufferBytes()
    {
        return sendBufferBytes;
    }

    /** @return {@code SO_RCVBUF} in bytes. */
    int receiveBufferBytes()
    {
        return receiveBufferBytes;
    }

    /** @return {@code SO_SNDTIMEO} in nanoseconds; 0: no timeout. */
    long sendTimeoutNs()
    {
        return sendTimeoutNs;
    }

    /** @return {@code SO_RCVTIMEO} in nanoseconds; 0: no timeout. */
    long receiveTimeoutNs()
    {
        return receiveTimeoutNs;
    }

    /** @return {@code SO_LINGER} in seconds; 0 or -1: close does not wait. */
    int lingerSeconds()
    {
        return lingerSeconds;
    }

    /** @return {@code RDS_TRANSPORT}: the transport bind chooses. */
    TransportType transportType()
    {
        return transportType;
    }

    /** A buffer size: positive, and lowered to the largest allowed, as Linux lowers it to {@code wmem_max}. */
    private int buffer(final SocketOption<?> option, final int value)
    {
        if (value <= 0)
        {
            throw new IllegalArgumentException(option + " must be positive: " + value);
        }
        return Math.min(value, maxBufferBytes);
    }

    private static long timeout(final SocketOption<?> option, final Duration value)
    {
        if (value.isNegative())
        {
            throw new IllegalArgumentException(option + " must not be negative: " + value);
        }
        return value.isZero() ? 0 : Math.max(1, value.toNanos());
    }
}
