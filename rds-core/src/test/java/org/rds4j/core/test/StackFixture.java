package org.rds4j.core.test;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;

import java.util.ArrayList;
import java.util.List;

/**
 * The stacks one test opens on one network, closed together by {@link #close()} after each test method: over
 * TCP ({@link TestStacks}) or in memory ({@link MemoryStacks}), so that a test of the generic layer can run over
 * either. Keeps what a subclass opens ({@link #track}) and the gates it uses ({@link #trackGate}). Tests only.
 */
public abstract class StackFixture implements AutoCloseable
{
    private final List<RdsStack> stacks = new ArrayList<>();
    private final List<AgentGate> gates = new ArrayList<>();

    /**
     * @param name the stack's name.
     * @return a configuration with that name, for this fixture's network.
     */
    public abstract RdsStackConfig config(String name);

    /**
     * @param config a configuration, from {@link #config} or its builder.
     * @return a running stack on this fixture's network, closed by {@link #close()}.
     */
    public abstract RdsStack open(RdsStackConfig config);

    /**
     * @param name the stack's name.
     * @return a running stack with {@link #config}, closed by {@link #close()}.
     */
    public RdsStack open(final String name)
    {
        return open(config(name));
    }

    /**
     * @param name the stack's name.
     * @param gate holds the stack's agent when the test asks; released by {@link #close()}.
     * @return a running stack whose agent idles through the gate.
     */
    public abstract RdsStack openGated(String name, AgentGate gate);

    /**
     * @param stack a stack just opened.
     * @param <T>   its type.
     * @return the stack, to be closed by {@link #close()}.
     */
    protected final <T extends RdsStack> T track(final T stack)
    {
        stacks.add(stack);
        return stack;
    }

    /**
     * @param gate a gate a stack is about to idle through.
     * @return the gate, to be released by {@link #close()}.
     */
    protected final AgentGate trackGate(final AgentGate gate)
    {
        gates.add(gate);
        return gate;
    }

    /** Releases every gate, then closes every stack, newest first. */
    @Override
    public final void close()
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
        closed();
    }

    /** After the stacks are closed: what else the fixture opened (a driver) closes here. */
    protected void closed()
    {
    }
}
