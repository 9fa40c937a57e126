package org.rds4j.core;

import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.StackFixture;

/** Every test of {@link NotificationTest}, with each stack attached to a driver of its own. */
class DriverNotificationTest extends NotificationTest
{
    @Override
    StackFixture fixture()
    {
        return new DriverStacks();
    }
}
