package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.rds4j.core.test.Await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The duty cycle's lock: its three states, taking it again on the owning thread, and a close's wait for it. */
class DutyCycleLockTest
{
    private final DutyCycleLock lock = new DutyCycleLock();

    @Test
    void aCycleAndAHoldEachTakeItFromFreeAndGiveItBack() throws Exception
    {
        assertTrue(lock.tryAcquire(false));
        assertEquals(DutyCycleLock.CYCLE, lock.state());
        assertFalse(otherThreadTakes(true));
        lock.release();
        assertEquals(DutyCycleLock.FREE, lock.state());

        assertTrue(lock.tryAcquire(true));
        assertEquals(DutyCycleLock.HOLD, lock.state());
        assertFalse(otherThreadTakes(false));
        lock.releaseHold();
        assertEquals(DutyCycleLock.FREE, lock.state());
        assertTrue(otherThreadTakes(false));
    }

    @Test
    void theOwnerTakesItAgainOneLevelDeeper()
    {
        assertEquals(0, lock.holdCount());
        assertTrue(lock.tryAcquire(false));
        assertTrue(lock.tryAcquire(true));
        assertEquals(2, lock.holdCount());
        assertEquals(DutyCycleLock.CYCLE, lock.state(), "the first taking says what it is held for");
        lock.release();
        assertEquals(1, lock.holdCount());
        assertEquals(DutyCycleLock.CYCLE, lock.state());
        lock.release();
        assertEquals(0, lock.holdCount());
        assertEquals(DutyCycleLock.FREE, lock.state());
    }

    @Test
    void acquireWaitsForTheOwnerToLetGo() throws Exception
    {
        assertTrue(lock.tryAcquire(false));
        final int[] stateSeen = {-1};
        final Thread closing = new Thread(() ->
        {
            lock.acquire();
            stateSeen[0] = lock.state();
            lock.release();
        }, "closing");
        closing.start();
        Await.until(Duration.ofSeconds(10), () -> closing.getState() == Thread.State.TIMED_WAITING,
            () -> "the closing thread waits between its tries");
        assertTrue(closing.isAlive(), "it cannot take the lock while this thread holds it");
        lock.release();
        closing.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(closing.isAlive());
        assertEquals(DutyCycleLock.CYCLE, stateSeen[0]);
        assertEquals(DutyCycleLock.FREE, lock.state());
    }

    private boolean otherThreadTakes(final boolean hold) throws Exception
    {
        return CompletableFuture.supplyAsync(() ->
        {
            final boolean taken = lock.tryAcquire(hold);
            if (taken)
            {
                lock.release();
            }
            return taken;
        }).get(10, TimeUnit.SECONDS);
    }
}
