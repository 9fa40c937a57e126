package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.OneWayStream;
import org.rds4j.core.test.PingPong;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Which of the driver's threads runs a client's sends ({@code driver_sends_by_agent}, {@code driver_sends_by_conductor}):
 * the stack's agent runs a stream of sends of {@link DriverSession#AGENT_STREAM_PAYLOAD} bytes or more from the
 * client's ring itself, so that each payload is copied into the socket's send ring and out of it on one CPU; the
 * conductor runs them only while the agent is parked (or the ring had no room and they came over the connection), and
 * then wakes the agent. Uses 127.0.76.x.
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

    /**
     * A send the conductor runs is queued for the stack's agent, which may be parked: the conductor wakes it (after the
     * read of the rings, or the turn of its loop, that queued it), or the message waits for the agent's next timed
     * wake-up. Each request waits until the agent has been parked a while and the conductor sleeps
     * ({@link DriverStacks#asleep}); the conductor, rung by the client, runs most of them ({@link DriverDoorbellTest}). Their round trips' median was 0.6-1.1 ms here, and 17 ms without the wake
     * (12 to 55 ms each): the bound of 5 ms tells the two apart with room on both sides.
     */
    @Test
    void aSendTheConductorRunsWakesTheParkedAgent()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("send-w"));
            try (RdsStack a = stacks.attach(driver, "send-a"); RdsStack b = stacks.attach(driver, "send-b"))
            {
                final long byConductor = driver.counters().get("driver_sends_by_conductor");
                final int roundTrips = 21;
                final long[] roundTripNs = new long[roundTrips];
                PingPong.run(a.openSocket().bind(new InetSocketAddress(ip("127.0.76.3"), 7000)),
                    b.openSocket().bind(new InetSocketAddress(ip("127.0.76.4"), 7000)), roundTrips,
                    DriverStacks.asleep(driver), () -> { }, () -> { }, roundTripNs);
                final long conductor = driver.counters().get("driver_sends_by_conductor") - byConductor;
                assertTrue(conductor >= roundTrips / 2, "the conductor ran " + conductor + " of " + 2 * roundTrips +
                    " sends");
                final long[] sorted = roundTripNs.clone();
                Arrays.sort(sorted);
                assertTrue(sorted[roundTrips / 2] < 5_000_000L, "median round trip " + sorted[roundTrips / 2] +
                    " ns: " + Arrays.toString(roundTripNs));
            }
        });
    }
}
