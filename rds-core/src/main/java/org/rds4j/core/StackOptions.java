package org.rds4j.core;

import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;
import org.rds4j.core.spi.TransportFactory;

import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.util.List;
import java.util.function.Function;

/**
 * What {@link CoreStack#open(org.rds4j.RdsStackConfig, StackOptions)} takes beside the configuration, for
 * embedding and tests: the clocks the stack reads, an idle strategy object, and the transports to create
 * instead of those {@link java.util.ServiceLoader} finds. The defaults are the system clocks, the
 * configuration's idle strategy and the registered transports. Read once, when the stack opens.
 */
public final class StackOptions
{
    private NanoClock nanoClock = SystemNanoClock.INSTANCE;
    private EpochClock epochClock = SystemEpochClock.INSTANCE;
    private IdleStrategy idleStrategy;
    private List<TransportFactory> transports;
    private Function<InetAddress, CongestionMap> congestionMaps = address -> new CongestionMap();
    private DriverHeartbeat driverHeartbeat;
    private AgentExtension agentExtension;
    private long firstStandByNs = AgentTurns.MIN_STAND_BY_NS;
    private long longestStandByNs = AgentTurns.MAX_STAND_BY_NS;

    /** Options with every default: set only what differs. */
    public StackOptions()
    {
    }

    /**
     * @param clock the clock of every protocol timer (heartbeats, acks, reconnects, handshakes, frame
     *              timeouts, the agent's idle deadlines), given to transports as the agent's {@code nowNs}.
     * @return this.
     */
    public StackOptions nanoClock(final NanoClock clock)
    {
        this.nanoClock = clock;
        return this;
    }

    /** @return the clock of the stack's timers; {@link SystemNanoClock} unless set. */
    public NanoClock nanoClock()
    {
        return nanoClock;
    }

    /**
     * @param clock the wall clock of the info file's heartbeat.
     * @return this.
     */
    public StackOptions epochClock(final EpochClock clock)
    {
        this.epochClock = clock;
        return this;
    }

    /** @return the wall clock; {@link SystemEpochClock} unless set. */
    public EpochClock epochClock()
    {
        return epochClock;
    }

    /**
     * @param strategy how the agent waits when it has nothing to do (overriding
     *                 {@link org.rds4j.RdsStackConfig#idleStrategy()}); it should park rather than spin.
     * @return this.
     */
    public StackOptions idleStrategy(final IdleStrategy strategy)
    {
        this.idleStrategy = strategy;
        return this;
    }

    /** @return the idle strategy given, or null for the configuration's. */
    public IdleStrategy idleStrategy()
    {
        return idleStrategy;
    }

    /**
     * @param factories the transports the stack creates, in place of those registered in
     *                  {@code META-INF/services} (the loopback transport is always added).
     * @return this.
     */
    public StackOptions transports(final List<TransportFactory> factories)
    {
        this.transports = List.copyOf(factories);
        return this;
    }

    /** @return the transports given, or null for the registered ones. */
    public List<TransportFactory> transports()
    {
        return transports;
    }

    /**
     * @param factory makes the congestion map of each address the stack learns, local or remote: a driver puts
     *                them where its clients read them ({@link CongestionBoard}).
     * @return this.
     */
    StackOptions congestionMaps(final Function<InetAddress, CongestionMap> factory)
    {
        this.congestionMaps = factory;
        return this;
    }

    Function<InetAddress, CongestionMap> congestionMaps()
    {
        return congestionMaps;
    }

    /**
     * @param heartbeat where a driver's stack's agent publishes that it runs, for the driver's clients.
     * @return this.
     */
    StackOptions driverHeartbeat(final DriverHeartbeat heartbeat)
    {
        this.driverHeartbeat = heartbeat;
        return this;
    }

    /** @return the driver's heartbeat, or null: the stack is not a driver's. */
    DriverHeartbeat driverHeartbeat()
    {
        return driverHeartbeat;
    }

    /**
     * Tests: the agent's stand-by periods ({@link AgentTurns}), long enough that only a hand-over ends one.
     *
     * @param firstNs   the first.
     * @param longestNs the longest.
     * @return this.
     */
    StackOptions agentStandBy(final long firstNs, final long longestNs)
    {
        this.firstStandByNs = firstNs;
        this.longestStandByNs = longestNs;
        return this;
    }

    /** @return a new policy for the stack's agent thread, with the stand-by periods set. */
    AgentTurns agentTurns()
    {
        return new AgentTurns(firstStandByNs, longestStandByNs);
    }

    /**
     * @param extension work the stack's host adds to its agent thread's duty cycle (a driver: its clients' rings).
     * @return this.
     */
    StackOptions agentExtension(final AgentExtension extension)
    {
        this.agentExtension = extension;
        return this;
    }

    /** @return the work the host adds to the agent's duty cycle, or null: none. */
    AgentExtension agentExtension()
    {
        return agentExtension;
    }
}
