package org.rds4j.core.test;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportConfig;
import org.rds4j.core.CoreStack;

import java.util.ArrayList;
import java.util.List;

/**
 * The stacks a test opens with the transports {@code META-INF/services} registers, all with one transport config
 * (such as a TCP port), closed together (newest first) by {@link #close()}, which a test calls after each test
 * method. Tests only.
 */
public final class TestStacks implements StackFixture
{
    private final TransportConfig transportConfig;
    private final List<RdsStack> stacks = new ArrayList<>();
    private final List<AgentGate> gates = new ArrayList<>();

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
     * @param name the stack's name.
     * @return a running stack with this fixture's transport config, closed by {@link #close()}.
     */
    @Override
    public RdsStack open(final String name)
    {
        return open(config(name));
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
        gates.add(gate);
        return track(CoreStack.open(config(name), gate));
    }

    private <T extends RdsStack> T track(final T stack)
    {
        stacks.add(stack);
        return stack;
    }

    @Override
    public void close()
    {
        for (final AgentGate gate : gates)
        {
            gate.hold = false;
        }
        gates.clear();
        for (int i = stacks.size() - 1; i >= 0; i--)
        {
            stacks.get(i).close();
        }
        stacks.clear();
    }
}
