package org.rds4j.core;

import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.StackFixture;

/** Every test of {@link CancelSentToTest}, with each stack attached to a driver of its own. */
class DriverCancelSentToTest extends CancelSentToTest
{
    @Override
    StackFixture fixture()
    {
        return new DriverStacks();
    }
}
