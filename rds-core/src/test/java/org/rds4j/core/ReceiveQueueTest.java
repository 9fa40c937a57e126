package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsReceiveInfo;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A socket's receive queue over its ring: exact bytes and senders through {@code receive} and {@code poll}, the
 * order kept when messages wait outside the ring (too large, or the ring full), byte accounting, and close.
 */
class ReceiveQueueTest
{
    private static final int RING = 4096;
    /** The sender of most tests' messages (an address literal: nothing is looked up). */
    private static final InetSocketAddress FROM = new InetSocketAddress("10.1.2.3", 4000);

    /** Memory, as the default info directory is: the ring is a mapped file there. */
    private static final Path SHM = Path.of("/dev/shm");

    @TempDir
    Path disk;

    private Path directory;

    private final StackCounters counters = new StackCounters();
    private final MessagePool pool = new MessagePool(counters.poolAlloc);
    private ReceiveQueue queue;

    @BeforeEach
    void directory() throws Exception
    {
        assumeTrue(Files.isDirectory(SHM), "no /dev/shm");
        directory = Files.createTempDirectory(SHM, "rds4j-rq");
    }

    @AfterEach
    void close() throws Exception
    {
        if (queue != null)
        {
            queue.releaseAll();
        }
        Files.deleteIfExists(directory);
    }

    @Test
    void receiveCopiesEachPayloadOnceWithItsSenderAndTruncatesToTheRoom() throws Exception
    {
        queue = queue();
        final InetSocketAddress v4 = new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 4000);
        final InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("fd00::1:2"), 65535);
        offer(v4, bytes(100, 1));
        offer(v6, bytes(0, 0));
        offer(v4, bytes(10, 2));
        assertEquals(110, queue.queuedBytes());

        final ByteBuffer dst = ByteBuffer.allocate(200);
        assertEquals(v4, queue.takeInto(dst, null));
        assertArrayEquals(bytes(100, 1), received(dst));
        dst.clear();
        assertEquals(v6, queue.takeInto(dst, null));
        assertEquals(0, dst.position());
        final ByteBuffer small = ByteBuffer.allocate(4);
        final InetSocketAddress sender = queue.takeInto(small, null);
        assertEquals(v4, sender);
        assertArrayEquals(new byte[]{2, 3, 4, 5}, received(small), "truncated to the buffer's room");
        assertNull(queue.takeInto(dst, null));
        assertEquals(0, queue.queuedBytes());
        assertEquals(0, counters.recvRingSpill.get());

        offer(v4, bytes(1, 9));
        assertSame(sender, queue.takeInto(dst.clear(), null), "a sender seen before is the cached object");

        // the reader remembers the last sender: one that differs only by its port is another sender
        final InetSocketAddress otherPort = new InetSocketAddress(v4.getAddress(), 4001);
        offer(otherPort, bytes(1, 7));
        offer(v4, bytes(1, 8));
        assertEquals(otherPort, queue.takeInto(dst.clear(), null));
        assertSame(sender, queue.takeInto(dst.clear(), null));
    }

    @Test
    void receiveReportsTheFullLengthOfATruncatedMessageFromTheRingAndFromOutsideIt() throws Exception
    {
        queue = queue();
        offer(FROM, bytes(300, 1));
        // larger than a record of the 4 KiB ring: it waits outside, and so does the one behind it
        offer(FROM, bytes(2000, 2));
        offer(FROM, bytes(5, 3));
        assertEquals(2, counters.recvRingSpill.get());

        final RdsReceiveInfo info = new RdsReceiveInfo();
        final ByteBuffer small = ByteBuffer.allocate(7);
        assertEquals(FROM, queue.takeInto(small, info));
        assertEquals(FROM, info.sender());
        assertEquals(300, info.length());
        assertTrue(info.truncated());
        assertArrayEquals(Arrays.copyOf(bytes(300, 1), 7), received(small));

        small.clear();
        assertEquals(FROM, queue.takeInto(small, info));
        assertEquals(2000, info.length());
        assertTrue(info.truncated());
        assertArrayEquals(Arrays.copyOf(bytes(2000, 2), 7), received(small));

        final ByteBuffer exact = ByteBuffer.allocate(5);
        assertEquals(FROM, queue.takeInto(exact, info));
        assertEquals(5, info.length());
        assertFalse(info.truncated(), "exactly the room is not truncated");
        assertArrayEquals(bytes(5, 3), received(exact));
        assertEquals(0, queue.queuedBytes(), "the truncated messages' rest is discarded");
        assertNull(queue.takeInto(small.clear(), info));
    }

    @Test
    void pollHandsEachPayloadInPlaceAndLeavesNoFileBehind() throws Exception
    {
        queue = queue();
        for (int i = 0; i < 5; i++)
        {
            offer(FROM, bytes(8 * (i + 1), i));
        }
        final List<byte[]> payloads = new ArrayList<>();
        assertEquals(3, queue.poll((sender, payload) ->
        {
            assertEquals(FROM, sender);
            assertTrue(payload.isReadOnly());
            final byte[] copy = new byte[payload.remaining()];
            payload.get(copy);
            payloads.add(copy);
        }, 3));
        assertEquals(2, queue.poll((sender, payload) -> payloads.add(new byte[payload.remaining()]), 10));
        assertEquals(5, payloads.size());
        for (int i = 0; i < 3; i++)
        {
            assertArrayEquals(bytes(8 * (i + 1), i), payloads.get(i));
        }
        assertEquals(0, queue.queuedBytes());
        try (var files = Files.list(directory))
        {
            assertEquals(0, files.count(), "the ring's file is unlinked once mapped");
        }
    }

    @Test
    void messagesThatDoNotFitWaitOutsideTheRingAndEverythingComesInOrder() throws Exception
    {
        queue = queue();
        // a 4 KiB ring takes records up to 512 bytes (an eighth); 40 of 100 bytes fill it
        final int count = 200;
        for (int i = 0; i < count; i++)
        {
            offer(FROM, bytes(i % 50 == 7 ? 3000 : 100, i));
        }
        assertTrue(counters.recvRingSpill.get() > count / 2, "spilled " + counters.recvRingSpill.get());
        final ByteBuffer dst = ByteBuffer.allocate(4000);
        final int[] next = {0};
        // alternate receive and poll, and offer more while the first ones are taken
        for (int round = 0; next[0] < count + 50; round++)
        {
            if (round % 2 == 0)
            {
                dst.clear();
                if (queue.takeInto(dst, null) != null)
                {
                    final int i = next[0]++;
                    assertArrayEquals(bytes(i < count && i % 50 == 7 ? 3000 : 100, i), received(dst), "message " + i);
                }
            }
            else
            {
                queue.poll((sender, payload) ->
                {
                    final int i = next[0]++;
                    final byte[] copy = new byte[payload.remaining()];
                    payload.get(copy);
                    assertArrayEquals(bytes(i < count && i % 50 == 7 ? 3000 : 100, i), copy, "message " + i);
                }, 7);
            }
            if (round < 50)
            {
                offer(FROM, bytes(100, count + round));
            }
        }
        assertNull(queue.takeInto(dst.clear(), null));
        assertEquals(0, queue.queuedBytes());
        // every message that waited outside went back to the pool: the same backlog again allocates none
        final long allocated = counters.poolAlloc.get();
        for (int i = 0; i < count; i++)
        {
            offer(FROM, bytes(i % 50 == 7 ? 3000 : 100, i));
        }
        while (queue.takeInto(dst.clear(), null) != null)
        {
            assertTrue(queue.queuedBytes() >= 0);
        }
        assertEquals(allocated, counters.poolAlloc.get());
    }

    /**
     * The agent writing while an application thread takes, messages of mixed sizes so that some go around the
     * ring: every message comes in the order offered, through receive and poll alike. A reader that looked at
     * the ring, found it empty, and then took a spilled message could pass a ring record written in between.
     */
    @Test
    void concurrentOffersAndTakesKeepTheOrderAcrossTheRingAndTheSpill() throws Exception
    {
        queue = queue();
        final int count = 1_000_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread producer = new Thread(() ->
        {
            final UnsafeBuffer message = new UnsafeBuffer(new byte[1024]);
            for (int i = 0; i < count && failure.get() == null; i++)
            {
                // every other one larger than an eighth of the ring; the queue is kept short so the ring empties often
                final int length = i % 2 == 1 ? 1000 : 8 + i % 64;
                message.putInt(0, i, java.nio.ByteOrder.BIG_ENDIAN);
                while (queue.queuedBytes() > 3 * RING && failure.get() == null)
                {
                    Thread.onSpinWait();
                }
                queue.offer(FROM, message, 0, length, counters);
            }
        }, "rq-producer");
        takeInOrder(count, producer, failure, false);
        assertTrue(counters.recvRingSpill.get() >= count / 2, "spilled " + counters.recvRingSpill.get());
    }

    @Test
    void aRunIsQueuedAtItsCloseCountedTruncatedAndOpensOnlyWhenNothingWaitsOutsideAndTheRingHasRoom() throws Exception
    {
        queue = queue();
        final UnsafeBuffer frames = frames(new int[] {100, 7, 200}, 0);
        assertTrue(queue.openRun(FROM, frames, 0, RdsHeader.LENGTH + 100));
        assertTrue(queue.appendToRun(frames, RdsHeader.LENGTH + 100, RdsHeader.LENGTH + 7));
        assertTrue(queue.appendToRun(frames, 2 * RdsHeader.LENGTH + 107, RdsHeader.LENGTH + 200));
        final ByteBuffer dst = ByteBuffer.allocate(4000);
        assertNull(queue.takeInto(dst, null), "nothing of an open run is seen");
        assertEquals(0, queue.queuedBytes());
        assertEquals(307, queue.closeRun(3));
        assertEquals(0, counters.recvRingSpill.get());

        final RdsReceiveInfo info = new RdsReceiveInfo();
        final ByteBuffer small = ByteBuffer.allocate(7);
        assertEquals(FROM, queue.takeInto(small, info));
        assertEquals(100, info.length());
        assertTrue(info.truncated());
        assertArrayEquals(Arrays.copyOf(bytes(100, 0), 7), received(small));
        assertEquals(207, queue.queuedBytes());
        assertEquals(FROM, queue.takeInto(small.clear(), info));
        assertEquals(7, info.length());
        assertFalse(info.truncated());
        assertArrayEquals(bytes(7, 1), received(small));
        assertEquals(FROM, queue.takeInto(dst, info));
        assertArrayEquals(bytes(200, 2), received(dst));
        assertEquals(0, queue.queuedBytes());

        // a message waits outside the ring: no run opens behind it
        offer(FROM, bytes(2000, 9));
        final UnsafeBuffer more = frames(new int[] {30, 40}, 10);
        assertFalse(queue.openRun(FROM, more, 0, RdsHeader.LENGTH + 30));
        assertEquals(FROM, queue.takeInto(dst.clear(), info));
        assertEquals(2000, info.length());
        // the ring with less than an eighth free: no run opens, a record of its own still fits
        final byte[] eighth = bytes(RING / 8 - 24, 50);
        for (int i = 0; i < 7; i++)
        {
            queue.offer(FROM, new UnsafeBuffer(eighth), 0, eighth.length, counters);
        }
        assertFalse(queue.openRun(FROM, more, 0, RdsHeader.LENGTH + 30));
        queue.offer(FROM, more, RdsHeader.LENGTH, 30, counters);
        assertEquals(1, counters.recvRingSpill.get(), "only the message of 2,000 bytes waited outside");
        final List<Integer> lengths = new ArrayList<>();
        while (queue.takeInto(dst.clear(), info) != null)
        {
            lengths.add(info.length());
        }
        assertEquals(List.of(488, 488, 488, 488, 488, 488, 488, 30), lengths);
        assertEquals(0, queue.queuedBytes());
    }

    /**
     * As the test before, with the agent writing runs of frames (as a TCP read brings them) among single messages:
     * every message comes in the order offered, through receive and poll alike, whatever a run's size.
     */
    @Test
    void concurrentRunsAndTakesKeepTheOrderAcrossTheRingAndTheSpill() throws Exception
    {
        queue = queue();
        final int count = 300_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final InetSocketAddress[] senders = {FROM, new InetSocketAddress(FROM.getAddress(), 4001),
            new InetSocketAddress("10.1.2.4", 4000)};
        final Thread producer = new Thread(() ->
        {
            final UnsafeBuffer frames = new UnsafeBuffer(new byte[4096]);
            int i = 0;
            while (i < count && failure.get() == null)
            {
                while (queue.queuedBytes() > 3 * RING && failure.get() == null)
                {
                    Thread.onSpinWait();
                }
                final InetSocketAddress sender = senders[i % senders.length];
                if (i % 7 == 3)
                {
                    frames.putInt(0, i++, java.nio.ByteOrder.BIG_ENDIAN);
                    frames.putInt(4, sender.getPort(), java.nio.ByteOrder.BIG_ENDIAN);
                    queue.offer(sender, frames, 0, 600, counters); // larger than a record: outside the ring
                    continue;
                }
                // a read of 1 to 24 frames of 8 to 44 bytes from one sender
                int length = 0;
                for (int n = 1 + i % 24; n > 0 && i < count && i % 7 != 3; n--)
                {
                    final int payload = 8 + (i * 13) % 37;
                    RdsHeader.write(frames, length, i + 1, 0, payload, sender.getPort(), 5000, 0, 0);
                    frames.putInt(length + RdsHeader.LENGTH, i++, java.nio.ByteOrder.BIG_ENDIAN);
                    frames.putInt(length + RdsHeader.LENGTH + 4, sender.getPort(), java.nio.ByteOrder.BIG_ENDIAN);
                    length += RdsHeader.LENGTH + payload;
                }
                offerFrames(sender, frames, length);
            }
        }, "rq-runs-producer");
        takeInOrder(count, producer, failure, true);
        assertTrue(counters.recvRingSpill.get() >= count / 7, "spilled " + counters.recvRingSpill.get());
    }

    /** A record that did not fit at the ring's end starts it again after padding: a take must find it there. */
    @Test
    void aRecordAfterTheRingsWrapIsTakenAtOnce() throws Exception
    {
        queue = queue();
        final ByteBuffer dst = ByteBuffer.allocate(450);
        // a 450-byte message is a record of 480 bytes: eight fill 3,840 of 4,096 bytes, the ninth waits outside
        for (int i = 0; i < 9; i++)
        {
            offer(FROM, bytes(450, i));
        }
        assertEquals(1, counters.recvRingSpill.get());
        for (int i = 0; i < 9; i++)
        {
            assertEquals(FROM, queue.takeInto(dst.clear(), null), "message " + i);
        }
        // the next record goes to the ring's start, behind padding at its end
        offer(FROM, bytes(450, 42));
        assertEquals(FROM, queue.takeInto(dst.clear(), null), "taken across the wrap");
        assertArrayEquals(bytes(450, 42), received(dst));
        for (int i = 0; i < 8; i++)
        {
            offer(FROM, bytes(450, i));
        }
        assertEquals(8, queue.poll((sender, payload) -> { }, 10), "polled across the wrap");
    }

    @Test
    void aHandlerThatThrowsStillConsumesItsMessage() throws Exception
    {
        queue = queue();
        offer(FROM, bytes(10, 1));
        offer(FROM, bytes(10, 2));
        assertThrows(IllegalStateException.class, () -> queue.poll((sender, payload) ->
        {
            throw new IllegalStateException("the application's");
        }, 10));
        assertEquals(10, queue.queuedBytes());
        final ByteBuffer dst = ByteBuffer.allocate(10);
        queue.takeInto(dst, null);
        assertArrayEquals(bytes(10, 2), received(dst));
    }

    @Test
    void aDirectoryThatCannotHoldTheRingLeavesItInDirectMemory() throws Exception
    {
        final Path notADirectory = Files.createFile(disk.resolve("file"));
        queue = new ReceiveQueue(pool, new UncongestedSocket(RING), () -> { }, notADirectory.resolve("rings"), RING);
        offer(FROM, bytes(100, 1));
        final ByteBuffer dst = ByteBuffer.allocate(100);
        assertEquals(FROM, queue.takeInto(dst, null));
        assertArrayEquals(bytes(100, 1), received(dst));
        assertEquals(0, counters.recvRingSpill.get(), "in a ring all the same");
    }

    @Test
    void closeFreesTheRingAndTheWaitingMessages() throws Exception
    {
        queue = queue();
        for (int i = 0; i < 60; i++)
        {
            offer(FROM, bytes(100, i));
        }
        assertTrue(counters.recvRingSpill.get() > 0, "some wait outside the ring");
        queue.releaseAll();
        assertEquals(0, queue.queuedBytes());
        assertNull(queue.takeInto(ByteBuffer.allocate(100), null), "nothing is read from freed memory");
        assertEquals(0, queue.poll((sender, payload) -> { }, 10));
    }

    @Test
    void aReceiveWithinAPollHandlerMakesThePollThrowAndSkipsNoMessage() throws Exception
    {
        queue = queue();
        offer(FROM, bytes(8, 1));
        offer(FROM, bytes(8, 2));
        final ByteBuffer inner = ByteBuffer.allocate(64);

        // the handler's receive takes the message it is handed once more; the poll then refuses to move past it again
        assertThrows(IllegalStateException.class, () -> queue.poll((sender, payload) -> queue.takeInto(inner, null), 10));
        assertArrayEquals(bytes(8, 1), Arrays.copyOf(inner.array(), inner.position()));
        assertEquals(8, queue.queuedBytes());
        final ByteBuffer next = ByteBuffer.allocate(64);
        assertEquals(FROM, queue.takeInto(next, null));
        assertArrayEquals(bytes(8, 2), Arrays.copyOf(next.array(), next.position()));
        assertEquals(0, queue.queuedBytes());
    }

    /**
     * A driver's session may take a message past the queue only while nothing waits in it: a message in the ring or
     * outside it, or an event, would be passed. A message held for the client ({@code offerHeld}) counts as queued
     * until the client reports it taken, but does not wait here.
     */
    @Test
    void theQueueIsDrainedOnlyWhenNoMessageAndNoEventWaits() throws Exception
    {
        queue = queue();
        assertTrue(queue.isDrained(), "new");
        offer(FROM, bytes(10, 1));
        assertFalse(queue.isDrained(), "a message in the ring");
        queue.takeInto(ByteBuffer.allocate(10), null);
        assertTrue(queue.isDrained(), "taken");

        offer(FROM, bytes(2000, 2)); // larger than a record of the 4 KiB ring: it waits outside
        assertEquals(1, counters.recvRingSpill.get());
        assertFalse(queue.isDrained(), "a message outside the ring");
        queue.takeInto(ByteBuffer.allocate(2000), null);
        assertTrue(queue.isDrained(), "taken");

        final List<InetSocketAddress> uncongested = new ArrayList<>();
        queue.listener(new RdsNotificationListener()
        {
            @Override
            public void onUncongested(final InetSocketAddress destination)
            {
                uncongested.add(destination);
            }
        });
        queue.notifyListener(new Notification(Notification.Kind.UNCONGESTED, FROM));
        assertFalse(queue.isDrained(), "an event");
        assertEquals(0, queue.poll((sender, payload) -> { }, 10));
        assertEquals(List.of(FROM), uncongested);
        assertTrue(queue.isDrained(), "the event delivered");

        assertEquals(100, queue.offerHeld(100), "the bytes queued with the held message");
        assertTrue(queue.isDrained(), "a held message does not wait here");
        assertEquals(100, queue.queuedBytes());
        queue.release(100);
        assertEquals(0, queue.queuedBytes(), "the client took it");
    }

    private ReceiveQueue queue()
    {
        return new ReceiveQueue(pool, new UncongestedSocket(RING), () -> { }, directory, RING);
    }

    private void offer(final InetSocketAddress sender, final byte[] payload)
    {
        queue.offer(sender, new UnsafeBuffer(payload), 0, payload.length, counters);
    }

    /**
     * Starts {@code producer} and takes {@code count} messages numbered from 0 (an int at each payload's start) while
     * it offers them, by receive and by polls of 1 to 9 in turn: each must come in order, and with {@code portsNamed}
     * from the port its payload's second int names; then nothing is left.
     */
    private void takeInOrder(
        final int count, final Thread producer, final AtomicReference<Throwable> failure, final boolean portsNamed)
        throws Exception
    {
        producer.start();
        final ByteBuffer dst = ByteBuffer.allocate(1024);
        final int[] next = {0};
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try
        {
            while (next[0] < count)
            {
                assertTrue(System.nanoTime() < deadline, "took " + next[0] + " of " + count + " in 60 s");
                if ((next[0] & 1) == 0)
                {
                    dst.clear();
                    final InetSocketAddress sender = queue.takeInto(dst, null);
                    if (sender != null)
                    {
                        assertEquals(next[0], dst.getInt(0), "receive out of order");
                        assertTrue(!portsNamed || dst.getInt(4) == sender.getPort(), "message " + next[0]);
                        next[0]++;
                    }
                }
                else
                {
                    queue.poll((sender, payload) ->
                    {
                        assertEquals(next[0], payload.getInt(payload.position()), "poll out of order");
                        assertTrue(!portsNamed || payload.getInt(payload.position() + 4) == sender.getPort(),
                            "message " + next[0]);
                        next[0]++;
                    }, 1 + next[0] % 9);
                }
            }
            assertNull(queue.takeInto(dst.clear(), null));
            assertEquals(0, queue.queuedBytes());
        }
        catch (final Throwable t)
        {
            failure.set(t);
            throw t;
        }
        finally
        {
            producer.join();
        }
    }

    /**
     * Offers frames of one sender lying back to back in {@code frames} as the stack offers a read's frames: in runs
     * while the ring opens them, each payload on its own otherwise.
     */
    private void offerFrames(final InetSocketAddress sender, final UnsafeBuffer frames, final int length)
    {
        int runFrames = 0;
        for (int at = 0; at < length; )
        {
            final int payload = (int)RdsHeader.length(frames, at);
            final int frame = RdsHeader.LENGTH + payload;
            if (runFrames > 0 && queue.appendToRun(frames, at, frame))
            {
                runFrames++;
            }
            else
            {
                if (runFrames > 0)
                {
                    queue.closeRun(runFrames);
                    runFrames = 0;
                }
                if (queue.openRun(sender, frames, at, frame))
                {
                    runFrames = 1;
                }
                else
                {
                    queue.offer(sender, frames, at + RdsHeader.LENGTH, payload, counters);
                }
            }
            at += frame;
        }
        if (runFrames > 0)
        {
            queue.closeRun(runFrames);
        }
    }

    /** Frames back to back, as a TCP read holds them: payload {@code i} is {@code bytes(lengths[i], seed + i)}. */
    private static UnsafeBuffer frames(final int[] lengths, final int seed)
    {
        final byte[][] payloads = new byte[lengths.length][];
        for (int i = 0; i < lengths.length; i++)
        {
            payloads[i] = bytes(lengths[i], seed + i);
        }
        return BackToBackFrames.of(payloads);
    }

    private static byte[] bytes(final int length, final int seed)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(seed + i);
        }
        return bytes;
    }

    private static byte[] received(final ByteBuffer dst)
    {
        dst.flip();
        final byte[] bytes = new byte[dst.remaining()];
        dst.get(bytes);
        return bytes;
    }
}
