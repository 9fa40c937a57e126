package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.StackFixture;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NetworkChannel;
import java.nio.channels.UnsupportedAddressTypeException;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * {@link RdsSocket} as a {@link NetworkChannel}: bind through a {@link SocketAddress}, the local address, the
 * supported options and their errors, as NIO's channels behave; and {@link RdsOptions#SO_LINGER}'s values.
 */
class NetworkChannelTest
{
    private static final InetAddress A_IP = ip("127.0.1.1");

    private final StackFixture stacks = fixture();

    /** @return the stacks: in memory; {@link DriverNetworkChannelTest} attaches each to a driver instead. */
    StackFixture fixture()
    {
        return new MemoryStacks();
    }
    private RdsStack a;

    @BeforeEach
    void setUp()
    {
        a = stacks.open("nc-a");
    }

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void bindsThroughASocketAddressAndReportsItsLocalAddress() throws Exception
    {
        final NetworkChannel channel = a.openSocket();
        assertNull(channel.getLocalAddress(), "not bound yet");
        final SocketAddress local = new InetSocketAddress(A_IP, 6000);
        assertSame(channel, channel.bind(local));
        assertEquals(local, channel.getLocalAddress());
        assertEquals(local, ((RdsSocket)channel).localAddress());
    }

    @Test
    void bindRefusesOtherAddressTypesAndNull() throws Exception
    {
        final RdsSocket s = a.openSocket();
        assertThrows(UnsupportedAddressTypeException.class, () -> s.bind(UnixDomainSocketAddress.of("/tmp/x")));
        // null asks NIO for a wildcard address, which RDS cannot bind: through either overload
        assertEquals(RdsResult.EINVAL, assertThrows(RdsException.class, () -> s.bind((SocketAddress)null)).code());
        assertEquals(RdsResult.EINVAL, assertThrows(RdsException.class, () -> s.bind((InetSocketAddress)null)).code());
        assertNull(s.localAddress());
        s.bind((SocketAddress)new InetSocketAddress(A_IP, 6001));
        assertEquals(new InetSocketAddress(A_IP, 6001), s.localAddress());
    }

    @Test
    void supportedOptionsAreRdsOptionsAndOthersAreUnsupported() throws Exception
    {
        final RdsSocket s = a.openSocket();
        assertEquals(Set.of(StandardSocketOptions.SO_SNDBUF, StandardSocketOptions.SO_RCVBUF,
            StandardSocketOptions.SO_LINGER, RdsOptions.SO_SNDTIMEO, RdsOptions.SO_RCVTIMEO, RdsOptions.RDS_TRANSPORT,
            RdsOptions.RDS_CONG_MONITOR), s.supportedOptions());
        assertThrows(UnsupportedOperationException.class, () -> s.supportedOptions().add(StandardSocketOptions.SO_REUSEADDR));
        for (final SocketOption<?> option : s.supportedOptions())
        {
            assertEquals(option.type(), s.getOption(option).getClass(), option.name());
        }
        assertThrows(UnsupportedOperationException.class, () -> s.getOption(StandardSocketOptions.SO_REUSEADDR));
        assertThrows(UnsupportedOperationException.class, () -> s.setOption(StandardSocketOptions.SO_REUSEADDR, true));
    }

    @Test
    void buffersAboveTheLargestAllowedAreLoweredToIt() throws Exception
    {
        final RdsSocket s = a.openSocket();
        s.setOption(RdsOptions.SO_SNDBUF, Integer.MAX_VALUE);
        s.setOption(RdsOptions.SO_RCVBUF, (64 << 20) + 1);
        assertEquals(64 << 20, s.getOption(RdsOptions.SO_SNDBUF), "maxSocketBufferBytes' default");
        assertEquals(64 << 20, s.getOption(RdsOptions.SO_RCVBUF));
        s.setOption(RdsOptions.SO_SNDBUF, 4096);
        assertEquals(4096, s.getOption(RdsOptions.SO_SNDBUF), "below the bound, as set");
        assertThrows(IllegalArgumentException.class, () -> s.setOption(RdsOptions.SO_RCVBUF, 0));
        assertEquals(64 << 20, s.getOption(RdsOptions.SO_RCVBUF));
    }

    @Test
    void aSendLargerThanTheLoweredSendBufferIsEMSGSIZE() throws Exception
    {
        final RdsStack small = stacks.open(stacks.config("nc-small").toBuilder()
            .maxSocketBufferBytes(256 << 10).sendBufferBytes(64 << 10).receiveBufferBytes(64 << 10).build());
        final RdsSocket s = small.openSocket().bind(new InetSocketAddress(A_IP, 6010));
        s.setOption(RdsOptions.SO_SNDBUF, 1 << 20);
        assertEquals(256 << 10, s.getOption(RdsOptions.SO_SNDBUF));
        s.configureBlocking(false);
        final InetSocketAddress to = new InetSocketAddress(A_IP, 6011);
        assertEquals(RdsResult.EMSGSIZE, s.send(ByteBuffer.allocate((256 << 10) + 1), to));
        assertEquals(256 << 10, s.send(ByteBuffer.allocate(256 << 10), to));
    }

    @Test
    void lingerIsOffByDefaultAndAnyNegativeValueReadsBackAsMinusOne() throws Exception
    {
        final RdsSocket s = a.openSocket();
        assertEquals(-1, s.getOption(RdsOptions.SO_LINGER));
        s.setOption(RdsOptions.SO_LINGER, 3);
        assertEquals(3, s.getOption(StandardSocketOptions.SO_LINGER));
        s.setOption(RdsOptions.SO_LINGER, 0);
        assertEquals(0, s.getOption(RdsOptions.SO_LINGER));
        s.setOption(RdsOptions.SO_LINGER, -7);
        assertEquals(-1, s.getOption(RdsOptions.SO_LINGER));
    }

    @Test
    void aClosedChannelThrowsClosedChannelExceptionButStillListsItsOptions() throws Exception
    {
        final RdsSocket s = a.openSocket().bind(new InetSocketAddress(A_IP, 6002));
        s.close();
        assertThrows(ClosedChannelException.class, s::getLocalAddress);
        // closed is checked first, as NIO does
        assertThrows(ClosedChannelException.class, () -> s.bind(UnixDomainSocketAddress.of("/tmp/x")));
        assertThrows(ClosedChannelException.class, () -> s.getOption(RdsOptions.SO_LINGER));
        assertThrows(ClosedChannelException.class, () -> s.setOption(RdsOptions.SO_LINGER, 1));
        assertEquals(7, s.supportedOptions().size());
        assertEquals(new InetSocketAddress(A_IP, 6002), s.localAddress(), "localAddress() keeps answering");
    }
}
