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
 * The ring's doorbell is never lost: a client's frame written while the driver's conductor goes to sleep, or while
 * the driver's agent stops reading the rings, is read by a last look or rung for ({@link DriverRing#takeDoorbell}).
 * Request and reply, one at a time between two clients of one driver, so that each request races the conductor's or
 * the agent's going to sleep; a lost doorbell leaves a request unread, and its sender's receive times out.
 */
class DriverDoorbellTest
{
    private static final int ROUND_TRIPS = 20_000;

    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    /**
     * Back to back, the agent reads the rings between the requests (it yields before it parks) and runs the sends
     * itself: the conductor sleeps throughout, and no client rings it (it woke about twice per round trip when it
     * read every request, and 12,000 to 13,000 times when it armed the doorbells as it slept whenever the agent's last
     * cycle had work, which a ping-pong's always has).
     */
    @Test
    void everyRequestIsReadWhileTheConductorSleepsBetweenThem()
    {
        // a call that waits for the driver's reply (bind) has no timeout of its own: a doorbell never rung hangs it
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("bell-d"));
            final ThreadWakeUps conductor = ThreadWakeUps.of("rds4j-driver-bell-d");
            final long[] woke = new long[1];
            roundTrips(driver, ROUND_TRIPS, PingPong.Pause.NONE, () -> woke[0] = conductor.count(),
                () -> woke[0] = conductor.count() - woke[0]);
            assertTrue(woke[0] < ROUND_TRIPS / 10, "the conductor woke " + woke[0] + " times in " + ROUND_TRIPS +
                " round trips");
        }, "a frame in the ring was never read");
    }

    /**
     * With pauses up to a millisecond before the requests, the agent parks between many of them (after its idle
     * yields) and arms the doorbells as it stops; requests race that moment. An agent that stopped without arming
     * them would leave the first request after its park unread, with the conductor asleep.
     */
    @Test
    void everyRequestIsReadWhileTheAgentStopsBetweenThem()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> roundTrips(stacks.start(stacks.config("bell-p")),
            2_000, PingPong.Pause.nanos(i -> (i % 11) * 100_000L), () -> { }, () -> { }),
            "a frame in the ring was never read");
    }

    /**
     * Each request waits until the agent has been parked a while and the conductor sleeps ({@link DriverStacks#asleep}),
     * and the clients' rings are armed (by the agent as it stopped, or by the conductor as it slept): each request
     * rings and wakes the conductor, which runs it. An agent that parked without arming them would leave each request
     * to its next timed wake-up (up to 100 ms later), and the conductor would not wake at all. A request may meet the
     * agent awake for its heartbeat (it yields for a few hundred microseconds every 100 ms) and be run by it: hence at
     * least half, not all.
     */
    @Test
    void aRequestAfterTheAgentParkedWakesTheConductor()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("bell-q"));
            final ThreadWakeUps conductor = ThreadWakeUps.of("rds4j-driver-bell-q");
            final long[] woke = new long[1];
            final int roundTrips = 20;
            roundTrips(driver, roundTrips, DriverStacks.asleep(driver),
                () -> woke[0] = conductor.count(), () -> woke[0] = conductor.count() - woke[0]);
            assertTrue(woke[0] >= roundTrips / 2, "the conductor woke " + woke[0] + " times for " + roundTrips +
                " requests after a pause");
        }, "a frame in the ring was never read");
    }

    private void roundTrips(final DriverServer driver, final int roundTrips, final PingPong.Pause pause,
        final Runnable begin, final Runnable end) throws Exception
    {
        try (RdsStack a = stacks.attach(driver, "bell-a"); RdsStack b = stacks.attach(driver, "bell-b"))
        {
            PingPong.run(a.openSocket().bind(new InetSocketAddress(ip("127.0.74.1"), 7000)),
                b.openSocket().bind(new InetSocketAddress(ip("127.0.74.2"), 7000)), roundTrips, pause, begin, end);
        }
    }
}
