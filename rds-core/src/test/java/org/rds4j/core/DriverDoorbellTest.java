package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.DriverStacks;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * The ring's doorbell is never lost: a client's frame written while the driver's conductor goes to sleep is read by
 * its last look or rung for ({@link DriverRing#takeDoorbell}). Request and reply, one at a time between two clients
 * of one driver, so that the conductor goes to sleep between nearly every pair of frames and each request races its
 * going to sleep; a lost doorbell leaves a request unread, and its sender's receive times out.
 */
class DriverDoorbellTest
{
    private static final int ROUND_TRIPS = 20_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void everyRequestIsReadWhileTheConductorSleepsBetweenThem()
    {
        // a call that waits for the driver's reply (bind) has no timeout of its own: a doorbell never rung hangs it
        assertTimeoutPreemptively(Duration.ofSeconds(60), this::roundTrips, "a frame in the ring was never read");
    }

    private void roundTrips() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("bell-d"));
        try (RdsStack a = attach(driver, "bell-a"); RdsStack b = attach(driver, "bell-b"))
        {
            final RdsSocket requester = a.openSocket().bind(new InetSocketAddress(ip("127.0.74.1"), 7000));
            final RdsSocket responder = b.openSocket().bind(new InetSocketAddress(ip("127.0.74.2"), 7000));
            requester.setOption(RdsOptions.SO_RCVTIMEO, TIMEOUT);
            responder.setOption(RdsOptions.SO_RCVTIMEO, TIMEOUT);
            final AtomicReference<Throwable> failed = new AtomicReference<>();
            final Thread echo = new Thread(() ->
            {
                final ByteBuffer buffer = ByteBuffer.allocate(8);
                try
                {
                    for (int i = 0; i < ROUND_TRIPS; i++)
                    {
                        buffer.clear();
                        final InetSocketAddress from = responder.receive(buffer);
                        buffer.flip();
                        responder.send(buffer, from);
                    }
                }
                catch (final Throwable ex)
                {
                    failed.set(ex);
                }
            }, "bell-echo");
            echo.start();
            final ByteBuffer request = ByteBuffer.allocate(8);
            final ByteBuffer reply = ByteBuffer.allocate(8);
            for (long i = 0; i < ROUND_TRIPS; i++)
            {
                request.clear().putLong(0, i);
                assertEquals(8, requester.send(request, responder.localAddress()));
                reply.clear();
                // a lost doorbell on either side: the receive times out (SO_RCVTIMEO) and throws
                assertEquals(responder.localAddress(), requester.receive(reply), "round trip " + i);
                assertEquals(i, reply.getLong(0), "round trip " + i);
            }
            echo.join(TIMEOUT.toMillis());
            assertNull(failed.get(), () -> "the echo failed: " + failed.get());
        }
    }

    private RdsStack attach(final DriverServer driver, final String name)
    {
        return RdsStack.open(stacks.config(name).toBuilder().driverDirectory(driver.directory().toString()).build());
    }
}
