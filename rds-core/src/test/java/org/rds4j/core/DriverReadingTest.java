package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.ThreadWakeUps;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A client's thread blocked in {@code receive} reads the driver's connection itself, as it drives an embedded stack:
 * the message it waits for wakes that thread only, not the client's reader thread as well.
 */
class DriverReadingTest
{
    private static final int ROUND_TRIPS = 5_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    /**
     * Request and reply between two sockets of one client, each side blocked in {@code receive} while the other works:
     * a call waits nearly all the time, so its thread reads, and the reader thread sleeps (it woke for each of the
     * about 10,000 frames when it read them all).
     */
    @Test
    void aThreadBlockedInReceiveReadsItsMessageItself()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("read-d"));
            try (RdsStack client = RdsStack.open(stacks.config("read-c").toBuilder()
                .driverDirectory(driver.directory().toString()).build()))
            {
                final RdsSocket requester = client.openSocket().bind(new InetSocketAddress(ip("127.0.75.1"), 7000));
                final RdsSocket responder = client.openSocket().bind(new InetSocketAddress(ip("127.0.75.2"), 7000));
                requester.setOption(RdsOptions.SO_RCVTIMEO, TIMEOUT);
                responder.setOption(RdsOptions.SO_RCVTIMEO, TIMEOUT);
                final ThreadWakeUps reader = ThreadWakeUps.of("rds4j-driver-client-read-c");
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
                }, "read-echo");
                echo.start();
                final long before = reader.count();
                final ByteBuffer request = ByteBuffer.allocate(8);
                final ByteBuffer reply = ByteBuffer.allocate(8);
                for (long i = 0; i < ROUND_TRIPS; i++)
                {
                    request.clear().putLong(0, i);
                    assertEquals(8, requester.send(request, responder.localAddress()));
                    reply.clear();
                    assertEquals(responder.localAddress(), requester.receive(reply), "round trip " + i);
                    assertEquals(i, reply.getLong(0), "round trip " + i);
                }
                final long woke = reader.count() - before;
                echo.join(TIMEOUT.toMillis());
                assertNull(failed.get(), () -> "the echo failed: " + failed.get());
                assertTrue(woke < ROUND_TRIPS / 10, "the client's reader woke " + woke + " times in " + ROUND_TRIPS +
                    " round trips");
            }
        });
    }
}
