package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.StackFixture;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every test of {@link NotificationTest}, with each stack attached to a driver of its own; and the driver's own. */
class DriverNotificationTest extends NotificationTest
{
    private final DriverStacks drivers = new DriverStacks();

    @Override
    StackFixture fixture()
    {
        return new DriverStacks();
    }

    @AfterEach
    void closeDrivers()
    {
        drivers.close();
    }

    /**
     * The client returns ENOBUFS from its own look at the driver's map, and tells the driver with a frame that the
     * conductor runs; when the agent applies the update that frees the port first, that update finds no refusal to
     * notify. The driver must notify once it runs the frame, or the application waits for a notification that
     * never comes (a loop of the shared test under load lost it in 30 of 400 runs). Here the conductor is held until
     * the update is applied. Two refusals before the notification share it: the client tells the driver once per
     * destination until the notification comes (two frames run after the port freed would bring two), and again
     * after it.
     */
    @Test
    void aRefusalTheDriverLearnsOfAfterItsPortFreedIsNotifiedOnce() throws Exception
    {
        final DriverServer driverA = drivers.start(drivers.config("late-a"));
        final DriverServer driverB = drivers.start(drivers.config("late-b"));
        try (RdsStack a = drivers.attach(driverA, "late-ca"); RdsStack b = drivers.attach(driverB, "late-cb"))
        {
            final RdsSocket sa = a.openSocket().bind(new InetSocketAddress(A_IP, 106));
            final RdsSocket sb = b.openSocket().bind(new InetSocketAddress(B_IP, 206));
            sb.setOption(RdsOptions.SO_RCVBUF, 1000);
            final Recorder recorder = new Recorder();
            sa.setNotificationListener(recorder);
            final int sent = sendUntilENOBUFS(sa, sb.localAddress()); // not monitoring: nothing remembered
            awaitDelivered(sb, sent);
            sa.setOption(RdsOptions.RDS_CONG_MONITOR, true); // answered by the driver: its socket monitors now

            final CountDownLatch held = new CountDownLatch(1);
            final CountDownLatch release = new CountDownLatch(1);
            driverA.execute(() ->
            {
                held.countDown();
                try
                {
                    release.await();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(held.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the conductor held");
            assertEquals(RdsResult.ENOBUFS, sa.send(numbered(-1), sb.localAddress()));
            assertEquals(RdsResult.ENOBUFS, sa.send(numbered(-2), sb.localAddress()), "a second refusal shares it");
            drain(sb, 0, sent, sa.localAddress());
            Await.until(WAIT, () -> !driverA.stack().congestionMap(B_IP).isCongested(206),
                () -> "the update applied by A's driver's agent");
            pollAll(sa);
            assertEquals(List.of(), recorder.uncongested, "the refusal is not the driver's yet");
            release.countDown();

            Await.until(WAIT, () -> pollAll(sa) >= 0 && !recorder.uncongested.isEmpty(), () -> "uncongested");
            pingBarrier(sa);
            pollAll(sa);
            assertEquals(List.of(sb.localAddress()), recorder.uncongested, "exactly once");

            // the notification came: a refusal after it, once the port is congested again, is told and notified anew
            final int again = sendUntilENOBUFS(sa, sb.localAddress());
            awaitDelivered(sb, again);
            drain(sb, 0, again, sa.localAddress());
            Await.until(WAIT, () -> pollAll(sa) >= 0 && recorder.uncongested.size() == 2, () -> "uncongested again");
        }
    }
}
