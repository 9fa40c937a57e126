package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.rds4j.core.test.Await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The duty cycle's lock: its states, taking it again on the owning thread, a close's wait for it, and lending it while
 * its owner sleeps.
 */
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

    @Test
    void aLentLockIsBorrowedForOneCycleAndTakenBackAfterIt() throws Exception
    {
        assertTrue(lock.tryAcquire(false));
        assertTrue(lock.lend());
        assertEquals(DutyCycleLock.IDLE, lock.state());
        assertFalse(otherThreadTakes(false), "lent is not free: only a borrower runs a cycle on it");
        assertFalse(otherThreadTakes(true));

        final CompletableFuture<Void> borrowerMayEnd = new CompletableFuture<>();
        final CompletableFuture<Boolean> secondBorrow = new CompletableFuture<>();
        final CompletableFuture<Boolean> borrowed = CompletableFuture.supplyAsync(() ->
        {
            if (!lock.tryBorrow())
            {
                return false;
            }
            secondBorrow.complete(CompletableFuture.supplyAsync(lock::tryBorrow).join());
            borrowerMayEnd.join();
            lock.giveBack();
            return true;
        });
        assertFalse(secondBorrow.get(10, TimeUnit.SECONDS), "one borrower at a time");
        assertEquals(DutyCycleLock.BORROWED, lock.state());
        // the owner's wait has ended (here on another thread: reclaim looks only at the state)
        final CompletableFuture<Void> reclaimed = CompletableFuture.runAsync(lock::reclaim);
        Await.until(Duration.ofSeconds(10), () -> !reclaimed.isDone() && lock.state() == DutyCycleLock.BORROWED,
            () -> "the borrower still runs its cycle");
        borrowerMayEnd.complete(null);
        assertTrue(borrowed.get(10, TimeUnit.SECONDS));
        reclaimed.get(10, TimeUnit.SECONDS);
        assertEquals(DutyCycleLock.CYCLE, lock.state());
        assertEquals(1, lock.holdCount(), "the owner stayed the owner");
        lock.release();
        assertEquals(DutyCycleLock.FREE, lock.state());
    }

    @Test
    void onlyTheOwnerHoldingItOnceForCyclesLendsIt() throws Exception
    {
        assertFalse(lock.lend(), "not held");
        assertTrue(lock.tryAcquire(true));
        assertFalse(lock.lend(), "a sender's hold is not lent");
        lock.releaseHold();
        assertTrue(lock.tryAcquire(false));
        assertTrue(lock.tryAcquire(false));
        assertFalse(lock.lend(), "held more deeply: the owner is inside a cycle");
        lock.release();
        assertFalse(CompletableFuture.supplyAsync(lock::lend).get(10, TimeUnit.SECONDS), "not by another thread");
        assertFalse(CompletableFuture.supplyAsync(lock::tryBorrow).get(10, TimeUnit.SECONDS), "not lent: no borrower");
        assertEquals(DutyCycleLock.CYCLE, lock.state());
        lock.release();
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
