package org.rds4j.core.test;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportConfig;
import org.rds4j.core.CoreStack;


/**
 * The stacks a test opens with the transports {@code META-INF/services} registers, all with one transport config
 * (such as a TCP port), closed together (newest first) by {@link #close()}, which a test calls after each test
 * method. Tests only.
 */
public final class TestStacks extends StackFixture
{
    private final TransportConfig transportConfig;

    /** @param transportConfig the transport config (a TCP port) of every stack opened by name. */
    public TestStacks(final TransportConfig transportConfig)
    {
        this.transportConfig = transportConfig;
    }

    /**
     * @param name the stack's name.
     * @return a configuration with that name and this fixture's transport config.
     */
    @Override
    public RdsStackConfig config(final String name)
    {
        return RdsStackConfig.builder().name(name).transportConfig(transportConfig).build();
    }

    /**
     * @param config any configuration.
     * @return a running stack, closed by {@link #close()}.
     */
    @Override
    public RdsStack open(final RdsStackConfig config)
    {
        return track(RdsStack.open(config));
    }

    /**
     * @param name the stack's name.
     * @param gate holds the stack's agent when the test asks; released by {@link #close()}.
     * @return a running stack whose agent idles through the gate.
     */
    @Override
    public CoreStack openGated(final String name, final AgentGate gate)
    {
        return track(CoreStack.open(config(name), trackGate(gate)));
    }
}
