package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link RecordRing}: a reader takes what it checked, whatever the writer's side writes over the record meanwhile (a
 * writer in another process), and each record once. The writer and the reader are two rings over one buffer, as in
 * shared memory.
 */
class RecordRingTest
{
    private static final int CAPACITY = 1024;

    private final UnsafeBuffer memory = new UnsafeBuffer(ByteBuffer.allocateDirect(CAPACITY + RecordRing.POSITIONS_LENGTH));
    private final RecordRing writer = new RecordRing(memory, CAPACITY);
    private final RecordRing reader = new RecordRing(memory, CAPACITY);

    @Test
    void aLengthWrittenOverBetweenTheCheckAndTheTakeMovesTheHeadOnlyByTheLengthChecked()
    {
        writeTwoRecords();

        assertEquals(0, reader.next());
        assertEquals(16, reader.length());
        memory.putInt(0, 64); // past the tail (32): read again at the take, it would move the head beyond the records
        reader.take(0);

        assertEquals(16, reader.next());
        assertEquals(16, reader.length());
        assertEquals(2, memory.getInt(16 + 4));
        reader.take(16);
        assertEquals(-1, reader.next());
    }

    @Test
    void aRecordIsTakenOnceAndOnlyAfterTheReaderLookedAtIt()
    {
        writeTwoRecords();

        assertThrows(IllegalStateException.class, () -> reader.take(0), "not looked at");
        assertEquals(0, reader.next());
        reader.take(0);
        // a read within the handler of a read takes the record again: the outer take would skip the next one
        assertThrows(IllegalStateException.class, () -> reader.take(0), "taken twice");
        assertEquals(16, reader.next());
        assertThrows(IllegalStateException.class, () -> reader.take(0), "another record than the one looked at");
        reader.take(16);
        assertEquals(-1, reader.next());
    }

    @Test
    void aRecordCommittedShorterThanClaimedGivesBackTheRestEvenAfterPadding()
    {
        assertEquals(0, writer.claim(1000));
        writer.commit(0, 900); // 904 of 1,024 taken
        assertEquals(-1, writer.claim(200), "120 bytes left at the end and none at the start");
        assertEquals(0, reader.next());
        assertEquals(900, reader.length());
        reader.take(0);
        reader.publishHead();
        assertEquals(0, writer.claim(200), "past 120 bytes of padding, at the ring's start");
        writer.commit(0, 20); // 24 taken after the padding
        assertEquals(0, reader.next(), "past the padding");
        assertEquals(20, reader.length());
        reader.take(0);
        reader.publishHead();
        assertEquals(24, writer.claim(1000), "the 1,000 bytes after the short record: it gave the rest back");
        writer.commit(24, 8);
        assertEquals(32, writer.claim(16));
    }

    /** Two records of 16 bytes, at 0 and 16, numbered 1 and 2 after their lengths. */
    private void writeTwoRecords()
    {
        for (int i = 0; i < 2; i++)
        {
            final int at = writer.claim(16);
            memory.putInt(at + 4, i + 1);
            writer.commit();
        }
    }
}
