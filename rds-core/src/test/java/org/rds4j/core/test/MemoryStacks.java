package org.rds4j.core.test;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;
import org.rds4j.core.StackOptions;

import java.util.ArrayList;
import java.util.List;

/**
 * The stacks a test opens on one {@link MemoryNetwork}, without info files, closed together (newest first) by
 * {@link #close()}. Tests only.
 */
public final class MemoryStacks implements StackFixture
{
    private final MemoryNetwork network;
    private final List<RdsStack> stacks = new ArrayList<>();
    private final List<AgentGate> gates = new ArrayList<>();

    /** Stacks on a new network that delivers every frame. */
    public MemoryStacks()
    {
        this(new MemoryNetwork());
    }

    /** @param network the network the stacks are opened on. */
    public MemoryStacks(final MemoryNetwork network)
    {
        this.network = network;
    }

    /** @return the network, for its faults. */
    public MemoryNetwork network()
    {
        return network;
    }

    @Override
    public RdsStackConfig config(final String name)
    {
        return RdsStackConfig.builder().name(name).infoFile(false).build();
    }

    @Override
    public CoreStack open(final String name)
    {
        return open(config(name));
    }

    @Override
    public CoreStack open(final RdsStackConfig config)
    {
        return open(config, network.options());
    }

    /**
     * @param config  any configuration.
     * @param options options, from {@link MemoryNetwork#options()} for a stack on the network (e.g. with a clock).
     * @return a running stack, closed by {@link #close()}.
     */
    public CoreStack open(final RdsStackConfig config, final StackOptions options)
    {
        final CoreStack stack = CoreStack.open(config, options);
        stacks.add(stack);
        return stack;
    }

    @Override
    public CoreStack openGated(final String name, final AgentGate gate)
    {
        gates.add(gate);
        return open(config(name), network.options().idleStrategy(gate));
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
