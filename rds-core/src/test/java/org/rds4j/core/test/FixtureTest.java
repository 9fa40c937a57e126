package org.rds4j.core.test;

import org.junit.jupiter.api.AfterEach;

/**
 * A test of the generic layer that runs over any {@link StackFixture}: in memory here, and again over a
 * transport where a transport's suite extends it and overrides {@link #fixture()}. Its stacks are closed after
 * each test method.
 */
public abstract class FixtureTest
{
    /** The stacks the test opens. */
    protected final StackFixture stacks = fixture();

    /** @return the stacks the tests open: on a memory network unless overridden. */
    protected StackFixture fixture()
    {
        return new MemoryStacks();
    }

    @AfterEach
    void closeStacks()
    {
        stacks.close();
    }
}
