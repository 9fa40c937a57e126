package org.rds4j.core;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The receive queue's lock: reentrant, exclusive, and a thread that waits for it gets it once it is given back. */
class TakeLockTest
{
    private final TakeLock lock = new TakeLock();

    @Test
    void theOwnerTakesItAgainAndOthersGetItOnlyWhenEveryHoldIsGivenBack() throws Exception
    {
        lock.lock();
        assertTrue(lock.tryLock(), "reentrant");
        assertFalse(tryLockElsewhere(), "held twice");
        lock.unlock();
        assertFalse(tryLockElsewhere(), "held once");
        lock.unlock();
        assertTrue(tryLockElsewhere(), "free");
    }

    @Test
    void onlyTheOwnerGivesItBack() throws Exception
    {
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "never taken");
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final Thread owner = new Thread(() ->
        {
            lock.lock();
            held.countDown();
            await(done);
            lock.unlock();
        });
        owner.start();
        assertTrue(held.await(10, TimeUnit.SECONDS));
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "held by another thread");
        done.countDown();
        owner.join(10_000);
        assertTrue(lock.tryLock(), "given back by its owner");
    }

    /** A waiter past its spins and yields parks; it must still get the lock soon after a long hold ends. */
    @Test
    void aThreadThatWaitedThroughALongHoldGetsTheLockWhenItIsGivenBack() throws Exception
    {
        lock.lock();
        final CountDownLatch started = new CountDownLatch(1);
        final AtomicBoolean got = new AtomicBoolean();
        final Thread waiter = new Thread(() ->
        {
            started.countDown();
            lock.lock();
            got.set(true);
            lock.unlock();
        });
        waiter.start();
        assertTrue(started.await(10, TimeUnit.SECONDS));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (waiter.getState() != Thread.State.TIMED_WAITING)
        {
            assertTrue(System.nanoTime() < deadline, "the waiter never parked: " + waiter.getState());
            Thread.onSpinWait();
        }
        assertFalse(got.get(), "took a held lock");
        lock.unlock();
        waiter.join(10_000);
        assertTrue(got.get(), "the waiter did not get the lock given back");
    }

    @Test
    void threadsTakingTurnsNeverHoldItTogether() throws Exception
    {
        final int threads = 4;
        final int rounds = 200_000;
        final long[] count = {0};
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            workers[t] = new Thread(() ->
            {
                try
                {
                    for (int i = 0; i < rounds; i++)
                    {
                        lock.lock();
                        try
                        {
                            count[0]++; // a plain field: a lost update shows two holders
                        }
                        finally
                        {
                            lock.unlock();
                        }
                    }
                }
                catch (final Throwable ex)
                {
                    failure.set(ex);
                }
            });
            workers[t].start();
        }
        for (final Thread worker : workers)
        {
            worker.join(60_000);
            assertFalse(worker.isAlive(), "a worker is stuck");
        }
        assertEquals(null, failure.get());
        lock.lock();
        assertEquals((long)threads * rounds, count[0]);
        lock.unlock();
    }

    private boolean tryLockElsewhere() throws InterruptedException
    {
        final AtomicBoolean got = new AtomicBoolean();
        final Thread other = new Thread(() ->
        {
            got.set(lock.tryLock());
            if (got.get())
            {
                lock.unlock();
            }
        });
        other.start();
        other.join(10_000);
        return got.get();
    }

    private static void await(final CountDownLatch latch)
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
