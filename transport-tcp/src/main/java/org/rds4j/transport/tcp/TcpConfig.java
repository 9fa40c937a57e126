package org.rds4j.transport.tcp;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.rds4j.RdsStackConfig;
import org.rds4j.Setting;
import org.rds4j.SettingSource;
import org.rds4j.TransportConfig;

/**
 * The settings of RDS over TCP, which only this transport reads (as the kernel keeps its TCP tunables in
 * {@code tcp.c}): immutable, built with {@link #builder()} and handed to a stack with
 * {@link RdsStackConfig.Builder#transportConfig(TransportConfig)}. A stack given none reads them, as any
 * setting, from the {@code rds4j.tcp.*} system properties, else the {@code RDS4J_TCP_*} environment variables,
 * else the defaults ({@link #of(RdsStackConfig)}).
 */
public final class TcpConfig implements TransportConfig
{
    /** TCP port of RDS over TCP, as in the kernel. */
    public static final int DEFAULT_TCP_PORT = 16385;
    /**
     * Default {@link #tcpSendRingBytes()}: 2 MiB, twice the default send buffer, so that a socket's whole
     * window fits with room for what waits for the ack of a later frame. (With one socket sending, 1 MiB and
     * 4 MiB rings both sent every byte zero-copy, at the same rates.)
     */
    public static final int DEFAULT_TCP_SEND_RING_BYTES = 2 << 20;
    /** The smallest {@link #tcpSendRingBytes()} other than 0: 256 KiB. */
    public static final int MIN_TCP_SEND_RING_BYTES = 256 << 10;
    /** The largest {@link #tcpSendRingBytes()}: 1 GiB. */
    public static final int MAX_TCP_SEND_RING_BYTES = 1 << 30;

    /** Port listened on and connected to: {@code rds4j.tcp.port}. */
    public static final Setting<Integer> TCP_PORT =
        Setting.ofInt("tcpPort", "rds4j.tcp.port", DEFAULT_TCP_PORT, Setting.range(1, 65535));
    /** Keepalive idle time before the first probe: {@code rds4j.tcp.keepalive.idle}. */
    public static final Setting<Duration> KEEP_ALIVE_IDLE = Setting.ofDuration("keepAliveIdle",
        "rds4j.tcp.keepalive.idle", Duration.ofSeconds(5), TcpConfig::wholeSecondProblem);
    /** Keepalive interval between probes: {@code rds4j.tcp.keepalive.interval}. */
    public static final Setting<Duration> KEEP_ALIVE_INTERVAL = Setting.ofDuration("keepAliveInterval",
        "rds4j.tcp.keepalive.interval", Duration.ofSeconds(5), TcpConfig::wholeSecondProblem);
    /** Keepalive probes before the connection is dropped: {@code rds4j.tcp.keepalive.count}. */
    public static final Setting<Integer> KEEP_ALIVE_COUNT =
        Setting.ofInt("keepAliveCount", "rds4j.tcp.keepalive.count", 5, Setting.atLeast(1));
    /** The longest a started frame may take: {@code rds4j.tcp.frame.timeout}. */
    public static final Setting<Duration> FRAME_TIMEOUT = Setting.ofDuration("frameTimeout",
        "rds4j.tcp.frame.timeout", Duration.ofSeconds(10), Setting.positiveDuration());
    /** Zero-copy send ring per connection: {@code rds4j.tcp.send.ring}. */
    public static final Setting<Integer> TCP_SEND_RING_BYTES = Setting.ofSize("tcpSendRingBytes", "rds4j.tcp.send.ring",
        DEFAULT_TCP_SEND_RING_BYTES, v -> v != 0 && (v < MIN_TCP_SEND_RING_BYTES || v > MAX_TCP_SEND_RING_BYTES) ?
            "must be 0 or " + MIN_TCP_SEND_RING_BYTES + ".." + MAX_TCP_SEND_RING_BYTES : null);
    /** Every setting declared here, for documentation and tests. */
    public static final List<Setting<?>> SETTINGS =
        List.of(TCP_PORT, KEEP_ALIVE_IDLE, KEEP_ALIVE_INTERVAL, KEEP_ALIVE_COUNT, FRAME_TIMEOUT, TCP_SEND_RING_BYTES);

    private final int tcpPort;
    private final Duration keepAliveIdle;
    private final Duration keepAliveInterval;
    private final int keepAliveCount;
    private final Duration frameTimeout;
    private final int tcpSendRingBytes;

    private TcpConfig(final Builder b)
    {
        final SettingSource source = b.settingSource;
        tcpPort = TCP_PORT.resolve(b.tcpPort, source);
        keepAliveIdle = KEEP_ALIVE_IDLE.resolve(b.keepAliveIdle, source);
        keepAliveInterval = KEEP_ALIVE_INTERVAL.resolve(b.keepAliveInterval, source);
        keepAliveCount = KEEP_ALIVE_COUNT.resolve(b.keepAliveCount, source);
        frameTimeout = FRAME_TIMEOUT.resolve(b.frameTimeout, source);
        tcpSendRingBytes = TCP_SEND_RING_BYTES.resolve(b.tcpSendRingBytes, source);
    }

    /**
     * @param config a stack's configuration.
     * @return the TCP config it was given, else one read from its {@link RdsStackConfig#settingSource()}.
     */
    public static TcpConfig of(final RdsStackConfig config)
    {
        final TcpConfig given = config.transportConfig(TcpConfig.class);
        return given != null ? given : builder(config.settingSource()).build();
    }

    /** @return a builder whose unset values are read from the system properties, environment, defaults. */
    public static Builder builder()
    {
        return builder(SettingSource.system());
    }

    /**
     * @param source where {@link Builder#build()} reads the values it was not given.
     * @return a builder.
     */
    public static Builder builder(final SettingSource source)
    {
        return new Builder(Objects.requireNonNull(source, "source"));
    }

    /** @return TCP port RDS over TCP listens on and connects to. Default 16385. */
    public int tcpPort()
    {
        return tcpPort;
    }

    /** @return TCP keepalive idle time before the first probe. Default 5 s, as kernel RDS over TCP. */
    public Duration keepAliveIdle()
    {
        return keepAliveIdle;
    }

    /** @return TCP keepalive interval between probes. Default 5 s. */
    public Duration keepAliveInterval()
    {
        return keepAliveInterval;
    }

    /** @return TCP keepalive probes unanswered before the connection is dropped. Default 5. */
    public int keepAliveCount()
    {
        return keepAliveCount;
    }

    /**
     * @return the longest a frame may take to arrive once its first byte has: a peer that starts a frame and
     *         stalls (slowloris) is dropped after it ({@code conn_frame_timeout}). Default 10 s.
     */
    public Duration frameTimeout()
    {
        return frameTimeout;
    }

    /**
     * @return bytes of shared memory (on {@code /dev/shm}) per TCP connection in which frames are staged so that
     *         the socket sends them with {@code sendfile}, without copying them into the kernel; 0: always copy.
     *         A connection takes the memory once it has copied a quarter of it in writes of 4 KiB or more (bulk
     *         traffic). Default 2 MiB.
     */
    public int tcpSendRingBytes()
    {
        return tcpSendRingBytes;
    }

    @Override
    public String toString()
    {
        return "TcpConfig{tcpPort=" + tcpPort + ", keepAlive=" + keepAliveIdle + "/" + keepAliveInterval + "x" +
            keepAliveCount + ", frameTimeout=" + frameTimeout + ", tcpSendRingBytes=" + tcpSendRingBytes + "}";
    }

    private static String wholeSecondProblem(final Duration value)
    {
        return value.toSeconds() < 1 ? "must be at least 1 s (TCP counts seconds)" : null;
    }

    /** Builds a {@link TcpConfig}; each setter checks its argument and throws on a bad one. */
    public static final class Builder
    {
        private final SettingSource settingSource;
        private Integer tcpPort;
        private Duration keepAliveIdle;
        private Duration keepAliveInterval;
        private Integer keepAliveCount;
        private Duration frameTimeout;
        private Integer tcpSendRingBytes;

        private Builder(final SettingSource settingSource)
        {
            this.settingSource = settingSource;
        }

        /**
         * @param port 1..65535.
         * @return this builder.
         */
        public Builder tcpPort(final int port)
        {
            this.tcpPort = TCP_PORT.check(port);
            return this;
        }

        /**
         * @param idle     time before the first probe, at least 1 s.
         * @param interval time between probes, at least 1 s.
         * @param count    probes before the connection is dropped, positive.
         * @return this builder.
         */
        public Builder keepAlive(final Duration idle, final Duration interval, final int count)
        {
            this.keepAliveIdle = KEEP_ALIVE_IDLE.check(idle);
            this.keepAliveInterval = KEEP_ALIVE_INTERVAL.check(interval);
            this.keepAliveCount = KEEP_ALIVE_COUNT.check(count);
            return this;
        }

        /**
         * @param timeout how long a frame may take once started, positive; a stalled frame drops the connection.
         * @return this builder.
         */
        public Builder frameTimeout(final Duration timeout)
        {
            this.frameTimeout = FRAME_TIMEOUT.check(timeout);
            return this;
        }

        /**
         * @param bytes shared memory per TCP connection for zero-copy sends: 0 (frames are always copied into the
         *              socket) or {@value #MIN_TCP_SEND_RING_BYTES} to {@value #MAX_TCP_SEND_RING_BYTES} (default
         *              {@value #DEFAULT_TCP_SEND_RING_BYTES}).
         * @return this builder.
         */
        public Builder tcpSendRingBytes(final int bytes)
        {
            this.tcpSendRingBytes = TCP_SEND_RING_BYTES.check(bytes);
            return this;
        }

        /**
         * @return the configuration: values not set read from the source, else the defaults.
         * @throws IllegalArgumentException naming the property or environment variable whose value is malformed
         *                                  or out of range.
         */
        public TcpConfig build()
        {
            return new TcpConfig(this);
        }
    }
}
