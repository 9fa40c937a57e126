package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsStack;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.PingPong;
import org.rds4j.core.test.ThreadWakeUps;

import java.net.InetSocketAddress;
import java.time.Duration;

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
                final ThreadWakeUps reader = ThreadWakeUps.of("rds4j-driver-client-read-c");
                final long[] woke = new long[1];
                PingPong.run(client.openSocket().bind(new InetSocketAddress(ip("127.0.75.1"), 7000)),
                    client.openSocket().bind(new InetSocketAddress(ip("127.0.75.2"), 7000)), ROUND_TRIPS, i -> 0,
                    () -> woke[0] = reader.count(), () -> woke[0] = reader.count() - woke[0]);
                assertTrue(woke[0] < ROUND_TRIPS / 10, "the client's reader woke " + woke[0] + " times in " +
                    ROUND_TRIPS + " round trips");
            }
        });
    }
}
