package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.MemoryNetwork;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.StackFixture;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import static org.rds4j.core.test.TestAddresses.ip;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bind rules: reserved and non-unicast addresses, rebinding, ports in use, ephemeral ports, addresses that
 * are not on the network, and an address another stack serves. On a {@link MemoryNetwork}, addresses 127.0.2.x;
 * {@code TcpBindRulesTest} checks the TCP side of the last two (local addresses, the shared listener port).
 */
class BindRulesTest
{
    private static final InetAddress IP1 = ip("127.0.2.1");
    private static final InetAddress IP2 = ip("127.0.2.2");
    private static final InetAddress SHARED_IP = ip("127.0.2.9");
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final StackFixture stacks = fixture();

    /** @return the stacks: in memory; {@link DriverBindRulesTest} attaches each to a driver instead. */
    StackFixture fixture()
    {
        return new MemoryStacks();
    }
    private RdsStack stack;

    private RdsStack open(final RdsStackConfig.Builder builder)
    {
        return stacks.open(builder.infoFile(false).build());
    }

    @BeforeEach
    void setUp()
    {
        stack = open(RdsStackConfig.builder().name("bind"));
    }

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
    void port1IsReserved() throws Exception
    {
        final RdsSocket s = stack.openSocket();
        assertEquals(RdsResult.EINVAL, bindCode(s, new InetSocketAddress(IP1, 1)));
        assertNull(s.localAddress());
    }

    @Test
    void lowestAndHighestUsablePortsBind() throws Exception
    {
        assertEquals(new InetSocketAddress(IP1, 2), stack.openSocket().bind(new InetSocketAddress(IP1, 2)).localAddress());
        assertEquals(new InetSocketAddress(IP1, 65535),
            stack.openSocket().bind(new InetSocketAddress(IP1, 65535)).localAddress());
    }

    @Test
    void wildcardMulticastAndBroadcastAreEINVAL() throws Exception
    {
        for (final String bad : new String[] {"0.0.0.0", "224.0.0.1", "255.255.255.255"})
        {
            final RdsSocket s = stack.openSocket();
            assertEquals(RdsResult.EINVAL, bindCode(s, new InetSocketAddress(ip(bad), 4000)), bad);
            assertNull(s.localAddress(), bad);
        }
    }

    @Test
    void bindingTwiceIsEINVAL() throws Exception
    {
        final RdsSocket s = stack.openSocket().bind(new InetSocketAddress(IP1, 4001));
        assertEquals(RdsResult.EINVAL, bindCode(s, new InetSocketAddress(IP1, 4002)));
        assertEquals(RdsResult.EINVAL, bindCode(s, new InetSocketAddress(IP1, 4001)));
        assertEquals(new InetSocketAddress(IP1, 4001), s.localAddress());
        // the port of the failed second bind stays free
        stack.openSocket().bind(new InetSocketAddress(IP1, 4002));
    }

    @Test
    void sameAddressAndPortIsEADDRINUSE() throws Exception
    {
        final InetSocketAddress local = new InetSocketAddress(IP1, 4003);
        stack.openSocket().bind(local);
        final RdsSocket second = stack.openSocket();
        assertEquals(RdsResult.EADDRINUSE, bindCode(second, local));
        assertNull(second.localAddress());
        // the socket is still usable
        second.bind(new InetSocketAddress(IP1, 4004));
        assertEquals(new InetSocketAddress(IP1, 4004), second.localAddress());
    }

    @Test
    void samePortOnTwoLocalAddressesIsFine() throws Exception
    {
        final RdsSocket s1 = stack.openSocket().bind(new InetSocketAddress(IP1, 4005));
        final RdsSocket s2 = stack.openSocket().bind(new InetSocketAddress(IP2, 4005));
        assertEquals(new InetSocketAddress(IP1, 4005), s1.localAddress());
        assertEquals(new InetSocketAddress(IP2, 4005), s2.localAddress());
    }

    @Test
    void ephemeralPortsAreDistinctAndNeverZeroOrOne() throws Exception
    {
        // small per-socket queues: 2000 sockets
        final RdsStack many = open(RdsStackConfig.builder().name("bind-many").socketQueueCapacity(16));
        final InetAddress address = ip("127.0.2.3");
        final Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 2000; i++)
        {
            final RdsSocket s = many.openSocket().bind(new InetSocketAddress(address, 0));
            final InetSocketAddress local = s.localAddress();
            assertEquals(address, local.getAddress());
            final int port = local.getPort();
            assertTrue(port >= 2 && port <= 65535, "ephemeral port " + port);
            assertTrue(ports.add(port), "port " + port + " given twice");
        }
        assertEquals(2000, ports.size());
    }

    @Test
    void portIsFreeAsSoonAsCloseReturns() throws Exception
    {
        final InetSocketAddress local = new InetSocketAddress(IP1, 4006);
        RdsSocket current = stack.openSocket().bind(local);
        for (int i = 0; i < 200; i++)
        {
            current.close();
            current = stack.openSocket().bind(local);
            assertEquals(local, current.localAddress(), "rebind " + i);
        }
        // the agent maps the port to the newest socket, not to one of the closed ones
        final RdsSocket sender = stack.openSocket().bind(new InetSocketAddress(IP1, 4106));
        current.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(1, sender.send(ByteBuffer.wrap(new byte[] {42}), local));
        final ByteBuffer dst = ByteBuffer.allocate(8);
        assertEquals(sender.localAddress(), current.receive(dst));
        assertEquals(42, dst.get(0));
        current.close();
        sender.close();
    }

    @Test
    void aPortBoundAgainGetsTheNextMessageOfAConnectionInUse() throws Exception
    {
        // the receive path remembers the socket its last frame went to: a closed one must not keep the port
        final InetSocketAddress local = new InetSocketAddress(IP1, 4007);
        final RdsSocket first = stack.openSocket().bind(local);
        final RdsSocket sender = stack.openSocket().bind(new InetSocketAddress(IP2, 4107));
        first.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(1, sender.send(ByteBuffer.wrap(new byte[] {1}), local));
        final ByteBuffer dst = ByteBuffer.allocate(8);
        assertEquals(sender.localAddress(), first.receive(dst));
        first.close();
        final RdsSocket second = stack.openSocket().bind(local);
        second.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        assertEquals(1, sender.send(ByteBuffer.wrap(new byte[] {2}), local));
        dst.clear();
        assertEquals(sender.localAddress(), second.receive(dst));
        assertEquals(2, dst.get(0));
        second.close();
        sender.close();
    }

    @Test
    void addressNotOnTheNetworkIsEADDRNOTAVAIL() throws Exception
    {
        final RdsSocket s = stack.openSocket();
        assertEquals(RdsResult.EADDRNOTAVAIL, bindCode(s, new InetSocketAddress(ip("192.0.2.1"), 4007)));
        assertNull(s.localAddress());
    }

    @Test
    void secondStackOnSameAddressIsEADDRINUSE() throws Exception
    {
        final RdsStack other = open(RdsStackConfig.builder().name("bind-other"));
        stack.openSocket().bind(new InetSocketAddress(SHARED_IP, 4008));
        final RdsSocket s = other.openSocket();
        assertEquals(RdsResult.EADDRINUSE, bindCode(s, new InetSocketAddress(SHARED_IP, 4009)));
        assertNull(s.localAddress());
    }
}
