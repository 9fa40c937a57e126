package org.rds4j.transport.tcp;

import org.rds4j.core.SelectorTest;
import org.rds4j.core.test.StackFixture;
import org.rds4j.core.test.TestStacks;

/**
 * rds-core's {@link SelectorTest} over TCP: a waiting select that leads the duty cycle idles in the TCP selector,
 * which arriving frames, application threads handing the stack work, and {@code wakeup()} must end. TCP port
 * 27740.
 */
class TcpSelectorTest extends SelectorTest
{
    @Override
    protected StackFixture fixture()
    {
        return new TestStacks(TcpConfig.builder().tcpPort(27740).build());
    }
}
