package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.OneWayStream;

import java.net.InetSocketAddress;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * How a driver hands received messages to its clients ({@code driver_delivered_past_queue}): a message for a
 * socket whose receive queue is empty the agent writes straight into the client's output, past the queue; the
 * others wait in the queue for the session to poll them, and the order holds across the two ways.
 * Uses 127.0.77.x.
 */
class DriverDeliveryTest
{
    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    /**
     * 20,000 messages of 64 B from one client to another: each is delivered once, exactly once and in order (the
     * stream checks every number), and most go past the queue (none with the rule undone), in runs of the loopback
     * path's batches (none when each went alone).
     */
    @Test
    void aStreamIsHandedToTheClientPastTheSocketsQueue()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("deliver-d"));
            try (RdsStack receiving = stacks.attach(driver, "deliver-r");
                 RdsStack sending = stacks.attach(driver, "deliver-s"))
            {
                final RdsSocket from = sending.openSocket().bind(new InetSocketAddress(ip("127.0.77.1"), 7000));
                final RdsSocket to = receiving.openSocket().bind(new InetSocketAddress(ip("127.0.77.2"), 7000));
                final long delivered = driver.stack().counters().get("recv_delivered");
                final long past = driver.counters().get("driver_delivered_past_queue");
                final long runs = driver.stack().counters().get("recv_runs");
                final int messages = 20_000;
                OneWayStream.run(from, to, messages, 64);
                assertEquals(messages, driver.stack().counters().get("recv_delivered") - delivered,
                    "messages the driver's stack delivered to its sockets");
                final long pastQueue = driver.counters().get("driver_delivered_past_queue") - past;
                assertTrue(pastQueue > messages / 2 && pastQueue <= messages,
                    pastQueue + " of " + messages + " went past the queue");
                final long pastRuns = driver.stack().counters().get("recv_runs") - runs;
                assertTrue(pastRuns > 0 && pastRuns < pastQueue, pastRuns + " runs");
            }
        });
    }
}
