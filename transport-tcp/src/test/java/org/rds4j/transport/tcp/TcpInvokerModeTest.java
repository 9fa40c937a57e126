package org.rds4j.transport.tcp;

import org.rds4j.core.InvokerModeTest;
import org.rds4j.core.test.StackFixture;
import org.rds4j.core.test.TestStacks;

/**
 * rds-core's {@link InvokerModeTest} over TCP: a thread leading the duty cycle idles in the TCP selector, which
 * application threads handing it work wake, and which no other thread may use meanwhile. TCP port 27800.
 */
class TcpInvokerModeTest extends InvokerModeTest
{
    @Override
    protected StackFixture fixture()
    {
        return new TestStacks(TcpConfig.builder().tcpPort(27800).build());
    }
}
