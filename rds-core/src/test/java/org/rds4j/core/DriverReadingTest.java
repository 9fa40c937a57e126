package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSelector;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.PingPong;
import org.rds4j.core.test.ThreadWakeUps;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A client's thread blocked in a call reads the driver's connection itself, as it drives an embedded stack: the
 * message it waits for wakes that thread only, not the client's reader thread as well; and what else should end its
 * wait reaches it in the connection's selector.
 */
class DriverReadingTest
{
    private static final int ROUND_TRIPS = 5_000;
    private static final Duration WAIT = Duration.ofSeconds(5);

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

    /**
     * A select that waits reads the connection in its selector, where an unpark does not reach it: {@code wakeup()}
     * must wake it there. With a 60 s {@code driverTimeout} nothing else would for 15 s (its next heartbeat look).
     */
    @Test
    void wakeupEndsASelectWaitingInTheConnectionsSelector() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("read-w"));
        try (RdsStack client = RdsStack.open(stacks.config("read-wc").toBuilder().driverTimeout(Duration.ofSeconds(60))
            .driverDirectory(driver.directory().toString()).build()); RdsSelector selector = client.openSelector())
        {
            selector.register(client.openSocket().bind(new InetSocketAddress(ip("127.0.75.3"), 7000)),
                RdsSelector.OP_READ, null);
            final AtomicInteger found = new AtomicInteger(-1);
            final Thread selecting = new Thread(() -> found.set(selector.select(Long.MAX_VALUE)), "read-select");
            selecting.start();
            // the selecting thread itself waits in the connection's selector (it reads while it waits)
            Await.until(WAIT, () -> Await.blockedIn(selecting, "doSelect"), () -> "select waiting in the selector");
            selector.wakeup();
            selecting.join(WAIT.toMillis());
            assertFalse(selecting.isAlive(), "the select was not woken");
            assertEquals(0, found.get());
        }
    }
}
