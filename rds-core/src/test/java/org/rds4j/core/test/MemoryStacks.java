package org.rds4j.core.test;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;
import org.rds4j.core.StackOptions;


/**
 * The stacks a test opens on one {@link MemoryNetwork}, without info files, closed together (newest first) by
 * {@link #close()}. Tests only.
 */
public final class MemoryStacks extends StackFixture
{
    private final MemoryNetwork network;

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
        return track(CoreStack.open(config, options));
    }

    @Override
    public CoreStack openGated(final String name, final AgentGate gate)
    {
        return open(config(name), network.options().idleStrategy(trackGate(gate)));
    }
}
