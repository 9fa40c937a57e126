package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

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
