package org.rds4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The configuration of a stack: immutable, built with {@link #builder()}. Every value has a default that
 * works on a single machine; the README's configuration table lists units and ranges.
 */
public final class RdsStackConfig
{
    /** TCP port of RDS over TCP, as in the kernel. */
    public static final int DEFAULT_TCP_PORT = 16385;
    /** Send buffers per IB connection by default, as kernel RDS. */
    public static final int DEFAULT_IB_SEND_RING = 256;
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
    /** Receive buffers per IB connection by default, as kernel RDS. */
    public static final int DEFAULT_IB_RECEIVE_RING = 1024;
    /** Fewest buffers in an IB ring: a credit is held back for updates, and a congestion map takes 3 fragments. */
    public static final int MIN_IB_RING = 8;
    /** Most buffers in an IB ring (16 MiB of registered memory). */
    public static final int MAX_IB_RING = 4096;

    private final String name;
    private final int tcpPort;
    private final TransportType transport;
    private final int sendBufferBytes;
    private final int receiveBufferBytes;
    private final int socketQueueCapacity;
    private final String idleStrategy;
    private final Duration ackDelay;
    private final Duration reconnectDelayMin;
    private final Duration reconnectDelayMax;
    private final Duration connectTimeout;
    private final Duration keepAliveIdle;
    private final Duration keepAliveInterval;
    private final int keepAliveCount;
    private final Duration heartbeatInterval;
    private final Duration heartbeatTimeout;
    private final String infoDirectory;
    private final boolean infoFileEnabled;
    private final Duration frameTimeout;
    private final int maxPeers;
    private final int peerConnectRate;
    private final PeerAllowList allowedPeers;
    private final Threading threading;
    private final int ibSendRing;
    private final int tcpSendRingBytes;
    private final int ibReceiveRing;

    private RdsStackConfig(final Builder b)
    {
        name = b.name;
        tcpPort = b.tcpPort;
        transport = b.transport;
        sendBufferBytes = b.sendBufferBytes;
        receiveBufferBytes = b.receiveBufferBytes;
        socketQueueCapacity = b.socketQueueCapacity;
        idleStrategy = b.idleStrategy;
        ackDelay = b.ackDelay;
        reconnectDelayMin = b.reconnectDelayMin;
        reconnectDelayMax = b.reconnectDelayMax;
        connectTimeout = b.connectTimeout;
        keepAliveIdle = b.keepAliveIdle;
        keepAliveInterval = b.keepAliveInterval;
        keepAliveCount = b.keepAliveCount;
        heartbeatInterval = b.heartbeatInterval;
        heartbeatTimeout = b.heartbeatTimeout;
        infoDirectory = b.infoDirectory;
        infoFileEnabled = b.infoFileEnabled;
        frameTimeout = b.frameTimeout;
        ibSendRing = b.ibSendRing;
        tcpSendRingBytes = b.tcpSendRingBytes;
        ibReceiveRing = b.ibReceiveRing;
        maxPeers = b.maxPeers;
        peerConnectRate = b.peerConnectRate;
        allowedPeers = b.allowedPeers;
        threading = b.threading;
    }

    /** @return the defaults. */
    public static RdsStackConfig defaults()
    {
        return builder().build();
    }

    /** @return a builder holding the defaults. */
    public static Builder builder()
    {
        return new Builder();
    }

    /** @return a builder holding this configuration's values. */
    public Builder toBuilder()
    {
        final Builder b = new Builder();
        b.name = name;
        b.tcpPort = tcpPort;
        b.transport = transport;
        b.sendBufferBytes = sendBufferBytes;
        b.receiveBufferBytes = receiveBufferBytes;
        b.socketQueueCapacity = socketQueueCapacity;
        b.idleStrategy = idleStrategy;
        b.ackDelay = ackDelay;
        b.reconnectDelayMin = reconnectDelayMin;
        b.reconnectDelayMax = reconnectDelayMax;
        b.connectTimeout = connectTimeout;
        b.keepAliveIdle = keepAliveIdle;
        b.keepAliveInterval = keepAliveInterval;
        b.keepAliveCount = keepAliveCount;
        b.heartbeatInterval = heartbeatInterval;
        b.heartbeatTimeout = heartbeatTimeout;
        b.infoDirectory = infoDirectory;
        b.infoFileEnabled = infoFileEnabled;
        b.frameTimeout = frameTimeout;
        b.maxPeers = maxPeers;
        b.peerConnectRate = peerConnectRate;
        b.allowedPeers = allowedPeers;
        b.threading = threading;
        b.ibSendRing = ibSendRing;
        b.tcpSendRingBytes = tcpSendRingBytes;
        b.ibReceiveRing = ibReceiveRing;
        return b;
    }

    /** @return the stack's name, used in thread names and logs. Default {@code rds4j}. */
    public String name()
    {
        return name;
    }

    /** @return TCP port RDS over TCP listens on and connects to. Default 16385. */
    public int tcpPort()
    {
        return tcpPort;
    }

    /** @return the transport new sockets use unless they set {@link RdsOptions#RDS_TRANSPORT}. Default AUTO. */
    public TransportType transport()
    {
        return transport;
    }

    /** @return default {@link RdsOptions#SO_SNDBUF} in bytes. Default 1 MiB. */
    public int sendBufferBytes()
    {
        return sendBufferBytes;
    }

    /** @return default {@link RdsOptions#SO_RCVBUF} in bytes. Default 1 MiB. */
    public int receiveBufferBytes()
    {
        return receiveBufferBytes;
    }

    /**
     * @return messages a socket can hand to the stack's agent before it has taken them, a power of two.
     *         When full, a non-blocking send returns {@link RdsResult#EAGAIN}. Default 4096.
     */
    public int socketQueueCapacity()
    {
        return socketQueueCapacity;
    }

    /**
     * @return the agent's idle strategy: {@code backoff} (the default: spin, yield, then park 1 us doubling to
     *         100 ms, cut short by I/O, by application calls and by the stack's next timer), {@code sleep:<micros>}
     *         (park a fixed time, at least 1 us), {@code yield} or {@code spin} (burn a core).
     *         With {@link Threading#INVOKER}, how a thread waiting in a blocking call idles between duty cycles
     *         that found no work ({@link RdsStack#invoke()} itself never idles).
     */
    public String idleStrategy()
    {
        return idleStrategy;
    }

    /** @return how long a received message may wait for a piggybacked ack before an ack-only frame goes. Default 1 ms. */
    public Duration ackDelay()
    {
        return ackDelay;
    }

    /** @return the first bound of the randomised reconnect backoff. Default 1 ms. */
    public Duration reconnectDelayMin()
    {
        return reconnectDelayMin;
    }

    /** @return the largest bound of the randomised reconnect backoff. Default 1 s. */
    public Duration reconnectDelayMax()
    {
        return reconnectDelayMax;
    }

    /** @return how long a transport connect may take before it counts as failed. Default 5 s. */
    public Duration connectTimeout()
    {
        return connectTimeout;
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
     * @return how long an up connection may receive nothing before it sends a heartbeat probe, which any RDS
     *         peer answers with a pong. Default 1 s.
     */
    public Duration heartbeatInterval()
    {
        return heartbeatInterval;
    }

    /**
     * @return how long an up connection may receive nothing at all before it is dropped as dead (a peer host
     *         gone silent, a half-open connection, a frozen process); it then reconnects with backoff.
     *         Default 10 s.
     */
    public Duration heartbeatTimeout()
    {
        return heartbeatTimeout;
    }

    /**
     * @return the directory of the stack's info file ({@code <pid>-<name>-<n>.rds4j}, about 300 KiB, created
     *         when the stack opens and deleted when it closes), which {@code rds info} reads from outside the
     *         process. Default: the system property {@code rds4j.info.dir} if set, else
     *         {@code /dev/shm/rds4j-<user.name>} when {@code /dev/shm} is a writable directory, else
     *         {@code <java.io.tmpdir>/rds4j-<user.name>}; created if missing.
     */
    public String infoDirectory()
    {
        return infoDirectory;
    }

    /**
     * @return whether the stack publishes its counters, connections and sockets in an info file in
     *         {@link #infoDirectory()} (snapshots at most every 100 ms). Default true; a file that cannot be
     *         created is logged and the stack runs without one.
     */
    public boolean infoFileEnabled()
    {
        return infoFileEnabled;
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
     * @return the most peer connections (pairs of local and remote address, up or down) the stack keeps; a
     *         connection accepted from a new peer beyond it is refused ({@code conn_refused_limit}), so a flood
     *         from many addresses cannot grow memory without bound. Connections the stack's own sends open are
     *         never refused but count. Default 256.
     */
    public int maxPeers()
    {
        return maxPeers;
    }

    /**
     * @return the most TCP connections per second the stack accepts from one address; beyond it that address
     *         is refused for 10 s ({@code conn_refused_rate}). Honest peers connect a few times a second at
     *         most, when reconnecting. Default 20.
     */
    public int peerConnectRate()
    {
        return peerConnectRate;
    }

    /**
     * @return the peers the stack talks to; empty (the default) allows everyone. Connections from other
     *         addresses are refused ({@code conn_refused_not_allowed}), none are made to them, and a send to one
     *         returns {@link RdsResult#EACCES}.
     */
    public PeerAllowList allowedPeers()
    {
        return allowedPeers;
    }

    /**
     * @return who runs the stack's duty cycle: {@link Threading#AGENT} (the default: the stack's own agent
     *         thread) or {@link Threading#INVOKER} (application threads, through {@link RdsStack#invoke()} and
     *         the calls that wait).
     */
    public Threading threading()
    {
        return threading;
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

    /** @return 4 KiB send buffers (work requests) per IB connection. */
    public int ibSendRing()
    {
        return ibSendRing;
    }

    /** @return 4 KiB receive buffers per IB connection: the initial credits the peer gets. */
    public int ibReceiveRing()
    {
        return ibReceiveRing;
    }

    @Override
    public String toString()
    {
        return "RdsStackConfig{name=" + name + ", tcpPort=" + tcpPort + ", transport=" + transport +
            ", sendBufferBytes=" + sendBufferBytes + ", receiveBufferBytes=" + receiveBufferBytes +
            ", socketQueueCapacity=" + socketQueueCapacity + ", idleStrategy=" + idleStrategy +
            ", ackDelay=" + ackDelay + ", reconnectDelayMin=" + reconnectDelayMin +
            ", reconnectDelayMax=" + reconnectDelayMax + ", connectTimeout=" + connectTimeout +
            ", keepAlive=" + keepAliveIdle + "/" + keepAliveInterval + "x" + keepAliveCount +
            ", heartbeat=" + heartbeatInterval + "/" + heartbeatTimeout +
            ", infoFile=" + (infoFileEnabled ? infoDirectory : "off") + ", frameTimeout=" + frameTimeout +
            ", maxPeers=" + maxPeers + ", peerConnectRate=" + peerConnectRate + ", allowedPeers=" + allowedPeers +
            ", threading=" + threading +
            ", tcpSendRingBytes=" + tcpSendRingBytes + ", ibSendRing=" + ibSendRing + ", ibReceiveRing=" + ibReceiveRing + "}";
    }

    /** Builds a {@link RdsStackConfig}; each setter checks its argument and throws on a bad one. */
    public static final class Builder
    {
        private String name = "rds4j";
        private int tcpPort = DEFAULT_TCP_PORT;
        private TransportType transport = TransportType.AUTO;
        private int sendBufferBytes = 1 << 20;
        private int receiveBufferBytes = 1 << 20;
        private int socketQueueCapacity = 4096;
        private String idleStrategy = "backoff";
        private Duration ackDelay = Duration.ofMillis(1);
        private Duration reconnectDelayMin = Duration.ofMillis(1);
        private Duration reconnectDelayMax = Duration.ofSeconds(1);
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration keepAliveIdle = Duration.ofSeconds(5);
        private Duration keepAliveInterval = Duration.ofSeconds(5);
        private int keepAliveCount = 5;
        private Duration heartbeatInterval = Duration.ofSeconds(1);
        private Duration heartbeatTimeout = Duration.ofSeconds(10);
        private String infoDirectory = defaultInfoDirectory();
        private boolean infoFileEnabled = true;
        private Duration frameTimeout = Duration.ofSeconds(10);
        private int maxPeers = 256;
        private int peerConnectRate = 20;
        private PeerAllowList allowedPeers = PeerAllowList.ALL;
        private Threading threading = Threading.AGENT;
        private int ibSendRing = DEFAULT_IB_SEND_RING;
        private int tcpSendRingBytes = DEFAULT_TCP_SEND_RING_BYTES;
        private int ibReceiveRing = DEFAULT_IB_RECEIVE_RING;

        private Builder()
        {
        }

        /**
         * @param name used in thread names and logs.
         * @return this builder.
         */
        public Builder name(final String name)
        {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * @param port 1..65535.
         * @return this builder.
         */
        public Builder tcpPort(final int port)
        {
            if (port < 1 || port > 65535)
            {
                throw new IllegalArgumentException("tcpPort must be 1..65535: " + port);
            }
            this.tcpPort = port;
            return this;
        }

        /**
         * @param transport default transport of new sockets.
         * @return this builder.
         */
        public Builder transport(final TransportType transport)
        {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /**
         * @param bytes positive.
         * @return this builder.
         */
        public Builder sendBufferBytes(final int bytes)
        {
            this.sendBufferBytes = positive("sendBufferBytes", bytes);
            return this;
        }

        /**
         * @param bytes positive.
         * @return this builder.
         */
        public Builder receiveBufferBytes(final int bytes)
        {
            this.receiveBufferBytes = positive("receiveBufferBytes", bytes);
            return this;
        }

        /**
         * @param capacity a power of two, at least 2.
         * @return this builder.
         */
        public Builder socketQueueCapacity(final int capacity)
        {
            if (capacity < 2 || Integer.bitCount(capacity) != 1)
            {
                throw new IllegalArgumentException("socketQueueCapacity must be a power of two >= 2: " + capacity);
            }
            this.socketQueueCapacity = capacity;
            return this;
        }

        /**
         * @param spec {@code backoff}, {@code sleep:<micros>}, {@code yield} or {@code spin}.
         * @return this builder.
         */
        public Builder idleStrategy(final String spec)
        {
            Objects.requireNonNull(spec, "idleStrategy");
            if (!spec.equals("backoff") && !spec.equals("yield") && !spec.equals("spin") && !spec.matches("sleep:[1-9][0-9]*"))
            {
                throw new IllegalArgumentException("idleStrategy must be backoff, sleep:<micros>, yield or spin: " + spec);
            }
            this.idleStrategy = spec;
            return this;
        }

        /**
         * @param delay not negative.
         * @return this builder.
         */
        public Builder ackDelay(final Duration delay)
        {
            this.ackDelay = notNegative("ackDelay", delay);
            return this;
        }

        /**
         * @param min first backoff bound, positive.
         * @param max largest backoff bound, at least {@code min}.
         * @return this builder.
         */
        public Builder reconnectDelay(final Duration min, final Duration max)
        {
            notNegative("reconnectDelayMin", min);
            notNegative("reconnectDelayMax", max);
            if (min.isZero() || max.compareTo(min) < 0)
            {
                throw new IllegalArgumentException("need 0 < reconnectDelayMin <= reconnectDelayMax: " + min + ", " + max);
            }
            this.reconnectDelayMin = min;
            this.reconnectDelayMax = max;
            return this;
        }

        /**
         * @param timeout positive.
         * @return this builder.
         */
        public Builder connectTimeout(final Duration timeout)
        {
            this.connectTimeout = positive("connectTimeout", timeout);
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
            if (idle.toSeconds() < 1 || interval.toSeconds() < 1)
            {
                throw new IllegalArgumentException("keepalive idle and interval must be at least 1 s (TCP counts seconds)");
            }
            this.keepAliveIdle = idle;
            this.keepAliveInterval = interval;
            this.keepAliveCount = positive("keepAliveCount", count);
            return this;
        }

        /**
         * @param interval receive silence after which a connection sends a heartbeat probe; positive.
         * @param timeout  receive silence after which a connection is dropped; more than {@code interval}
         *                 (at least twice is sensible, so one lost heartbeat does not drop it).
         * @return this builder.
         */
        public Builder heartbeat(final Duration interval, final Duration timeout)
        {
            positive("heartbeatInterval", interval);
            positive("heartbeatTimeout", timeout);
            if (timeout.compareTo(interval) <= 0)
            {
                throw new IllegalArgumentException("heartbeatTimeout must exceed heartbeatInterval: " + interval + ", " + timeout);
            }
            this.heartbeatInterval = interval;
            this.heartbeatTimeout = timeout;
            return this;
        }

        /**
         * @param directory where the stack's info file goes (created if missing); see
         *                  {@link RdsStackConfig#infoDirectory()} for the default.
         * @return this builder.
         */
        public Builder infoDirectory(final String directory)
        {
            Objects.requireNonNull(directory, "infoDirectory");
            if (directory.isBlank())
            {
                throw new IllegalArgumentException("infoDirectory must not be blank");
            }
            this.infoDirectory = directory;
            return this;
        }

        /**
         * @param enabled whether the stack publishes an info file for {@code rds info}; default true.
         * @return this builder.
         */
        public Builder infoFile(final boolean enabled)
        {
            this.infoFileEnabled = enabled;
            return this;
        }

        /**
         * @param timeout how long a frame may take once started, positive; a stalled frame drops the connection.
         * @return this builder.
         */
        public Builder frameTimeout(final Duration timeout)
        {
            this.frameTimeout = positive("frameTimeout", timeout);
            return this;
        }

        /**
         * @param peers the most peer connections the stack keeps, positive.
         * @return this builder.
         */
        public Builder maxPeers(final int peers)
        {
            this.maxPeers = positive("maxPeers", peers);
            return this;
        }

        /**
         * @param perSecond the most connections accepted per second from one address, positive.
         * @return this builder.
         */
        public Builder peerConnectRate(final int perSecond)
        {
            this.peerConnectRate = positive("peerConnectRate", perSecond);
            return this;
        }

        /**
         * @param entries IPv4 and IPv6 addresses and CIDR blocks ({@code 10.0.0.0/24}, {@code fd00::/64}); none
         *                (the default) allows every peer. See {@link PeerAllowList}.
         * @return this builder.
         * @throws IllegalArgumentException naming a bad entry.
         */
        public Builder allowedPeers(final String... entries)
        {
            this.allowedPeers = PeerAllowList.of(entries);
            return this;
        }

        /**
         * @param threading {@link Threading#AGENT} (the default: the stack runs its own agent thread) or
         *                  {@link Threading#INVOKER} (no thread: the application drives the stack with
         *                  {@link RdsStack#invoke()} and with its blocking calls).
         * @return this builder.
         */
        public Builder threading(final Threading threading)
        {
            this.threading = Objects.requireNonNull(threading, "threading");
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
            if (bytes != 0 && (bytes < MIN_TCP_SEND_RING_BYTES || bytes > MAX_TCP_SEND_RING_BYTES))
            {
                throw new IllegalArgumentException("tcpSendRingBytes must be 0 or " + MIN_TCP_SEND_RING_BYTES + ".." +
                    MAX_TCP_SEND_RING_BYTES + ": " + bytes);
            }
            this.tcpSendRingBytes = bytes;
            return this;
        }

        /**
         * @param slots 4 KiB send buffers per IB connection, {@value #MIN_IB_RING}..{@value #MAX_IB_RING}
         *              (default {@value #DEFAULT_IB_SEND_RING}, as kernel RDS).
         * @return this builder.
         */
        public Builder ibSendRing(final int slots)
        {
            this.ibSendRing = ringSize("ibSendRing", slots);
            return this;
        }

        /**
         * @param slots 4 KiB receive buffers per IB connection, {@value #MIN_IB_RING}..{@value #MAX_IB_RING}
         *              (default {@value #DEFAULT_IB_RECEIVE_RING}, as kernel RDS); the peer's initial credits.
         * @return this builder.
         */
        public Builder ibReceiveRing(final int slots)
        {
            this.ibReceiveRing = ringSize("ibReceiveRing", slots);
            return this;
        }

        private static int ringSize(final String what, final int slots)
        {
            if (slots < MIN_IB_RING || slots > MAX_IB_RING)
            {
                throw new IllegalArgumentException(what + " must be " + MIN_IB_RING + ".." + MAX_IB_RING +
                    " buffers: " + slots);
            }
            return slots;
        }

        /** @return the configuration. */
        public RdsStackConfig build()
        {
            return new RdsStackConfig(this);
        }

        /** The default info directory: {@code rds4j.info.dir}, else per user under /dev/shm, else under the temp dir. */
        private static String defaultInfoDirectory()
        {
            final String property = System.getProperty("rds4j.info.dir");
            if (property != null && !property.isBlank())
            {
                return property;
            }
            // the user name goes into a path: keep it to characters that are safe in one
            final String user = System.getProperty("user.name", "unknown").replaceAll("[^A-Za-z0-9._-]", "_");
            final Path shm = Path.of("/dev/shm");
            if (Files.isDirectory(shm) && Files.isWritable(shm))
            {
                return shm.resolve("rds4j-" + user).toString();
            }
            return Path.of(System.getProperty("java.io.tmpdir"), "rds4j-" + user).toString();
        }

        private static int positive(final String what, final int value)
        {
            if (value <= 0)
            {
                throw new IllegalArgumentException(what + " must be positive: " + value);
            }
            return value;
        }

        private static Duration positive(final String what, final Duration value)
        {
            if (notNegative(what, value).isZero())
            {
                throw new IllegalArgumentException(what + " must be positive: " + value);
            }
            return value;
        }

        private static Duration notNegative(final String what, final Duration value)
        {
            Objects.requireNonNull(value, what);
            if (value.isNegative())
            {
                throw new IllegalArgumentException(what + " must not be negative: " + value);
            }
            return value;
        }
    }
}
