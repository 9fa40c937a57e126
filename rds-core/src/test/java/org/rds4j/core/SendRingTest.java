package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A socket's send ring on its own: aligned claims, records freed out of order and reclaimed in order, the padding
 * at the ring's end, no room and too long, views, close, concurrent writers, and the stack reading committed records
 * in order.
 */
class SendRingTest
{
    private static final int RING = 4096;
    private static final Path SHM = Path.of("/dev/shm");

    private Path directory;
    private SendRing ring;

    @BeforeEach
    void directory() throws Exception
    {
        assumeTrue(Files.isDirectory(SHM), "no /dev/shm");
        directory = Files.createTempDirectory(SHM, "rds4j-sr");
        ring = new SendRing(directory, RING);
    }

    @AfterEach
    void close() throws Exception
    {
        try (var files = Files.list(directory))
        {
            assertEquals(0, files.count(), "the ring's file is unlinked once mapped");
        }
        Files.delete(directory);
    }

    @Test
    void recordsStartAtMultiplesOf64Bytes()
    {
        assertEquals(0, ring.claim(112));
        assertEquals(128, ring.claim(1));
        assertEquals(192, ring.claim(64));
        assertEquals(256, ring.claim(65));
        assertEquals(384, ring.usedBytes());
    }

    @Test
    void recordsFreedOutOfOrderAreReclaimedInOrder()
    {
        final long a = ring.claim(100);
        final long b = ring.claim(200);
        final long c = ring.claim(300);
        assertEquals(128 + 256 + 320, ring.usedBytes());

        ring.free(b);
        ring.reclaim();
        assertEquals(128 + 256 + 320, ring.usedBytes(), "the head waits for the first record");
        ring.free(a);
        ring.reclaim();
        assertEquals(320, ring.usedBytes(), "the head passes both freed records");
        ring.free(c);
        ring.reclaim();
        assertEquals(0, ring.usedBytes());
        assertEquals(704, ring.claim(10), "positions go on growing");
    }

    @Test
    void aRecordThatWouldCrossTheEndGoesToTheStartAfterAFreedPadding()
    {
        final List<Long> first = new ArrayList<>();
        for (int i = 0; i < 7; i++)
        {
            first.add(ring.claim(512));
        }
        first.add(ring.claim(448));
        assertEquals(4032, ring.usedBytes());
        for (final long position : first)
        {
            ring.free(position);
        }
        ring.reclaim();
        assertEquals(0, ring.usedBytes());

        final long wrapped = ring.claim(128);
        assertEquals(4096, wrapped, "64 bytes of padding at the end, the record at index 0");
        assertEquals(192, ring.usedBytes());
        ring.free(wrapped);
        ring.reclaim();
        assertEquals(0, ring.usedBytes(), "the head passes the padding with the record");
    }

    @Test
    void aFullRingRefusesUntilItsFrontIsFreed()
    {
        final List<Long> records = new ArrayList<>();
        for (int i = 0; i < 8; i++)
        {
            records.add(ring.claim(512));
        }
        assertEquals(-1, ring.claim(1));
        ring.free(records.get(7));
        ring.reclaim();
        assertEquals(-1, ring.claim(1), "a freed record behind a live one is not room yet");
        ring.free(records.get(0));
        assertEquals(-1, ring.claim(1), "nor a freed record the head has not passed");
        ring.reclaim();
        assertEquals(4096, ring.claim(512));
    }

    @Test
    void framesOverAnEighthOfTheRingAreRefused()
    {
        assertEquals(512, ring.maxFrame());
        assertEquals(-1, ring.claim(513));
        assertEquals(0, ring.claim(512));
    }

    @Test
    void aRecordsMessageViewsTheRecordAndIsMadeOncePerSlot()
    {
        final long a = ring.claim(100);
        final long b = ring.claim(100);
        final Message messageB = ring.message(b);
        assertEquals(b, messageB.ringPosition);
        assertSame(ring, messageB.ring);
        assertEquals(RING - 128, messageB.frame.capacity());
        messageB.frame.putLong(0, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, ring.message(a).frame.getLong(128), "the same memory");
        assertSame(messageB, ring.message(b));
        assertSame(messageB, ring.message(b + RING), "the slot's message, a lap later");
        assertEquals(b + RING, messageB.ringPosition);
    }

    @Test
    void theReaderTakesCommittedRecordsInOrderAndWaitsAtOneBeingWritten()
    {
        assertNull(ring.next(), "nothing claimed");
        final long a = ring.claim(100);
        final long b = ring.claim(100);
        ring.commit(b);
        assertNull(ring.next(), "b is committed, but a before it is still being written");
        assertFalse(ring.hasCommitted());
        assertEquals(0, ring.readPosition());
        ring.commit(a);
        assertTrue(ring.hasCommitted());
        assertSame(ring.message(a), ring.next());
        assertSame(ring.message(b), ring.next());
        assertNull(ring.next());
        assertEquals(256, ring.readPosition());
        assertEquals(256, ring.usedBytes(), "read records stay until freed");
    }

    @Test
    void theReaderPassesClaimsAsideAndFreedRecords()
    {
        final long aside = ring.claimAside(100);
        final long aborted = ring.claimAside(100);
        final long sent = ring.claim(100);
        ring.free(aborted);
        assertNull(ring.next(), "the send is not committed");
        assertEquals(sent, ring.readPosition(), "passed the claim set aside and the freed record");
        ring.commit(sent);
        assertSame(ring.message(sent), ring.next());
        ring.free(sent);
        ring.free(aside);
        ring.reclaim();
        assertEquals(0, ring.usedBytes());
    }

    @Test
    void theHeadPassingFreedRecordsTheReaderHasNotReachedTakesTheReaderAlong()
    {
        final long aside = ring.claimAside(100);
        ring.free(aside); // an aborted claim, freed and reclaimed before the reader looked: its word is 0 again
        ring.reclaim();
        final long sent = ring.claim(100);
        ring.commit(sent);
        assertSame(ring.message(sent), ring.next(), "the reader does not stop at the cleared word");
    }

    @Test
    void theReaderStopsAtTheTailOfAFullRing()
    {
        final List<Long> records = new ArrayList<>();
        for (int i = 0; i < 8; i++)
        {
            final long position = ring.claim(512);
            ring.commit(position);
            records.add(position);
        }
        for (final long position : records)
        {
            assertSame(ring.message(position), ring.next());
        }
        assertNull(ring.next(), "a lap on, the slot is the first record's: not a record to read");
        ring.free(records.get(0));
        assertNull(ring.next(), "nor once that record is free");
        ring.reclaim();
        final long wrapped = ring.claim(512);
        ring.commit(wrapped);
        assertEquals(4096, wrapped);
        assertSame(ring.message(wrapped), ring.next());
    }

    @Test
    void theReaderPassesThePaddingAtTheEnd()
    {
        final List<Long> first = new ArrayList<>();
        for (int i = 0; i < 7; i++)
        {
            first.add(ring.claim(512));
        }
        final long last = ring.claim(448); // 64 bytes left at the end
        ring.commit(last);
        first.forEach(ring::commit);
        first.forEach(position -> assertSame(ring.message(position), ring.next()));
        assertSame(ring.message(last), ring.next());
        first.forEach(ring::free);
        ring.free(last);
        ring.reclaim();
        final long wrapped = ring.claim(128);
        ring.commit(wrapped);
        assertEquals(4096, wrapped);
        assertSame(ring.message(wrapped), ring.next());
        assertEquals(4096 + 128, ring.readPosition());
    }

    @Test
    void unreadBytesCountFromTheLastPublishedRead()
    {
        final long a = ring.claim(100);
        ring.commit(a);
        ring.claim(10); // being written
        assertEquals(192, ring.unreadBytes());
        ring.next();
        assertEquals(192, ring.unreadBytes(), "not published yet");
        ring.publishRead();
        assertEquals(64, ring.unreadBytes());
        assertEquals(192, ring.tail());
    }

    @Test
    void aClosedRingIsUnmappedOnceEveryRecordIsFree()
    {
        final long a = ring.claim(100);
        ring.close();
        assertFalse(ring.isUnmapped(), "a record is live");
        assertEquals(-1, ring.claim(100), "no claims after close");
        ring.free(a);
        ring.reclaim();
        assertTrue(ring.isUnmapped());
        assertEquals(0, ring.usedBytes());
    }

    /**
     * Writers claim and write while the stack closes the ring and frees what they wrote: the memory is unmapped once
     * the last record is free, and no writer's claim succeeds after that (one that wrote into the unmapped memory
     * would crash the JVM).
     */
    @Test
    void writersRacingACloseNeverWriteIntoTheUnmappedMemory() throws Exception
    {
        final int writers = 2;
        final BlockingQueue<Long> written = new LinkedBlockingQueue<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicInteger refusedAfterClose = new AtomicInteger();
        final AtomicBoolean closed = new AtomicBoolean();
        final List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++)
        {
            final Thread thread = new Thread(() ->
            {
                try
                {
                    while (refusedAfterClose.get() < 1000)
                    {
                        final boolean wasClosed = closed.get();
                        final long position = ring.claim(64);
                        if (position < 0)
                        {
                            if (wasClosed)
                            {
                                refusedAfterClose.incrementAndGet();
                            }
                            continue;
                        }
                        ring.message(position).frame.putLong(0, position);
                        written.put(position);
                    }
                }
                catch (final Throwable ex)
                {
                    failure.set(ex);
                }
            }, "ring-writer-" + w);
            threads.add(thread);
            thread.start();
        }
        // this thread is the stack: it frees and reclaims, and closes the ring after 20,000 records
        int freed = 0;
        while (threads.stream().anyMatch(Thread::isAlive) || !written.isEmpty())
        {
            final Long position = written.poll(10, TimeUnit.MILLISECONDS);
            if (position != null)
            {
                assertEquals(position, ring.message(position).frame.getLong(0));
                ring.free(position);
                freed++;
            }
            if (freed == 20_000 && closed.compareAndSet(false, true))
            {
                ring.close();
            }
            ring.reclaim();
        }
        assertNull(failure.get());
        assertTrue(closed.get(), "closed after " + freed + " records");
        assertTrue(ring.isUnmapped(), "every record is free");
        assertEquals(-1, ring.claim(64));
    }

    @Test
    void sizesThatAreNotPowersOfTwoOfAtLeast4096AreRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new SendRing(directory, 2048));
        assertThrows(IllegalArgumentException.class, () -> new SendRing(directory, 6000));
    }

    /** Writers fill records with a pattern of their own; overlapping records would break one. */
    @Test
    void concurrentWritersGetRecordsOfTheirOwn() throws Exception
    {
        final int writers = 4;
        final int perWriter = 20_000;
        final BlockingQueue<long[]> written = new ArrayBlockingQueue<>(1024);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> threads = startWriters(writers, perWriter, failure, (id, i) ->
        {
            final int length = 8 + ThreadLocalRandom.current().nextInt(500);
            long position;
            while ((position = ring.claim(length)) < 0)
            {
                Thread.onSpinWait();
            }
            final ByteBuffer view = ring.message(position).frame;
            final byte mark = (byte)(id * 50 + i % 50);
            for (int k = 0; k < length; k++)
            {
                view.put(k, mark);
            }
            written.put(new long[] {position, length, mark});
        });
        // this thread is the stack: it checks each record, frees it and reclaims; two at hand are freed newest first
        int checked = 0;
        while (checked < writers * perWriter)
        {
            final long[] record = written.poll(30, TimeUnit.SECONDS);
            assertTrue(record != null, "writers stalled at " + checked + ": " + failure.get());
            check(record);
            checked++;
            final long[] next = written.poll();
            if (next != null)
            {
                check(next);
                checked++;
                ring.free(next[0]);
            }
            ring.free(record[0]);
            ring.reclaim();
        }
        for (final Thread thread : threads)
        {
            thread.join(10_000);
        }
        assertNull(failure.get());
        assertEquals(0, ring.usedBytes());
    }

    /**
     * Writers commit numbered records while this thread reads them as the stack does: each writer's records come in
     * the order it wrote them, each once, byte for byte, whatever the interleaving and the claims set aside between.
     */
    @Test
    void theReaderSeesEachWritersRecordsOnceAndInItsOrder() throws Exception
    {
        final int writers = 3;
        final int perWriter = 30_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final List<Thread> threads = startWriters(writers, perWriter, failure, (id, i) ->
        {
            final int length = 16 + ThreadLocalRandom.current().nextInt(300);
            final boolean aside = i % 7 == 0;
            long position;
            while ((position = aside ? ring.claimAside(length) : ring.claim(length)) < 0)
            {
                Thread.onSpinWait();
            }
            final ByteBuffer view = ring.message(position).frame;
            view.putInt(0, id).putInt(4, i).putInt(8, length);
            for (int k = 12; k < length; k++)
            {
                view.put(k, (byte)(i + k));
            }
            if (aside)
            {
                ring.free(position);
                ring.freedByWriter();
            }
            else
            {
                ring.commit(position);
            }
        });
        final int[] next = new int[writers];
        int read = 0;
        final int expected = writers * (perWriter - (perWriter + 6) / 7);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (read < expected)
        {
            assertTrue(System.nanoTime() < deadline, "read " + read + " of " + expected + ": " + failure.get());
            final Message message = ring.next();
            if (message == null)
            {
                ring.reclaimFreedByWriters();
                Thread.onSpinWait();
                continue;
            }
            final ByteBuffer view = message.frame;
            final int id = view.getInt(0);
            final int i = view.getInt(4);
            final int length = view.getInt(8);
            while (next[id] % 7 == 0)
            {
                next[id]++; // set aside by its writer, never read
            }
            assertEquals(next[id], i, "writer " + id + "'s records in order");
            for (int k = 12; k < length; k++)
            {
                assertEquals((byte)(i + k), view.get(k), "record " + i + " of writer " + id + ", byte " + k);
            }
            next[id]++;
            read++;
            ring.free(message.ringPosition);
            ring.reclaim();
        }
        for (final Thread thread : threads)
        {
            thread.join(10_000);
        }
        assertNull(failure.get());
        assertNull(ring.next(), "no record twice");
        ring.reclaimFreedByWriters();
        assertEquals(0, ring.usedBytes());
    }

    /** One record a writer writes: its {@code i}-th, as writer {@code id}. */
    @FunctionalInterface
    private interface Write
    {
        void write(int id, int i) throws Exception;
    }

    /** Starts {@code writers} threads, each writing {@code perWriter} records; the first failure goes to {@code failure}. */
    private static List<Thread> startWriters(final int writers, final int perWriter,
        final AtomicReference<Throwable> failure, final Write write)
    {
        final List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++)
        {
            final int id = w;
            final Thread thread = new Thread(() ->
            {
                try
                {
                    for (int i = 0; i < perWriter; i++)
                    {
                        write.write(id, i);
                    }
                }
                catch (final Throwable ex)
                {
                    failure.set(ex);
                }
            }, "ring-writer-" + w);
            threads.add(thread);
            thread.start();
        }
        return threads;
    }

    private void check(final long[] record)
    {
        final ByteBuffer view = ring.message(record[0]).frame;
        for (int k = 0; k < record[1]; k++)
        {
            assertEquals((byte)record[2], view.get(k), "record at " + record[0] + " byte " + k);
        }
    }
}
