package org.rds4j.samples.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.api.Test;

class StressMessageTest
{
    @Test
    void headerRoundTrip()
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(100);
        StressMessage.writeHeader(b, StressMessage.REQUEST, StressMessage.FLAG_PATTERN, 65535, 100, 4096, 1L << 40, -7);
        assertTrue(StressMessage.isStress(b));
        assertEquals(StressMessage.REQUEST, StressMessage.type(b));
        assertEquals(StressMessage.FLAG_PATTERN, StressMessage.flags(b));
        assertEquals(65535, StressMessage.task(b));
        assertEquals(100, StressMessage.length(b));
        assertEquals(4096, StressMessage.arg(b));
        assertEquals(1L << 40, StressMessage.sequence(b));
        assertEquals(-7, StressMessage.timestamp(b));
        assertEquals(0x52, b.get(0), "big-endian magic \"RDST\"");
        StressMessage.restamp(b, 9, 10);
        assertEquals(9, StressMessage.sequence(b));
        assertEquals(10, StressMessage.timestamp(b));
        assertEquals(65535, StressMessage.task(b));

        // a view in little-endian order reads the same fields
        final ByteBuffer little = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(9, StressMessage.sequence(little));
        assertEquals(100, StressMessage.length(little));
    }

    @Test
    void shortOrForeignPayloadIsNotStress()
    {
        assertFalse(StressMessage.isStress(ByteBuffer.allocate(StressMessage.HEADER_BYTES - 1)));
        assertFalse(StressMessage.isStress(ByteBuffer.allocate(64)));
    }

    @Test
    void patternMatchesItselfOnly()
    {
        for (final int size : new int[] {StressMessage.HEADER_BYTES, 33, 39, 40, 41, 64, 1000, 1024})
        {
            final ByteBuffer b = ByteBuffer.allocate(size);
            StressMessage.writeHeader(b, StressMessage.REQUEST, StressMessage.FLAG_PATTERN, 3, size, 0, 17, 0);
            StressMessage.fill(b, 3, 17);
            assertTrue(StressMessage.matches(b, 3, 17), "size " + size);
            if (size > StressMessage.HEADER_BYTES)
            {
                assertFalse(StressMessage.matches(b, 3, 18), "another sequence, size " + size);
                assertFalse(StressMessage.matches(b, 4, 17), "another task, size " + size);
            }
        }
    }

    @Test
    void everyFlippedByteIsFound()
    {
        final int size = 75; // 5 whole words and a tail of 3 bytes after the header
        final ByteBuffer b = ByteBuffer.allocateDirect(size);
        StressMessage.fill(b, 1, 123_456);
        for (int i = StressMessage.HEADER_BYTES; i < size; i++)
        {
            for (final int bit : new int[] {0x01, 0x80})
            {
                b.put(i, (byte)(b.get(i) ^ bit));
                assertFalse(StressMessage.matches(b, 1, 123_456), "byte " + i + " bit " + bit);
                b.put(i, (byte)(b.get(i) ^ bit));
            }
        }
        assertTrue(StressMessage.matches(b, 1, 123_456));
    }

    @Test
    void patternIsNotZeros()
    {
        final ByteBuffer b = ByteBuffer.allocate(StressMessage.HEADER_BYTES + 64);
        assertFalse(StressMessage.matches(b, 0, 0), "an all-zero payload must fail the check");
    }
}
