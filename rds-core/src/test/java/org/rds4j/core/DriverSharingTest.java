package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.DriverStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Two processes' stacks attached to one driver share its stack, as two processes share the kernel's: ports of one
 * address are theirs in turn (a port the other holds is {@code EADDRINUSE}), and they reach each other through
 * the driver's loopback path, with no network connection.
 */
class DriverSharingTest
{
    private static final InetAddress HOST = ip("127.0.72.1");
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void twoClientsOfOneDriverShareItsAddressAndTalkThroughItsLoopback() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("share"));
        final String directory = driver.directory().toString();
        try (RdsStack first = RdsStack.open(stacks.config("first").toBuilder().driverDirectory(directory).build());
             RdsStack second = RdsStack.open(stacks.config("second").toBuilder().driverDirectory(directory).build()))
        {
            final RdsSocket a = first.openSocket().bind(new InetSocketAddress(HOST, 6000));
            final RdsSocket b = second.openSocket().bind(new InetSocketAddress(HOST, 6001));
            final RdsException taken = assertThrows(RdsException.class,
                () -> second.openSocket().bind(new InetSocketAddress(HOST, 6000)));
            assertEquals(RdsResult.EADDRINUSE, taken.code());
            a.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
            b.setOption(RdsOptions.SO_RCVTIMEO, WAIT);

            for (int i = 0; i < 100; i++)
            {
                assertEquals(Integer.BYTES, a.send(ByteBuffer.allocate(Integer.BYTES).putInt(0, i), b.localAddress()));
            }
            final ByteBuffer dst = ByteBuffer.allocate(16);
            for (int i = 0; i < 100; i++)
            {
                dst.clear();
                assertEquals(a.localAddress(), b.receive(dst));
                assertEquals(Integer.BYTES, dst.position());
                assertEquals(i, dst.getInt(0), "in order");
                assertEquals(Integer.BYTES, b.send(dst.flip(), a.localAddress()));
            }
            for (int i = 0; i < 100; i++)
            {
                dst.clear();
                assertEquals(b.localAddress(), a.receive(dst));
                assertEquals(i, dst.getInt(0), "the echo, in order");
            }

            final List<RdsStack.ConnectionInfo> connections = first.connections();
            assertEquals(1, connections.size(), connections.toString());
            assertEquals("loop", connections.get(0).transport(), "the driver's loopback path, not the network");
            assertEquals(connections, second.connections(), "the same stack");
        }
    }
}
