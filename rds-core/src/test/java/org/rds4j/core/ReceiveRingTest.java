package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The receive ring's records: exact room (a record is 24 bytes and the payload, aligned to 8), the padding a record
 * that does not fit at the ring's end leaves there, which takes room too, and the senders read back.
 */
class ReceiveRingTest
{
    private static final int RING = 4096;
    /** An eighth of the ring, less the 24 bytes of length, port and address. */
    private static final int MAX_PAYLOAD = RING / 8 - 24;

    private final InetSocketAddress from;
    private Path directory;
    private ReceiveRing ring;

    ReceiveRingTest() throws Exception
    {
        from = new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 4000);
    }

    @BeforeEach
    void map() throws Exception
    {
        final Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm), "no /dev/shm");
        directory = Files.createTempDirectory(shm, "rds4j-rr");
        ring = new ReceiveRing(directory, RING);
    }

    @AfterEach
    void free() throws Exception
    {
        ring.free();
        Files.deleteIfExists(directory);
    }

    @Test
    void recordsOfAnEighthFillTheRingExactlyAndTheNextStartsItAgain()
    {
        assertEquals(MAX_PAYLOAD, ring.maxPayload());
        assertFalse(write(MAX_PAYLOAD + 1, 0), "larger than an eighth");
        assertTrue(ring.isEmpty());
        for (int i = 0; i < 8; i++)
        {
            assertTrue(write(MAX_PAYLOAD, i), "record " + i);
        }
        assertFalse(write(0, 99), "full");
        assertFalse(ring.isEmpty());
        take(MAX_PAYLOAD, 0);
        assertTrue(write(MAX_PAYLOAD, 8), "the room of the record taken, at the ring's start");
        assertFalse(write(0, 99), "full again");
        for (int i = 1; i <= 8; i++)
        {
            take(MAX_PAYLOAD, i);
        }
        assertTrue(ring.isEmpty());
        assertNull(ring.takeInto(ByteBuffer.allocate(MAX_PAYLOAD)));
    }

    /** 104 + 6 x 512 + 2 x 440 bytes leave 40 at the end: a 128-byte record needs those 40 free as well. */
    @Test
    void aRecordThatDoesNotFitAtTheEndNeedsRoomForThePaddingThereToo()
    {
        assertTrue(write(80, 0));
        for (int i = 1; i <= 6; i++)
        {
            assertTrue(write(MAX_PAYLOAD, i));
        }
        assertTrue(write(416, 7));
        assertTrue(write(416, 8));
        take(80, 0);
        assertFalse(write(100, 9), "144 bytes free, 168 needed");
        take(MAX_PAYLOAD, 1);
        assertTrue(write(100, 9), "656 bytes free");
        for (int i = 2; i <= 6; i++)
        {
            take(MAX_PAYLOAD, i);
        }
        take(416, 7);
        take(416, 8);
        take(100, 9); // behind the padding, at the ring's start
        assertTrue(ring.isEmpty());
    }

    @Test
    void pollHandsRecordsOverInPlaceAcrossThePadding()
    {
        for (int i = 0; i < 7; i++)
        {
            assertTrue(write(MAX_PAYLOAD, i));
        }
        assertTrue(write(448, 7)); // 472 bytes: 40 left at the end
        final int[] lengths = new int[16];
        final int[] count = {0};
        final long[] taken = {0};
        assertEquals(7, ring.poll((sender, payload) -> lengths[count[0]++] = payload.remaining(), 7, n -> taken[0] += n));
        assertTrue(write(200, 8), "behind padding");
        assertEquals(2, ring.poll((sender, payload) ->
        {
            assertEquals(from, sender);
            final byte[] copy = new byte[payload.remaining()];
            payload.get(copy);
            assertArrayEquals(bytes(copy.length, count[0] == 7 ? 7 : 8), copy);
            lengths[count[0]++] = copy.length;
        }, 10, n -> taken[0] += n));
        assertEquals(9, count[0]);
        assertEquals(7L * MAX_PAYLOAD + 448 + 200, taken[0]);
        assertEquals(448, lengths[7]);
        assertEquals(200, lengths[8]);
        assertTrue(ring.isEmpty());
    }

    @Test
    void sendersComeBackEqualAndTheSameObjectWhileTheyRepeat() throws Exception
    {
        final InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("fd00::1:2"), 65535);
        final InetSocketAddress other = new InetSocketAddress(from.getAddress(), 4001);
        final InetSocketAddress[] senders = {from, from, v6, other, from};
        final UnsafeBuffer src = new UnsafeBuffer(new byte[8]);
        for (final InetSocketAddress sender : senders)
        {
            assertTrue(ring.write(sender, src, 0, 8));
        }
        final InetSocketAddress[] read = new InetSocketAddress[senders.length];
        for (int i = 0; i < senders.length; i++)
        {
            read[i] = ring.takeInto(ByteBuffer.allocate(8));
            assertEquals(senders[i], read[i], "sender " + i);
            assertEquals(8, ring.lastLength());
        }
        assertSame(read[0], read[1], "a repeated sender is not made again");
        assertSame(read[0], read[4], "nor one seen before");
    }

    @Test
    void aRunRecordHoldsItsFramesAsTheyCameAndIsTakenFrameByFrame()
    {
        final UnsafeBuffer frames = frames(10, 0, 100);
        // the run takes 24 + 3 x 48 + 110 bytes, aligned: 280; the single record 32; seven of 512; 200 are left
        run(from, frames, 10, 0, 100);
        assertTrue(write(5, 4));
        for (int i = 0; i < 7; i++)
        {
            assertTrue(write(MAX_PAYLOAD, 10 + i));
        }
        assertTrue(write(176, 20), "the last 200 bytes");
        assertFalse(write(0, 99), "full");

        final ByteBuffer dst = ByteBuffer.allocate(200);
        take(10, 1);
        assertEquals(from, ring.takeInto(dst), "the run's sender, whatever the frame's header says");
        assertEquals(0, ring.lastLength());
        assertEquals(0, dst.position());
        assertFalse(write(0, 99), "the run's record and its room stay until its last frame is taken");
        take(100, 3);
        assertTrue(write(0, 21), "the run's room given back");
        take(5, 4);
        for (int i = 0; i < 7; i++)
        {
            take(MAX_PAYLOAD, 10 + i);
        }
        take(176, 20);
        take(0, 21);
        assertTrue(ring.isEmpty());
        assertNull(ring.takeInto(dst));

        final InetSocketAddress other = new InetSocketAddress(from.getAddress(), 4001);
        run(other, frames, 10, 0);
        assertEquals(other, ring.takeInto(dst.clear()));
        assertEquals(other, ring.takeInto(dst.clear()));
        assertTrue(ring.isEmpty());
    }

    @Test
    void pollHandsARunsFramesInPlaceAndAReadWithinItsHandlerThrowsAndSkipsNothing()
    {
        run(from, frames(10, 20, 30), 10, 20, 30);
        final long[] taken = {0};
        final int[] handled = {0};
        assertEquals(1, ring.poll((sender, payload) ->
        {
            assertEquals(from, sender);
            final byte[] copy = new byte[payload.remaining()];
            payload.get(copy);
            assertArrayEquals(bytes(10, 1), copy);
            handled[0]++;
        }, 1, n -> taken[0] += n));
        assertEquals(10, taken[0]);

        // the handler of the second frame reads the ring: it gets that frame again, and the poll throws
        final ByteBuffer inner = ByteBuffer.allocate(100);
        assertThrows(IllegalStateException.class, () -> ring.poll((sender, payload) -> ring.takeInto(inner), 5,
            n -> taken[0] += n));
        assertEquals(20, inner.position(), "the frame handed to the handler");
        take(30, 3);
        assertTrue(ring.isEmpty(), "nothing skipped, nothing left");
    }

    @Test
    void aFrameThatDoesNotFitItsRunIsRefused()
    {
        final UnsafeBuffer frames = frames(10, 100);
        // the second frame cut short: its header announces 100 bytes, the run holds 99 of them
        assertTrue(ring.openRun(from, frames, 0, RdsHeader.LENGTH + 10));
        assertTrue(ring.appendToRun(frames, RdsHeader.LENGTH + 10, RdsHeader.LENGTH + 99));
        ring.closeRun();
        take(10, 1);
        assertThrows(IllegalStateException.class, () -> ring.takeInto(ByteBuffer.allocate(200)));
    }

    @Test
    void aRunTakesFramesUpToAnEighthOfTheRingAndOpensOnlyWithThatMuchRoom()
    {
        final int frame = RdsHeader.LENGTH + 60;
        final UnsafeBuffer frames = frames(60, 60, 60, 60, 60);
        final UnsafeBuffer large = frames(MAX_PAYLOAD - RdsHeader.LENGTH + 1);
        assertFalse(ring.openRun(from, large, 0, MAX_PAYLOAD + 1), "a frame larger than a run");
        assertTrue(ring.isEmpty());
        assertTrue(ring.openRun(from, frames, 0, frame));
        for (int i = 1; i < 4; i++)
        {
            assertTrue(ring.appendToRun(frames, i * frame, frame), "frame " + i);
        }
        assertFalse(ring.appendToRun(frames, 4 * frame, frame), "432 bytes of frames, and 108 more than 488");
        ring.closeRun();
        // the run gave back the room it did not use: 24 + 432 bytes taken, 3,640 left, seven records of 512 leave 56
        for (int i = 0; i < 7; i++)
        {
            assertTrue(write(MAX_PAYLOAD, 10 + i), "record " + i);
        }
        assertFalse(ring.openRun(from, frames, 0, frame), "a run opens with an eighth of the ring free");
        assertTrue(write(32, 20), "the last 56 bytes");
        assertFalse(write(0, 99), "full");
        for (int i = 0; i < 4; i++)
        {
            take(60, i + 1);
        }
        for (int i = 0; i < 7; i++)
        {
            take(MAX_PAYLOAD, 10 + i);
        }
        take(32, 20);
        assertTrue(ring.isEmpty());
    }

    /** Writes the frames lying back to back in {@code frames} as one run, as the stack does for a read's frames. */
    private void run(final InetSocketAddress sender, final UnsafeBuffer frames, final int... lengths)
    {
        int at = 0;
        for (int i = 0; i < lengths.length; i++)
        {
            final int frame = RdsHeader.LENGTH + lengths[i];
            assertTrue(i == 0 ? ring.openRun(sender, frames, at, frame) : ring.appendToRun(frames, at, frame));
            at += frame;
        }
        ring.closeRun();
    }

    /** Frames back to back, as a TCP read holds them: payload {@code i} is {@code bytes(lengths[i], i + 1)}. */
    private static UnsafeBuffer frames(final int... lengths)
    {
        final byte[][] payloads = new byte[lengths.length][];
        for (int i = 0; i < lengths.length; i++)
        {
            payloads[i] = bytes(lengths[i], i + 1);
        }
        return BackToBackFrames.of(payloads);
    }

    private boolean write(final int length, final int seed)
    {
        return ring.write(from, new UnsafeBuffer(bytes(length, seed)), 0, length);
    }

    private void take(final int length, final int seed)
    {
        final ByteBuffer dst = ByteBuffer.allocate(MAX_PAYLOAD);
        assertEquals(from, ring.takeInto(dst), "record " + seed);
        assertEquals(length, ring.lastLength(), "record " + seed);
        dst.flip();
        final byte[] copy = new byte[dst.remaining()];
        dst.get(copy);
        assertArrayEquals(bytes(length, seed), copy, "record " + seed);
    }

    private static byte[] bytes(final int length, final int seed)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(seed * 31 + i);
        }
        return bytes;
    }
}
