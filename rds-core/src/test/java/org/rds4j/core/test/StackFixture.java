package org.rds4j.core.test;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;

/**
 * The stacks one test opens on one network, closed together by {@link #close()} after each test method: over
 * TCP ({@link TestStacks}) or in memory ({@link MemoryStacks}), so that a test of the generic layer can run over
 * either. Tests only.
 */
public interface StackFixture extends AutoCloseable
{
    /**
     * @param name the stack's name.
     * @return a configuration with that name, for this fixture's network.
     */
    RdsStackConfig config(String name);

    /**
     * @param config a configuration, from {@link #config} or its builder.
     * @return a running stack on this fixture's network, closed by {@link #close()}.
     */
    RdsStack open(RdsStackConfig config);

    /**
     * @param name the stack's name.
     * @return a running stack with {@link #config}, closed by {@link #close()}.
     */
    default RdsStack open(final String name)
    {
        return open(config(name));
    }

    /**
     * @param name the stack's name.
     * @param gate holds the stack's agent when the test asks; released by {@link #close()}.
     * @return a running stack whose agent idles through the gate.
     */
    CoreStack openGated(String name, AgentGate gate);

    /** Releases every gate, then closes every stack, newest first. */
    @Override
    void close();
}
