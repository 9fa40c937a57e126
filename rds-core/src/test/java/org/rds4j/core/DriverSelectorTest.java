package org.rds4j.core;

import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.StackFixture;

/** Every test of {@link SelectorTest}, with each stack attached to a driver of its own. */
class DriverSelectorTest extends SelectorTest
{
    @Override
    protected StackFixture fixture()
    {
        return new DriverStacks();
    }
}
