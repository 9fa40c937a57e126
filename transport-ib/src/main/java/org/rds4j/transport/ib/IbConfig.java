package org.rds4j.transport.ib;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.rds4j.RdsStackConfig;
import org.rds4j.Setting;
import org.rds4j.SettingSource;
import org.rds4j.TransportConfig;
import org.rds4j.transport.ib.verbs.CmId;

/**
 * The settings of RDS over InfiniBand, which only this transport reads: immutable, built with
 * {@link #builder()} and handed to a stack with {@link RdsStackConfig.Builder#transportConfig(TransportConfig)}.
 * A stack given none reads them, as any setting, from the {@code rds4j.ib.*} system properties, else the
 * {@code RDS4J_IB_*} environment variables, else the defaults ({@link #of(RdsStackConfig)}).
 * ({@code rds4j.ib.opsCall} and {@code rds4j.ib.skipNativeTests} are not settings: they are diagnostic and test
 * switches of the verbs layer and its tests, read as plain system properties.)
 */
public final class IbConfig implements TransportConfig
{
    /** Send buffers per IB connection by default, as kernel RDS. */
    public static final int DEFAULT_IB_SEND_RING = 256;
    /** Receive buffers per IB connection by default, as kernel RDS. */
    public static final int DEFAULT_IB_RECEIVE_RING = 1024;
    /** Fewest buffers in an IB ring: a credit is held back for updates, and a congestion map takes 3 fragments. */
    public static final int MIN_IB_RING = 8;
    /** Most buffers in an IB ring (16 MiB of registered memory). */
    public static final int MAX_IB_RING = 4096;

    /** 4 KiB send buffers per connection: {@code rds4j.ib.send.ring}. */
    public static final Setting<Integer> IB_SEND_RING =
        Setting.ofInt("ibSendRing", "rds4j.ib.send.ring", DEFAULT_IB_SEND_RING, IbConfig::ringProblem);
    /** 4 KiB receive buffers per connection: {@code rds4j.ib.receive.ring}. */
    public static final Setting<Integer> IB_RECEIVE_RING =
        Setting.ofInt("ibReceiveRing", "rds4j.ib.receive.ring", DEFAULT_IB_RECEIVE_RING, IbConfig::ringProblem);
    /** The rdma_cm port listened on and connected to: {@code rds4j.ib.port}. */
    public static final Setting<Integer> IB_PORT =
        Setting.ofInt("ibPort", "rds4j.ib.port", CmId.RDS_IB_PORT, Setting.range(1, 65535));
    /** How long the agent polls a CQ after a completion, in µs: {@code rds4j.ib.pollSpinMicros}. */
    public static final Setting<Integer> IB_POLL_SPIN_MICROS =
        Setting.ofInt("ibPollSpinMicros", "rds4j.ib.pollSpinMicros", 200, Setting.atLeast(0));
    /** Whether the IB transport serves no address: {@code rds4j.ib.disable}. */
    public static final Setting<Boolean> IB_DISABLE = Setting.ofBoolean("ibDisable", "rds4j.ib.disable", false);
    /** Every setting declared here, for documentation and tests. */
    public static final List<Setting<?>> SETTINGS =
        List.of(IB_SEND_RING, IB_RECEIVE_RING, IB_PORT, IB_POLL_SPIN_MICROS, IB_DISABLE);

    private final int ibSendRing;
    private final int ibReceiveRing;
    private final int ibPort;
    private final int ibPollSpinMicros;
    private final boolean ibDisable;

    private IbConfig(final Builder b)
    {
        final SettingSource source = b.settingSource;
        ibSendRing = IB_SEND_RING.resolve(b.ibSendRing, source);
        ibReceiveRing = IB_RECEIVE_RING.resolve(b.ibReceiveRing, source);
        ibPort = IB_PORT.resolve(b.ibPort, source);
        ibPollSpinMicros = IB_POLL_SPIN_MICROS.resolve(b.ibPollSpinMicros, source);
        ibDisable = IB_DISABLE.resolve(b.ibDisable, source);
    }

    /**
     * @param config a stack's configuration.
     * @return the IB config it was given, else one read from its {@link RdsStackConfig#settingSource()}.
     */
    public static IbConfig of(final RdsStackConfig config)
    {
        final IbConfig given = config.transportConfig(IbConfig.class);
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

    /** @return 4 KiB send buffers (work requests) per IB connection. Default 256. */
    public int ibSendRing()
    {
        return ibSendRing;
    }

    /** @return 4 KiB receive buffers per IB connection: the initial credits the peer gets. Default 1024. */
    public int ibReceiveRing()
    {
        return ibReceiveRing;
    }

    /** @return the rdma_cm port listened on and connected to (kernel {@code RDS_PORT}). Default 18634. */
    public int ibPort()
    {
        return ibPort;
    }

    /**
     * @return how long the agent keeps polling a connection's CQ after a completion before arming it and
     *         leaving the waiting to the IB event thread. Default 200 µs.
     */
    public Duration ibPollSpin()
    {
        return Duration.ofNanos(ibPollSpinMicros * 1000L);
    }

    /** @return whether the IB transport is disabled: it then serves no address. Default false. */
    public boolean ibDisable()
    {
        return ibDisable;
    }

    @Override
    public String toString()
    {
        return "IbConfig{ibSendRing=" + ibSendRing + ", ibReceiveRing=" + ibReceiveRing + ", ibPort=" + ibPort +
            ", ibPollSpinMicros=" + ibPollSpinMicros + ", ibDisable=" + ibDisable + "}";
    }

    private static String ringProblem(final int slots)
    {
        return slots < MIN_IB_RING || slots > MAX_IB_RING ? "must be " + MIN_IB_RING + ".." + MAX_IB_RING + " buffers" : null;
    }

    /** Builds an {@link IbConfig}; each setter checks its argument and throws on a bad one. */
    public static final class Builder
    {
        private final SettingSource settingSource;
        private Integer ibSendRing;
        private Integer ibReceiveRing;
        private Integer ibPort;
        private Integer ibPollSpinMicros;
        private Boolean ibDisable;

        private Builder(final SettingSource settingSource)
        {
            this.settingSource = settingSource;
        }

        /**
         * @param slots 4 KiB send buffers per IB connection, {@value #MIN_IB_RING}..{@value #MAX_IB_RING}
         *              (default {@value #DEFAULT_IB_SEND_RING}, as kernel RDS).
         * @return this builder.
         */
        public Builder ibSendRing(final int slots)
        {
            this.ibSendRing = IB_SEND_RING.check(slots);
            return this;
        }

        /**
         * @param slots 4 KiB receive buffers per IB connection, {@value #MIN_IB_RING}..{@value #MAX_IB_RING}
         *              (default {@value #DEFAULT_IB_RECEIVE_RING}, as kernel RDS); the peer's initial credits.
         * @return this builder.
         */
        public Builder ibReceiveRing(final int slots)
        {
            this.ibReceiveRing = IB_RECEIVE_RING.check(slots);
            return this;
        }

        /**
         * @param port the rdma_cm port, 1..65535; every node must use the same.
         * @return this builder.
         */
        public Builder ibPort(final int port)
        {
            this.ibPort = IB_PORT.check(port);
            return this;
        }

        /**
         * @param micros how long the agent polls a CQ after a completion, not negative.
         * @return this builder.
         */
        public Builder ibPollSpinMicros(final int micros)
        {
            this.ibPollSpinMicros = IB_POLL_SPIN_MICROS.check(micros);
            return this;
        }

        /**
         * @param disable true: the IB transport serves no address.
         * @return this builder.
         */
        public Builder ibDisable(final boolean disable)
        {
            this.ibDisable = disable;
            return this;
        }

        /**
         * @return the configuration: values not set read from the source, else the defaults.
         * @throws IllegalArgumentException naming the property or environment variable whose value is malformed
         *                                  or out of range.
         */
        public IbConfig build()
        {
            return new IbConfig(this);
        }
    }
}
