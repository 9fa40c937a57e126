package org.rds4j.core;

import org.agrona.concurrent.SleepingIdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.AgentGate;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.OneWayStream;
import org.rds4j.core.test.PingPong;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Which of the driver's threads runs a client's sends ({@code driver_sends_by_agent}, {@code driver_sends_by_conductor}):
 * the stack's agent runs a stream of sends from the client's ring itself, so that each payload is copied into the
 * connection's transport on the CPU that writes it out; the conductor runs them only while the agent is parked, and
 * then wakes the agent. A client whose ring is full waits
 * for room rather than sending over the connection ({@code driver_frames_on_connection}). Uses 127.0.76.x.
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
     * 20,000 messages from one client to another, each sent as soon as the sender's buffer has room: every send runs
     * once. 1 KiB: the agent runs most, the conductor 0-3,400 of them, those that came while the agent was parked
     * (18,941 when only a send into an empty buffer was the agent's). 64 B: the two clients' loopback path never takes
     * appended frames, so a small send behind unacked ones stays the conductor's (19,195-19,998; 133 when the agent
     * ran them regardless). That the agent runs and appends small sends where the transport takes them, TCP's
     * {@code DriverAgentAppendTest} counts.
     */
    @ParameterizedTest
    @CsvSource({"64, false", "1024, true"})
    void aStreamOfSendsIsRunByTheAgentWhereItMayAppendThemOrTheyAreLarge(final int size, final boolean byAgent)
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("send-d"));
            try (RdsStack receiving = stacks.attach(driver, "send-r"); RdsStack sending = stacks.attach(driver, "send-s"))
            {
                final RdsSocket from = sending.openSocket().bind(new InetSocketAddress(ip("127.0.76.1"), 7000));
                final RdsSocket to = receiving.openSocket().bind(new InetSocketAddress(ip("127.0.76.2"), 7000));
                // the connection up first: before, nothing is appended and a socket cannot learn that nothing ever
                // will (up to a send buffer of 64 B sends were the agent's then: 12,289 left to the conductor once)
                OneWayStream.run(from, to, 1, size);
                final long agentBefore = driver.counters().get("driver_sends_by_agent");
                final long conductorBefore = driver.counters().get("driver_sends_by_conductor");
                final int messages = 20_000;
                OneWayStream.run(from, to, messages, size);
                final long agent = driver.counters().get("driver_sends_by_agent") - agentBefore;
                final long conductor = driver.counters().get("driver_sends_by_conductor") - conductorBefore;
                assertEquals(messages, agent + conductor, "each send ran once");
                final String ran = size + " B: the conductor ran " + conductor + " of " + messages + " sends";
                System.out.println(ran);
                assertEquals(byAgent, conductor < messages / 2, ran);
            }
        });
    }

    /**
     * A send the conductor runs is queued for the stack's agent, which may be parked: the conductor wakes it (after the
     * read of the rings, or the turn of its loop, that queued it), or the message waits for the agent's next timed
     * wake-up. Here the driver's agent idles by sleeping an hour (an application's strategy, which also tells the
     * clients to ring as it begins to sleep), so only that wake lets a round trip end within the test's minute. Each
     * request waits until the agent sleeps and the conductor too ({@link DriverStacks#asleep}); the conductor, rung by
     * the client, runs most of them ({@link DriverDoorbellTest}). Until 2026-11-29 this test bounded the median round
     * trip (5 ms, against 17 ms without the wake), which two busy loops on the two cores could break.
     */
    @Test
    void aSendTheConductorRunsWakesTheParkedAgent()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final DriverServer driver = stacks.start(stacks.config("send-w"),
                new SleepingIdleStrategy(TimeUnit.HOURS.toNanos(1)));
            try (RdsStack a = stacks.attach(driver, "send-a"); RdsStack b = stacks.attach(driver, "send-b"))
            {
                final long byConductor = driver.counters().get("driver_sends_by_conductor");
                final int roundTrips = 21;
                PingPong.run(a.openSocket().bind(new InetSocketAddress(ip("127.0.76.3"), 7000)),
                    b.openSocket().bind(new InetSocketAddress(ip("127.0.76.4"), 7000)), roundTrips,
                    DriverStacks.asleep(driver), () -> { }, () -> { }, new long[roundTrips]);
                final long conductor = driver.counters().get("driver_sends_by_conductor") - byConductor;
                assertTrue(conductor >= roundTrips / 2, "the conductor ran " + conductor + " of " + 2 * roundTrips +
                    " sends");
            }
        });
    }

    /**
     * With the driver held (its conductor in a task, its agent at its gate), a client whose 4 MiB send buffer admits
     * four times what its 1 MiB ring holds writes 1 KiB sends to its own other socket until the ring is full and then
     * waits for room in it; let go, every message arrives once and in order (while the receiving thread's reports of
     * what it took wait for the same lock as the writer), and only the one frame longer than the ring takes (256 KiB)
     * came on the connection. Until 2026-11-29 the frames past a full ring went on the connection, a system call
     * each.
     */
    @Test
    void aClientWaitsForRoomInItsRingAndOnlyLongerFramesComeOnTheConnection()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () ->
        {
            final AgentGate gate = new AgentGate();
            final DriverServer driver = stacks.startGated(stacks.config("send-f"), gate);
            // one client sends to itself: its receiving thread's CONSUMED reports wait behind the writer too
            try (RdsStack client = stacks.attach(driver, "send-fc"))
            {
                final RdsSocket from = client.openSocket().bind(new InetSocketAddress(ip("127.0.76.5"), 7000));
                from.setOption(RdsOptions.SO_SNDBUF, 4 << 20);
                final RdsSocket to = client.openSocket().bind(new InetSocketAddress(ip("127.0.76.6"), 7000));
                to.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
                final long onConnection = driver.counters().get("driver_frames_on_connection");

                gate.hold = true;
                Await.until(Duration.ofSeconds(10), () -> gate.held, () -> "the driver's agent held");
                final CountDownLatch release = new CountDownLatch(1);
                final CountDownLatch stuck = new CountDownLatch(1);
                driver.execute(() ->
                {
                    stuck.countDown();
                    awaitQuietly(release);
                });
                stuck.await();

                final int messages = 2048;
                final int large = 256 << 10;
                final AtomicInteger sent = new AtomicInteger();
                final AtomicReference<Exception> failed = new AtomicReference<>();
                final Thread writer = new Thread(() ->
                {
                    try
                    {
                        final ByteBuffer message = ByteBuffer.allocate(1024);
                        for (int i = 0; i < messages; i++)
                        {
                            message.clear().putInt(0, i);
                            from.send(message, to.localAddress());
                            sent.incrementAndGet();
                        }
                        from.send(ByteBuffer.allocate(large).putInt(0, messages), to.localAddress());
                    }
                    catch (final Exception ex)
                    {
                        failed.set(ex);
                    }
                }, "ring-writer");
                writer.start();
                try
                {
                    Await.until(Duration.ofSeconds(10), () -> parkedIn(writer, "offerToRing"),
                        () -> "the writer waits for room in its ring (" + sent.get() + " sent)");
                    // about 980 frames of 1 KiB fill the 1 MiB ring; the send buffer would have taken 4,096
                    assertTrue(sent.get() > 900 && sent.get() < 1024, sent.get() + " sent into the ring");
                }
                finally
                {
                    gate.hold = false;
                    release.countDown();
                }

                final ByteBuffer received = ByteBuffer.allocate(large + 1);
                for (int i = 0; i <= messages; i++)
                {
                    received.clear();
                    assertEquals(from.localAddress(), to.receive(received), "message " + i);
                    assertEquals(i < messages ? 1024 : large, received.position(), "message " + i + "'s length");
                    assertEquals(i, received.getInt(0), "message " + i + "'s number");
                }
                writer.join(10_000);
                assertNull(failed.get(), "the writer failed");
                assertEquals(1, driver.counters().get("driver_frames_on_connection") - onConnection,
                    "frames on the connection: the 256 KiB one only");
            }
        });
    }

    /** Whether the thread is parked within {@code method}, by one look at its stack. */
    private static boolean parkedIn(final Thread thread, final String method)
    {
        final List<String> methods = Arrays.stream(thread.getStackTrace()).map(StackTraceElement::getMethodName).toList();
        return methods.contains(method) && methods.contains("parkNanos");
    }

    private static void awaitQuietly(final CountDownLatch latch)
    {
        try
        {
            latch.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
