package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link DriverRing}: records in order across the ring's end, exact room, and a reader that survives whatever the
 * other side writes over the ring. The writer and the reader are two mappings of one file, as a client's and its
 * driver's are.
 */
class DriverRingTest
{
    private static final int CAPACITY = 1024;

    @TempDir
    Path directory;

    private DriverRing writer;
    private DriverRing reader;
    /** The file once more, to write over the ring as a misbehaving peer would. */
    private UnsafeBuffer scribbler;

    @BeforeEach
    void map() throws Exception
    {
        final Path file = directory.resolve("ring");
        writer = DriverRing.create(file, CAPACITY, false);
        reader = DriverRing.attach(file, CAPACITY);
        scribbler = new UnsafeBuffer(SharedMemory.mapExisting(file, DriverRing.fileBytes(CAPACITY)));
    }

    @AfterEach
    void unmap()
    {
        writer.free();
        reader.free();
    }

    @Test
    void recordsComeOutInOrderWithTheirNumbersAndBytesAcrossTheEnd()
    {
        final List<String> read = new ArrayList<>();
        // 100-byte frames: 108-byte records align to 112; 9 fit before the end (1008), the 10th pads and wraps
        for (int round = 0; round < 5; round++)
        {
            for (int i = 1; i <= 6; i++)
            {
                final int number = round * 6 + i;
                assertTrue(offer(number, frame(100, number)), "record " + number);
            }
            assertEquals(6, reader.read((number, buffer, index, length) ->
            {
                final byte[] bytes = new byte[length];
                buffer.getBytes(index, bytes);
                assertArrayEquals(frame(100, number), bytes);
                read.add(number + ":" + length);
                return true;
            }, 100));
            assertTrue(reader.isEmpty());
        }
        assertEquals(30, read.size());
        for (int i = 0; i < 30; i++)
        {
            assertEquals((i + 1) + ":100", read.get(i));
        }
    }

    @Test
    void theRoomIsExactAndComesBackWhenRead()
    {
        // maxFrame is an eighth of the ring less the record's 8 bytes: 120; records of 128 bytes, 8 fill the ring
        assertEquals(120, writer.maxFrame());
        assertFalse(offer(1, frame(121, 1)), "longer than maxFrame");
        for (int n = 1; n <= 8; n++)
        {
            assertTrue(offer(n, frame(120, n)));
        }
        assertFalse(offer(9, frame(1, 9)), "the ring is full");
        assertEquals(1, reader.read((number, buffer, index, length) -> true, 1));
        assertTrue(offer(9, frame(120, 9)), "one record's room back");
        assertFalse(offer(10, frame(1, 10)));
        assertEquals(8, reader.read((number, buffer, index, length) -> true, 100));
        assertTrue(reader.isEmpty());
    }

    @Test
    void aDeclinedRecordStaysAndAThrowingHandlerTakesIt()
    {
        assertTrue(offer(1, frame(10, 1)));
        assertTrue(offer(2, frame(10, 2)));
        assertEquals(1, reader.nextNumber());
        assertEquals(0, reader.read((number, buffer, index, length) -> false, 100));
        assertEquals(1, reader.nextNumber(), "declined: still there");
        assertThrows(IllegalStateException.class, () -> reader.read((number, buffer, index, length) ->
        {
            throw new IllegalStateException("handler");
        }, 100));
        assertEquals(2, reader.nextNumber(), "a record whose handler threw is not handed over again");
        assertEquals(1, reader.read((number, buffer, index, length) -> true, 100));
        assertEquals(0, reader.nextNumber());
    }

    @Test
    void nextNumberPassesThePaddingAtTheEnd()
    {
        for (int n = 1; n <= 7; n++)
        {
            assertTrue(offer(n, frame(120, n))); // 896 bytes: 128 left before the end
        }
        assertEquals(7, reader.read((number, buffer, index, length) -> true, 100));
        assertTrue(offer(8, frame(112, 8))); // 120 bytes: fits the 128 left
        assertTrue(offer(9, frame(100, 9))); // 108: does not fit the 8 left, pads and starts the ring
        assertEquals(8, reader.nextNumber());
        assertEquals(1, reader.read((number, buffer, index, length) -> number == 8, 1));
        assertEquals(9, reader.nextNumber(), "past the padding");
        assertEquals(1, reader.read((number, buffer, index, length) -> length == 100 && number == 9, 100));
        assertTrue(reader.isEmpty());
    }

    @Test
    void theConnectionMarkIsTheLastRecordSentOverTheConnectionAndIsNotARecord()
    {
        assertEquals(0, reader.connectionMark(), "none yet");
        writer.markConnection(7);
        writer.markConnection(9);
        assertEquals(9, reader.connectionMark(), "the writer's last, through the other mapping");
        assertTrue(reader.isEmpty(), "a mark is not a record");
        assertTrue(offer(10, frame(100, 10)));
        assertEquals(10, reader.nextNumber());
        assertEquals(9, reader.connectionMark(), "records leave it as it is");
    }

    @Test
    void aTailOutsideTheRingIsRefused()
    {
        for (final long tail : new long[] {CAPACITY + 8, -8, Long.MIN_VALUE, Long.MAX_VALUE})
        {
            scribbler.putLongVolatile(CAPACITY + RecordRing.TAIL_OFFSET, tail);
            assertThrows(IllegalStateException.class, () -> reader.nextNumber(), "tail " + tail);
        }
    }

    @Test
    void aRecordLengthThatDoesNotFitIsRefused()
    {
        for (final int length : new int[] {0, 7, -2, Integer.MAX_VALUE, Integer.MIN_VALUE, CAPACITY + 8, 120})
        {
            final DriverRing fresh = freshReader();
            scribbler.putInt(0, length);
            scribbler.putInt(4, 1);
            // a tail that says 112 bytes are written: a length of 120 runs past it
            scribbler.putLongVolatile(CAPACITY + RecordRing.TAIL_OFFSET, 112);
            assertThrows(IllegalStateException.class, () -> fresh.read((number, buffer, index, l) -> true, 1),
                "length " + length);
            fresh.free();
        }
    }

    @Test
    void paddingWithNoRecordAfterItIsRefused()
    {
        final DriverRing fresh = freshReader();
        scribbler.putInt(0, -1);
        scribbler.putLongVolatile(CAPACITY + RecordRing.TAIL_OFFSET, CAPACITY);
        assertThrows(IllegalStateException.class, fresh::nextNumber);
        fresh.free();
    }

    @Test
    void aHeadWrittenOverChoosesOnlyWhereInTheRingTheWriterWrites()
    {
        for (final long head : new long[] {Long.MAX_VALUE, Long.MIN_VALUE, -1, 5L * CAPACITY + 3})
        {
            scribbler.putLongVolatile(CAPACITY + RecordRing.HEAD_OFFSET, head);
            for (int n = 1; n <= 20; n++)
            {
                final byte[] bytes = frame(120, n);
                writer.offer(n, new UnsafeBuffer(bytes), bytes.length, null); // may be refused; never outside the ring
            }
        }
        // past the records the writer writes only its tail (the head is the scribbler's own)
        for (int i = 8; i < DriverRing.fileBytes(CAPACITY) - CAPACITY; i += 8)
        {
            if (i != RecordRing.HEAD_OFFSET)
            {
                assertEquals(0L, scribbler.getLong(CAPACITY + i), "byte " + i + " past the records");
            }
        }
    }

    private DriverRing freshReader()
    {
        try
        {
            final Path file = directory.resolve("fresh-" + System.nanoTime());
            final DriverRing ring = DriverRing.create(file, CAPACITY, false);
            scribbler = new UnsafeBuffer(SharedMemory.mapExisting(file, DriverRing.fileBytes(CAPACITY)));
            return ring;
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }

    private boolean offer(final int number, final byte[] frame)
    {
        final boolean written = writer.offer(number, new UnsafeBuffer(frame), frame.length, null);
        if (written)
        {
            assertFalse(reader.isEmpty());
        }
        return written;
    }

    private static byte[] frame(final int length, final int number)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(number * 31 + i);
        }
        return bytes;
    }
}
