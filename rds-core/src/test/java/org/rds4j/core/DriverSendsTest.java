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
 * Which of the driver's threads runs a client's sends ({@code driver_sends_by_agent}, {@code driver_sends_by_conductor}):
 * the stack's agent runs a stream of sends of {@link DriverSession#AGENT_STREAM_PAYLOAD} bytes or more from the
 * client's ring itself, so that each payload is copied into the socket's send ring and out of it on one CPU; the
 * conductor runs them only while the agent is parked (or the ring had no room and they came over the connection).
 * Uses 127.0.76.x.
 */
class DriverSendsTest
{
    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    /**
     * 20,000 messages of 1 KiB from one client to another, each sent as soon as the sender's buffer has room: every
     * send runs once, and the agent runs most (the conductor 900-3,400 of them, those that came while the agent was
     * parked; 18,941 when only a send into an empty buffer was the agent's).
     */
    @Test
    void aStreamOfLargeSendsIsRunByTheAgent()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("send-d"));
            try (RdsStack receiving = stacks.attach(driver, "send-r"); RdsStack sending = stacks.attach(driver, "send-s"))
            {
                final RdsSocket from = sending.openSocket().bind(new InetSocketAddress(ip("127.0.76.1"), 7000));
                final RdsSocket to = receiving.openSocket().bind(new InetSocketAddress(ip("127.0.76.2"), 7000));
                final long byAgent = driver.counters().get("driver_sends_by_agent");
                final long byConductor = driver.counters().get("driver_sends_by_conductor");
                final int messages = 20_000;
                OneWayStream.run(from, to, messages, DriverSession.AGENT_STREAM_PAYLOAD);
                final long agent = driver.counters().get("driver_sends_by_agent") - byAgent;
                final long conductor = driver.counters().get("driver_sends_by_conductor") - byConductor;
                assertEquals(messages, agent + conductor, "each send ran once");
                assertTrue(conductor < messages / 2, "the conductor ran " + conductor + " of " + messages + " sends");
            }
        });
    }
}
