package org.rds4j.core;

import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.StackFixture;

/** Every test of {@link NetworkChannelTest}, with each stack attached to a driver of its own. */
class DriverNetworkChannelTest extends NetworkChannelTest
{
    @Override
    StackFixture fixture()
    {
        return new DriverStacks();
    }
}
