package org.rds4j.core;

import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.StackFixture;

/**
 * The socket contract of {@link SocketSemanticsTest}, every test of it, with each stack attached to a driver of its
 * own: the same codes, counts and bytes through the driver's boundary.
 */
class DriverSocketSemanticsTest extends SocketSemanticsTest
{
    @Override
    StackFixture fixture()
    {
        return new DriverStacks();
    }
}
