package org.rds4j.samples.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SequenceTrackerTest
{
    @Test
    void inOrderStreamIsClean()
    {
        final SequenceTracker t = track(0, 1, 2, 3, 4);
        assertEquals(5, t.distinct());
        assertEquals(0, t.duplicated());
        assertEquals(0, t.reordered());
        assertEquals(0, t.missing());
        assertEquals(0, t.lost(5));
    }

    @Test
    void aLateNumberCountsAsOneReordered()
    {
        final SequenceTracker t = new SequenceTracker();
        assertEquals(SequenceTracker.IN_ORDER, t.record(0));
        assertEquals(SequenceTracker.AHEAD, t.record(2));
        assertEquals(1, t.missing(), "1 is missing until it comes");
        assertEquals(SequenceTracker.REORDERED, t.record(1));
        assertEquals(SequenceTracker.IN_ORDER, t.record(3));
        assertEquals(1, t.reordered());
        assertEquals(0, t.duplicated());
        assertEquals(4, t.distinct());
        assertEquals(0, t.lost(4));
    }

    @Test
    void aRepeatedNumberCountsAsOneDuplicate()
    {
        final SequenceTracker t = new SequenceTracker();
        t.record(0);
        t.record(1);
        assertEquals(SequenceTracker.DUPLICATE, t.record(1));
        t.record(2);
        assertEquals(1, t.duplicated());
        assertEquals(0, t.reordered());
        assertEquals(3, t.distinct());
        assertEquals(0, t.lost(3));
        // a late duplicate of an older one too
        assertEquals(SequenceTracker.DUPLICATE, t.record(0));
        assertEquals(2, t.duplicated());
    }

    @Test
    void aGapIsLost()
    {
        final SequenceTracker t = track(0, 1, 3);
        assertEquals(0, t.reordered());
        assertEquals(0, t.duplicated());
        assertEquals(1, t.missing());
        assertEquals(1, t.lost(4), "2 never came");
        assertEquals(2, t.lost(5), "2 and 4 never came");
        assertEquals(1, t.lost(0), "without a count, the gap below the highest");
    }

    @Test
    void aMissingTailIsLostOnlyAgainstTheSendersCount()
    {
        final SequenceTracker t = track(0, 1, 2);
        assertEquals(0, t.missing());
        assertEquals(7, t.lost(10));
    }

    @Test
    void farJumpsAndVeryLateNumbers()
    {
        final SequenceTracker t = new SequenceTracker();
        t.record(0);
        assertEquals(SequenceTracker.AHEAD, t.record(3 * SequenceTracker.WINDOW));
        assertEquals(3L * SequenceTracker.WINDOW - 1, t.missing());
        // far below the window: cannot tell, counted as a late arrival
        assertEquals(SequenceTracker.REORDERED, t.record(1));
        // within the window and never seen: late; seen: duplicate
        assertEquals(SequenceTracker.REORDERED, t.record(3L * SequenceTracker.WINDOW - 5));
        assertEquals(SequenceTracker.DUPLICATE, t.record(3L * SequenceTracker.WINDOW - 5));
        assertEquals(SequenceTracker.DUPLICATE, t.record(3L * SequenceTracker.WINDOW));
        assertEquals(SequenceTracker.INVALID, t.record(-1));
        assertEquals(2, t.reordered());
        assertEquals(2, t.duplicated());
        assertEquals(4, t.distinct());
    }

    @Test
    void bitsOfAReusedSlotAreClearedWhenTheWindowMoves()
    {
        final SequenceTracker t = new SequenceTracker();
        for (long s = 0; s < SequenceTracker.WINDOW; s++)
        {
            t.record(s);
        }
        // WINDOW + 1 skipped: its slot (the one of 1) must read as not seen
        t.record(SequenceTracker.WINDOW + 2L);
        assertEquals(SequenceTracker.REORDERED, t.record(SequenceTracker.WINDOW + 1L));
        assertEquals(SequenceTracker.REORDERED, t.record(SequenceTracker.WINDOW));
        assertEquals(0, t.duplicated());
        assertEquals(0, t.lost(SequenceTracker.WINDOW + 3L));
    }

    private static SequenceTracker track(final long... sequences)
    {
        final SequenceTracker t = new SequenceTracker();
        for (final long s : sequences)
        {
            t.record(s);
        }
        return t;
    }
}
