package org.rds4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The configuration of a stack: immutable, built with {@link #builder()}. Every value has a default that
 * works on a single machine. Each setting is declared once, as a {@link Setting} constant below (its property,
 * environment variable, default and accepted values); a value the builder was not given is read, when
 * {@link Builder#build()} runs, from the {@code rds4j.*} system property, else the {@code RDS4J_*} environment
 * variable, else the default ({@link #builder(SettingSource)} reads another source). A transport's own settings
 * (TCP's port, IB's rings) live in its module, as a {@link TransportConfig} handed over with
 * {@link Builder#transportConfig(TransportConfig)} or read by the transport from {@link #settingSource()}.
 * {@code docs/configuration.md} lists them all.
 */
public final class RdsStackConfig
{
    /** The stack's name: {@code rds4j.name}. */
    public static final Setting<String> NAME = Setting.of("name", "rds4j.name", text -> text, () -> "rds4j", v -> null);
    /** Default transport of new sockets: {@code rds4j.transport}. */
    public static final Setting<TransportType> TRANSPORT =
        Setting.ofEnum("transport", "rds4j.transport", TransportType.class, TransportType.AUTO);
    /** Default send buffer: {@code rds4j.send.buffer}. */
    public static final Setting<Integer> SEND_BUFFER_BYTES =
        Setting.ofSize("sendBufferBytes", "rds4j.send.buffer", 1 << 20, Setting.atLeast(1));
    /** Default receive buffer: {@code rds4j.receive.buffer}. */
    public static final Setting<Integer> RECEIVE_BUFFER_BYTES =
        Setting.ofSize("receiveBufferBytes", "rds4j.receive.buffer", 1 << 20, Setting.atLeast(1));
    /**
     * The largest {@code SO_SNDBUF} or {@code SO_RCVBUF} a socket may have: {@code rds4j.socket.buffer.max}. Larger
     * values are lowered to it, as Linux lowers them to {@code net.core.wmem_max} and {@code rmem_max}. Through a
     * driver, the driver's own bounds its clients' sockets.
     */
    public static final Setting<Integer> MAX_SOCKET_BUFFER_BYTES =
        Setting.ofSize("maxSocketBufferBytes", "rds4j.socket.buffer.max", 64 << 20, Setting.atLeast(1));
    /** Size of a socket's receive ring: {@code rds4j.receive.ring}. */
    public static final Setting<Integer> RECEIVE_RING_BYTES = Setting.ofSize("receiveRingBytes", "rds4j.receive.ring",
        256 << 10, v -> v < 4096 || Integer.bitCount(v) != 1 ? "must be a power of two >= 4096" : null);
    /** Each socket's send ring, the shared memory its messages are written into: {@code rds4j.send.ring}. */
    public static final Setting<Integer> SEND_RING_BYTES = Setting.ofSize("sendRingBytes", "rds4j.send.ring",
        2 << 20, v -> v < 4096 || Integer.bitCount(v) != 1 ? "must be a power of two >= 4096" : null);
    /** Socket-to-agent queue capacity: {@code rds4j.socket.queue.capacity}. */
    public static final Setting<Integer> SOCKET_QUEUE_CAPACITY = Setting.ofInt("socketQueueCapacity",
        "rds4j.socket.queue.capacity", 4096,
        v -> v < 2 || Integer.bitCount(v) != 1 ? "must be a power of two >= 2" : null);
    /** The agent's idle strategy: {@code rds4j.idle.strategy}. */
    public static final Setting<String> IDLE_STRATEGY = Setting.of("idleStrategy", "rds4j.idle.strategy",
        text -> text, () -> "backoff", RdsStackConfig::idleStrategyProblem);
    /** Delayed-ack time: {@code rds4j.ack.delay}. */
    public static final Setting<Duration> ACK_DELAY =
        Setting.ofDuration("ackDelay", "rds4j.ack.delay", Duration.ofMillis(1), Setting.notNegativeDuration());
    /** First reconnect backoff bound: {@code rds4j.reconnect.delay.min}. */
    public static final Setting<Duration> RECONNECT_DELAY_MIN = Setting.ofDuration("reconnectDelayMin",
        "rds4j.reconnect.delay.min", Duration.ofMillis(1), Setting.notNegativeDuration());
    /** Largest reconnect backoff bound: {@code rds4j.reconnect.delay.max}. */
    public static final Setting<Duration> RECONNECT_DELAY_MAX = Setting.ofDuration("reconnectDelayMax",
        "rds4j.reconnect.delay.max", Duration.ofSeconds(1), Setting.notNegativeDuration());
    /** Transport connect timeout: {@code rds4j.connect.timeout}. */
    public static final Setting<Duration> CONNECT_TIMEOUT = Setting.ofDuration("connectTimeout",
        "rds4j.connect.timeout", Duration.ofSeconds(5), Setting.positiveDuration());
    /** Receive silence before a heartbeat probe: {@code rds4j.heartbeat.interval}. */
    public static final Setting<Duration> HEARTBEAT_INTERVAL = Setting.ofDuration("heartbeatInterval",
        "rds4j.heartbeat.interval", Duration.ofSeconds(1), Setting.positiveDuration());
    /** Receive silence before a connection is dropped: {@code rds4j.heartbeat.timeout}. */
    public static final Setting<Duration> HEARTBEAT_TIMEOUT = Setting.ofDuration("heartbeatTimeout",
        "rds4j.heartbeat.timeout", Duration.ofSeconds(10), Setting.positiveDuration());
    /** Directory of the info file: {@code rds4j.info.dir}. */
    public static final Setting<String> INFO_DIRECTORY = Setting.of("infoDirectory", "rds4j.info.dir",
        text -> text, RdsStackConfig::defaultInfoDirectory, v -> v.isBlank() ? "must not be blank" : null);
    /** Whether the stack publishes an info file: {@code rds4j.info.file}. */
    public static final Setting<Boolean> INFO_FILE = Setting.ofBoolean("infoFile", "rds4j.info.file", true);
    /** The most peer connections: {@code rds4j.max.peers}. */
    public static final Setting<Integer> MAX_PEERS =
        Setting.ofInt("maxPeers", "rds4j.max.peers", 256, Setting.atLeast(1));
    /** The most connections per second of one node pair: {@code rds4j.peer.connect.rate}. */
    public static final Setting<Integer> PEER_CONNECT_RATE =
        Setting.ofInt("peerConnectRate", "rds4j.peer.connect.rate", 20, Setting.atLeast(1));
    /** The peers allowed, comma-separated addresses and CIDR blocks: {@code rds4j.allowed.peers}. */
    public static final Setting<PeerAllowList> ALLOWED_PEERS = Setting.of("allowedPeers", "rds4j.allowed.peers",
        text -> PeerAllowList.of(Arrays.stream(text.split(",")).map(String::trim).filter(s -> !s.isEmpty())
            .toArray(String[]::new)), () -> PeerAllowList.ALL, v -> null);
    /**
     * The directory of a driver to attach to instead of running a stack in this process: {@code rds4j.driver.dir};
     * empty (the default) runs the stack embedded.
     */
    public static final Setting<String> DRIVER_DIRECTORY = Setting.of("driverDirectory", "rds4j.driver.dir",
        text -> text, () -> "", v -> null);
    /**
     * How often a driver publishes its heartbeat, which its clients watch: a {@link #DRIVER_TIMEOUT} must exceed
     * it.
     */
    public static final Duration DRIVER_HEARTBEAT_PERIOD = Duration.ofMillis(100);
    /**
     * How long a client lets its driver's heartbeat stand still before it takes the driver as stopped or hung:
     * {@code rds4j.driver.timeout}.
     */
    public static final Setting<Duration> DRIVER_TIMEOUT = Setting.ofDuration("driverTimeout", "rds4j.driver.timeout",
        Duration.ofSeconds(10), RdsStackConfig::driverTimeoutProblem);
    /** Who runs the duty cycle: {@code rds4j.threading}. */
    public static final Setting<Threading> THREADING =
        Setting.ofEnum("threading", "rds4j.threading", Threading.class, Threading.AGENT);
    /** Every setting declared here, for documentation and tests. */
    public static final List<Setting<?>> SETTINGS = List.of(NAME, TRANSPORT, SEND_BUFFER_BYTES, RECEIVE_BUFFER_BYTES,
        MAX_SOCKET_BUFFER_BYTES, RECEIVE_RING_BYTES, SEND_RING_BYTES, SOCKET_QUEUE_CAPACITY, IDLE_STRATEGY, ACK_DELAY, RECONNECT_DELAY_MIN, RECONNECT_DELAY_MAX, CONNECT_TIMEOUT,
        HEARTBEAT_INTERVAL, HEARTBEAT_TIMEOUT, INFO_DIRECTORY, INFO_FILE, MAX_PEERS, PEER_CONNECT_RATE, ALLOWED_PEERS,
        THREADING, DRIVER_DIRECTORY, DRIVER_TIMEOUT);

    private final SettingSource settingSource;
    private final String name;
    private final TransportType transport;
    private final int sendBufferBytes;
    private final int receiveBufferBytes;
    private final int maxSocketBufferBytes;
    private final int receiveRingBytes;
    private final int sendRingBytes;
    private final int socketQueueCapacity;
    private final String idleStrategy;
    private final Duration ackDelay;
    private final Duration reconnectDelayMin;
    private final Duration reconnectDelayMax;
    private final Duration connectTimeout;
    private final Duration heartbeatInterval;
    private final Duration heartbeatTimeout;
    private final String infoDirectory;
    private final boolean infoFileEnabled;
    private final int maxPeers;
    private final int peerConnectRate;
    private final PeerAllowList allowedPeers;
    private final Threading threading;
    private final String driverDirectory;
    private final Duration driverTimeout;
    private final Map<Class<?>, TransportConfig> transportConfigs;

    private RdsStackConfig(final Builder b)
    {
        final SettingSource source = b.settingSource;
        settingSource = source;
        name = NAME.resolve(b.name, source);
        transport = TRANSPORT.resolve(b.transport, source);
        sendBufferBytes = SEND_BUFFER_BYTES.resolve(b.sendBufferBytes, source);
        receiveBufferBytes = RECEIVE_BUFFER_BYTES.resolve(b.receiveBufferBytes, source);
        maxSocketBufferBytes = MAX_SOCKET_BUFFER_BYTES.resolve(b.maxSocketBufferBytes, source);
        receiveRingBytes = RECEIVE_RING_BYTES.resolve(b.receiveRingBytes, source);
        sendRingBytes = SEND_RING_BYTES.resolve(b.sendRingBytes, source);
        socketQueueCapacity = SOCKET_QUEUE_CAPACITY.resolve(b.socketQueueCapacity, source);
        idleStrategy = IDLE_STRATEGY.resolve(b.idleStrategy, source);
        ackDelay = ACK_DELAY.resolve(b.ackDelay, source);
        reconnectDelayMin = RECONNECT_DELAY_MIN.resolve(b.reconnectDelayMin, source);
        reconnectDelayMax = RECONNECT_DELAY_MAX.resolve(b.reconnectDelayMax, source);
        connectTimeout = CONNECT_TIMEOUT.resolve(b.connectTimeout, source);
        heartbeatInterval = HEARTBEAT_INTERVAL.resolve(b.heartbeatInterval, source);
        heartbeatTimeout = HEARTBEAT_TIMEOUT.resolve(b.heartbeatTimeout, source);
        infoDirectory = INFO_DIRECTORY.resolve(b.infoDirectory, source);
        infoFileEnabled = INFO_FILE.resolve(b.infoFileEnabled, source);
        maxPeers = MAX_PEERS.resolve(b.maxPeers, source);
        peerConnectRate = PEER_CONNECT_RATE.resolve(b.peerConnectRate, source);
        allowedPeers = ALLOWED_PEERS.resolve(b.allowedPeers, source);
        threading = THREADING.resolve(b.threading, source);
        driverDirectory = DRIVER_DIRECTORY.resolve(b.driverDirectory, source);
        driverTimeout = DRIVER_TIMEOUT.resolve(b.driverTimeout, source);
        transportConfigs = Map.copyOf(b.transportConfigs);
        // settings that may come from different places are checked together once, here
        checkReconnectDelay(reconnectDelayMin, reconnectDelayMax);
        checkHeartbeat(heartbeatInterval, heartbeatTimeout);
        checkBufferDefault("sendBufferBytes", sendBufferBytes, maxSocketBufferBytes);
        checkBufferDefault("receiveBufferBytes", receiveBufferBytes, maxSocketBufferBytes);
    }

    /** @return the defaults, with what the system properties and environment set. */
    public static RdsStackConfig defaults()
    {
        return builder().build();
    }

    /**
     * @return a builder whose unset values {@link Builder#build()} reads from the system properties, else the
     *         environment, else the defaults: {@code builder(SettingSource.system())}.
     */
    public static Builder builder()
    {
        return builder(SettingSource.system());
    }

    /**
     * @param source where {@link Builder#build()} reads the values it was not given ({@link SettingSource#none()}:
     *               the defaults only); also the source the transports read their settings from.
     * @return a builder.
     */
    public static Builder builder(final SettingSource source)
    {
        return new Builder(Objects.requireNonNull(source, "source"));
    }

    /** @return a builder holding this configuration's values and source. */
    public Builder toBuilder()
    {
        final Builder b = new Builder(settingSource);
        b.name = name;
        b.transport = transport;
        b.sendBufferBytes = sendBufferBytes;
        b.receiveBufferBytes = receiveBufferBytes;
        b.maxSocketBufferBytes = maxSocketBufferBytes;
        b.receiveRingBytes = receiveRingBytes;
        b.sendRingBytes = sendRingBytes;
        b.socketQueueCapacity = socketQueueCapacity;
        b.idleStrategy = idleStrategy;
        b.ackDelay = ackDelay;
        b.reconnectDelayMin = reconnectDelayMin;
        b.reconnectDelayMax = reconnectDelayMax;
        b.connectTimeout = connectTimeout;
        b.heartbeatInterval = heartbeatInterval;
        b.heartbeatTimeout = heartbeatTimeout;
        b.infoDirectory = infoDirectory;
        b.infoFileEnabled = infoFileEnabled;
        b.maxPeers = maxPeers;
        b.peerConnectRate = peerConnectRate;
        b.allowedPeers = allowedPeers;
        b.threading = threading;
        b.driverDirectory = driverDirectory;
        b.driverTimeout = driverTimeout;
        b.transportConfigs.putAll(transportConfigs);
        return b;
    }

    /** @return where this configuration's unset values were read from; transports read theirs from it too. */
    public SettingSource settingSource()
    {
        return settingSource;
    }

    /**
     * @param type a transport's config class.
     * @param <T>  that class.
     * @return the config of that class the builder was given, or null: the transport then reads its settings
     *         from {@link #settingSource()}.
     */
    public <T extends TransportConfig> T transportConfig(final Class<T> type)
    {
        return type.cast(transportConfigs.get(type));
    }

    /** @return the stack's name, used in thread names and logs. Default {@code rds4j}. */
    public String name()
    {
        return name;
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
     * @return the largest {@link RdsOptions#SO_SNDBUF} or {@link RdsOptions#SO_RCVBUF} a socket may have; larger
     *         values are lowered to it. Default 64 MiB.
     */
    public int maxSocketBufferBytes()
    {
        return maxSocketBufferBytes;
    }

    /**
     * @return the size of a socket's receive ring, a power of two: the shared memory (a file in
     *         {@link #infoDirectory()}, mapped when the socket first receives; direct memory if that directory is not
     *         tmpfs) where the stack writes each message
     *         it delivers. Messages larger than an eighth of it, and messages that arrive while it is full, wait
     *         outside it in the stack's own memory, in order. Default 256 KiB.
     */
    public int receiveRingBytes()
    {
        return receiveRingBytes;
    }

    /**
     * @return the size of each socket's send ring, the shared memory its messages are written into and sent from
     *         until acked (mapped at the socket's first send). Messages over an eighth of it, and those sent while
     *         it has no room, are held in the stack's memory instead. Default 2 MiB: room for a default send
     *         buffer (1 MiB) of 64-byte messages, each with its header in a 128-byte record.
     */
    public int sendRingBytes()
    {
        return sendRingBytes;
    }

    /**
     * @return messages a socket can hand to the stack's agent outside its send ring (those the ring has no room
     *         for, and claims until committed) before the agent has taken them, a power of two; also the most the
     *         agent takes from one socket per duty cycle. When full, a non-blocking send that needs a place returns
     *         {@link RdsResult#EAGAIN}. Default 4096.
     */
    public int socketQueueCapacity()
    {
        return socketQueueCapacity;
    }

    /**
     * @return the agent's idle strategy: {@code backoff} (the default: yield, then park 1 us doubling to
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
     *         process. Default: {@code /dev/shm/rds4j-<user.name>} when {@code /dev/shm} is a writable directory, else
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
     * @return the most peer connections (pairs of local and remote address, up or down) the stack keeps; a
     *         connection accepted from a new peer beyond it, over any transport, is refused
     *         ({@code conn_refused_limit}), so a flood
     *         from many addresses cannot grow memory without bound. Connections the stack's own sends open are
     *         never refused but count. Default 256.
     */
    public int maxPeers()
    {
        return maxPeers;
    }

    /**
     * @return the most connections per second the stack accepts for one node pair (local, remote address),
     *         over any transport; beyond it that pair is refused for 10 s ({@code conn_refused_rate}). Honest
     *         peers connect a few times a second at most, when reconnecting. Default 20.
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
     * @return the directory of the driver this stack attaches to ({@code rds driver}), or empty (the default): the
     *         stack runs in this process. Through a driver, sockets behave as embedded ones, the driver's own
     *         configuration rules the stack (transports, timers, allow-list) and this one only the sockets'
     *         defaults ({@code SO_SNDBUF}, {@code SO_RCVBUF}, the receive ring) and the stack's name.
     */
    public String driverDirectory()
    {
        return driverDirectory;
    }

    /**
     * @return how long this stack, attached to a driver, lets the driver's heartbeat stand still before it takes
     *         the driver as stopped (SIGSTOP) or hung: it then closes its connection, and every waiting and later
     *         call fails with {@link RdsResult#ECONNRESET}, as when the driver dies. More than the driver's
     *         heartbeat period ({@link #DRIVER_HEARTBEAT_PERIOD}). Default 10 s. Unused by an embedded stack.
     */
    public Duration driverTimeout()
    {
        return driverTimeout;
    }

    /** @return the default directory of a driver ({@code rds driver} with no {@code --dir}): per user, under {@code /dev/shm} where it exists. */
    public static String defaultDriverDirectory()
    {
        return Path.of(defaultInfoDirectory(), "driver").toString();
    }

    @Override
    public String toString()
    {
        return "RdsStackConfig{name=" + name + ", transport=" + transport +
            ", sendBufferBytes=" + sendBufferBytes + ", receiveBufferBytes=" + receiveBufferBytes +
            ", maxSocketBufferBytes=" + maxSocketBufferBytes + ", receiveRingBytes=" + receiveRingBytes + ", sendRingBytes=" + sendRingBytes + ", socketQueueCapacity=" + socketQueueCapacity + ", idleStrategy=" + idleStrategy +
            ", ackDelay=" + ackDelay + ", reconnectDelayMin=" + reconnectDelayMin +
            ", reconnectDelayMax=" + reconnectDelayMax + ", connectTimeout=" + connectTimeout +
            ", heartbeat=" + heartbeatInterval + "/" + heartbeatTimeout +
            ", infoFile=" + (infoFileEnabled ? infoDirectory : "off") +
            ", maxPeers=" + maxPeers + ", peerConnectRate=" + peerConnectRate + ", allowedPeers=" + allowedPeers +
            ", threading=" + threading + (driverDirectory.isEmpty() ? "" : ", driver=" + driverDirectory +
            ", driverTimeout=" + driverTimeout) +
            ", transportConfigs=" + transportConfigs.values() + "}";
    }

    private static void checkReconnectDelay(final Duration min, final Duration max)
    {
        if (min.isZero() || max.compareTo(min) < 0)
        {
            throw new IllegalArgumentException("need 0 < reconnectDelayMin <= reconnectDelayMax: " + min + ", " + max);
        }
    }

    private static void checkBufferDefault(final String name, final int bytes, final int maxBytes)
    {
        if (bytes > maxBytes)
        {
            throw new IllegalArgumentException(name + " must not exceed maxSocketBufferBytes: " + bytes + " > " + maxBytes);
        }
    }

    private static void checkHeartbeat(final Duration interval, final Duration timeout)
    {
        if (timeout.compareTo(interval) <= 0)
        {
            throw new IllegalArgumentException("heartbeatTimeout must exceed heartbeatInterval: " + interval + ", " + timeout);
        }
    }

    private static String driverTimeoutProblem(final Duration timeout)
    {
        final String problem = Setting.positiveDuration().problem(timeout);
        return problem != null || timeout.compareTo(DRIVER_HEARTBEAT_PERIOD) > 0 ? problem :
            "must exceed the driver's heartbeat period, " + DRIVER_HEARTBEAT_PERIOD.toMillis() + "ms";
    }

    private static String idleStrategyProblem(final String spec)
    {
        final boolean known = spec.equals("backoff") || spec.equals("yield") || spec.equals("spin") ||
            spec.matches("sleep:[1-9][0-9]*");
        return known ? null : "must be backoff, sleep:<micros>, yield or spin";
    }

    /** The default info directory: per user under /dev/shm, else under the temp dir. */
    private static String defaultInfoDirectory()
    {
        // the user name goes into a path: keep it to characters that are safe in one
        final String user = System.getProperty("user.name", "unknown").replaceAll("[^A-Za-z0-9._-]", "_");
        final Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm))
        {
            return shm.resolve("rds4j-" + user).toString();
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "rds4j-" + user).toString();
    }

    /**
     * Builds a {@link RdsStackConfig}; each setter checks its argument and throws on a bad one, and
     * {@link #build()} reads the values not set and checks the settings that depend on each other.
     */
    public static final class Builder
    {
        private final SettingSource settingSource;
        private final Map<Class<?>, TransportConfig> transportConfigs = new LinkedHashMap<>();
        private String name;
        private TransportType transport;
        private Integer sendBufferBytes;
        private Integer receiveBufferBytes;
        private Integer maxSocketBufferBytes;
        private Integer receiveRingBytes;
        private Integer sendRingBytes;
        private Integer socketQueueCapacity;
        private String idleStrategy;
        private Duration ackDelay;
        private Duration reconnectDelayMin;
        private Duration reconnectDelayMax;
        private Duration connectTimeout;
        private Duration heartbeatInterval;
        private Duration heartbeatTimeout;
        private String infoDirectory;
        private Boolean infoFileEnabled;
        private Integer maxPeers;
        private Integer peerConnectRate;
        private PeerAllowList allowedPeers;
        private Threading threading;
        private String driverDirectory;
        private Duration driverTimeout;

        private Builder(final SettingSource settingSource)
        {
            this.settingSource = settingSource;
        }

        /**
         * @param name used in thread names and logs.
         * @return this builder.
         */
        public Builder name(final String name)
        {
            this.name = NAME.check(name);
            return this;
        }

        /**
         * @param transport default transport of new sockets.
         * @return this builder.
         */
        public Builder transport(final TransportType transport)
        {
            this.transport = TRANSPORT.check(transport);
            return this;
        }

        /**
         * @param bytes positive.
         * @return this builder.
         */
        public Builder sendBufferBytes(final int bytes)
        {
            this.sendBufferBytes = SEND_BUFFER_BYTES.check(bytes);
            return this;
        }

        /**
         * @param bytes positive.
         * @return this builder.
         */
        public Builder receiveBufferBytes(final int bytes)
        {
            this.receiveBufferBytes = RECEIVE_BUFFER_BYTES.check(bytes);
            return this;
        }

        /**
         * @param bytes the largest {@code SO_SNDBUF} and {@code SO_RCVBUF} a socket may have, positive; larger
         *              values set on a socket are lowered to it. The default buffers must not exceed it.
         * @return this builder.
         */
        public Builder maxSocketBufferBytes(final int bytes)
        {
            this.maxSocketBufferBytes = MAX_SOCKET_BUFFER_BYTES.check(bytes);
            return this;
        }

        /**
         * @param bytes a power of two, at least 4096.
         * @return this builder.
         */
        public Builder receiveRingBytes(final int bytes)
        {
            this.receiveRingBytes = RECEIVE_RING_BYTES.check(bytes);
            return this;
        }

        /**
         * @param bytes the size of each socket's send ring, a power of two of at least 4096.
         * @return this builder.
         */
        public Builder sendRingBytes(final int bytes)
        {
            this.sendRingBytes = SEND_RING_BYTES.check(bytes);
            return this;
        }

        /**
         * @param capacity a power of two, at least 2.
         * @return this builder.
         */
        public Builder socketQueueCapacity(final int capacity)
        {
            this.socketQueueCapacity = SOCKET_QUEUE_CAPACITY.check(capacity);
            return this;
        }

        /**
         * @param spec {@code backoff}, {@code sleep:<micros>}, {@code yield} or {@code spin}.
         * @return this builder.
         */
        public Builder idleStrategy(final String spec)
        {
            this.idleStrategy = IDLE_STRATEGY.check(spec);
            return this;
        }

        /**
         * @param delay not negative.
         * @return this builder.
         */
        public Builder ackDelay(final Duration delay)
        {
            this.ackDelay = ACK_DELAY.check(delay);
            return this;
        }

        /**
         * @param min first backoff bound, positive.
         * @param max largest backoff bound, at least {@code min}.
         * @return this builder.
         */
        public Builder reconnectDelay(final Duration min, final Duration max)
        {
            RECONNECT_DELAY_MIN.check(min);
            RECONNECT_DELAY_MAX.check(max);
            checkReconnectDelay(min, max);
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
            this.connectTimeout = CONNECT_TIMEOUT.check(timeout);
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
            HEARTBEAT_INTERVAL.check(interval);
            HEARTBEAT_TIMEOUT.check(timeout);
            checkHeartbeat(interval, timeout);
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
            this.infoDirectory = INFO_DIRECTORY.check(directory);
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
         * @param peers the most peer connections the stack keeps, positive.
         * @return this builder.
         */
        public Builder maxPeers(final int peers)
        {
            this.maxPeers = MAX_PEERS.check(peers);
            return this;
        }

        /**
         * @param perSecond the most connections accepted per second for one node pair, positive.
         * @return this builder.
         */
        public Builder peerConnectRate(final int perSecond)
        {
            this.peerConnectRate = PEER_CONNECT_RATE.check(perSecond);
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
            this.threading = THREADING.check(threading);
            return this;
        }

        /**
         * @param directory the directory of a driver to attach to ({@code rds driver --dir}); empty: run the stack
         *                  in this process (the default). See {@link RdsStackConfig#driverDirectory()}.
         * @return this builder.
         */
        public Builder driverDirectory(final String directory)
        {
            this.driverDirectory = DRIVER_DIRECTORY.check(directory);
            return this;
        }

        /**
         * @param timeout how long an attached stack lets its driver's heartbeat stand still before it takes the
         *                driver as stopped or hung; more than {@link RdsStackConfig#DRIVER_HEARTBEAT_PERIOD}. See
         *                {@link RdsStackConfig#driverTimeout()}.
         * @return this builder.
         */
        public Builder driverTimeout(final Duration timeout)
        {
            this.driverTimeout = DRIVER_TIMEOUT.check(timeout);
            return this;
        }

        /**
         * @param config a transport's settings (such as TCP's {@code TcpConfig}); replaces one of the same class.
         *               A transport given none reads its settings from the builder's {@link SettingSource}.
         * @return this builder.
         */
        public Builder transportConfig(final TransportConfig config)
        {
            transportConfigs.put(Objects.requireNonNull(config, "transportConfig").getClass(), config);
            return this;
        }

        /**
         * @return the configuration: values not set read from the source, else the defaults.
         * @throws IllegalArgumentException naming the property or environment variable whose value is malformed
         *                                  or out of range, or the settings that do not fit together.
         */
        public RdsStackConfig build()
        {
            return new RdsStackConfig(this);
        }
    }
}
