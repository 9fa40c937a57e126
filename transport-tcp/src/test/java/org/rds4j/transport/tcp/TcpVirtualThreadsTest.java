package org.rds4j.transport.tcp;

import org.rds4j.core.VirtualThreadsTest;
import org.rds4j.core.test.StackFixture;
import org.rds4j.core.test.TestStacks;

/**
 * rds-core's {@link VirtualThreadsTest} over TCP: the virtual thread that leads the receiving stack's duty cycle
 * idles in the JDK's selector, which waits inside the selector's own monitor. TCP port 28400.
 */
class TcpVirtualThreadsTest extends VirtualThreadsTest
{
    @Override
    protected StackFixture fixture()
    {
        return new TestStacks(TcpConfig.builder().tcpPort(28400).build());
    }
}
