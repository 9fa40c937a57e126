package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.TestStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The bind rules TCP decides (the generic ones are rds-core's {@code BindRulesTest}): an address that is not
 * the host's, and the TCP listener port shared by two stacks. TCP port 27300, addresses 127.0.2.x.
 */
class TcpBindRulesTest
{
    private static final InetAddress SHARED_IP = ip("127.0.2.9");

    private final TestStacks stacks = new TestStacks(TcpConfig.builder().tcpPort(27300).build());

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private static int bindCode(final RdsSocket socket, final InetSocketAddress local)
    {
        final RdsException ex = assertThrows(RdsException.class, () -> socket.bind(local), "bind " + local);
        return ex.code();
    }

    @Test
    void addressThatIsNotLocalIsEADDRNOTAVAIL() throws Exception
    {
        final RdsSocket s = stacks.open("bind").openSocket();
        assertEquals(RdsResult.EADDRNOTAVAIL, bindCode(s, new InetSocketAddress(ip("192.0.2.1"), 4007)));
        assertNull(s.localAddress());
    }

    @Test
    void secondStackOnSameAddressAndTcpPortIsEADDRINUSE() throws Exception
    {
        final RdsStack stack = stacks.open("bind");
        final RdsStack other = stacks.open("bind-other");
        stack.openSocket().bind(new InetSocketAddress(SHARED_IP, 4008));
        final RdsSocket s = other.openSocket();
        assertEquals(RdsResult.EADDRINUSE, bindCode(s, new InetSocketAddress(SHARED_IP, 4009)));
        assertNull(s.localAddress());
    }
}
