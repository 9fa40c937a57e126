package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.ThreadMeter;
import org.rds4j.core.test.ThreadWakeUps;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A driver and an attached client, idle, with a client thread blocked in {@code receive}, use almost no CPU: the
 * conductor sleeps in its selector, the client's reader in its read, the receiving thread parked, the driver's
 * agent in its idle wait. Measured over a 2 s window as {@code IdleAgentTest} measures an embedded stack: the CPU
 * time of all their threads, and the wake-ups of the conductor and the client's reader.
 */
class DriverIdleTest
{
    private static final Duration WINDOW = Duration.ofSeconds(2);

    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void anIdleDriverAndClientUseAlmostNoCpu() throws Exception
    {
        // short names: the kernel keeps 15 characters of a thread's name, and the wake-ups are read by name
        final DriverServer driver = stacks.start(stacks.config("d"));
        try (RdsStack client = stacks.attach(driver, "c"))
        {
            final RdsSocket socket = client.openSocket().bind(new InetSocketAddress(ip("127.0.73.1"), 7000));
            final Thread receiver = new Thread(() ->
            {
                try
                {
                    socket.receive(ByteBuffer.allocate(8));
                }
                catch (final Exception ex)
                {
                    // closed at the end of the test
                }
            }, "idle-receiver");
            receiver.start();
            Await.until(WINDOW, () -> Await.blockedIn(receiver, "receiveBlocking") && Await.idling(receiver),
                () -> "receiver parked");

            final ThreadMeter meter = ThreadMeter.ofStacks("d", "c").and(receiver);
            final ThreadWakeUps conductor = ThreadWakeUps.of("rds4j-driver-d");
            final ThreadWakeUps reader = ThreadWakeUps.of("rds4j-driver-client-c");
            final long cpu0 = meter.cpuNs();
            final long conductor0 = conductor.count();
            final long reader0 = reader.count();
            final long start = System.nanoTime();
            Thread.sleep(WINDOW.toMillis()); // the measurement window
            final double seconds = (System.nanoTime() - start) / 1e9;
            final double cpuShare = (meter.cpuNs() - cpu0) / 1e9 / seconds;
            final long conductorWakeUps = conductor.count() - conductor0;
            final long readerWakeUps = reader.count() - reader0;
            System.out.printf("idle driver and client over %.2f s: their threads used %.2f%% of a core; the conductor "
                + "woke %d times, the client's reader %d%n", seconds, cpuShare * 100, conductorWakeUps, readerWakeUps);
            assertTrue(cpuShare < 0.05, "CPU share " + cpuShare);
            assertTrue(conductorWakeUps < 10, "the conductor woke " + conductorWakeUps + " times");
            assertTrue(readerWakeUps < 10, "the client's reader woke " + readerWakeUps + " times");
            socket.close();
            receiver.join(WINDOW.toMillis());
        }
    }
}
