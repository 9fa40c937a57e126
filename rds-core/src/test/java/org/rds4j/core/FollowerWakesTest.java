package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FollowerWakes}: a sender wakes a waiting thread at each hold's end unless it streams whole batches. */
class FollowerWakesTest
{
    private final FollowerWakes wakes = new FollowerWakes();

    @Test
    void aSenderThatHasNotFilledABatchWakesAtEveryHold()
    {
        assertTrue(wakes.appended(true));
        assertTrue(wakes.appended(false));
        assertTrue(wakes.appended(false));
    }

    @Test
    void aBatchAfterOneTheSenderFilledWakesNobody()
    {
        assertTrue(wakes.appended(true));
        assertTrue(wakes.appended(false));
        wakes.filled();
        assertFalse(wakes.appended(true), "the next batch: this sender streams");
        assertFalse(wakes.appended(false));
        wakes.filled();
        assertFalse(wakes.appended(true));
    }

    @Test
    void aBatchSentByAnotherThreadEndsTheStream()
    {
        wakes.appended(true);
        wakes.filled();
        assertFalse(wakes.appended(true));
        assertFalse(wakes.appended(false));
        // the sender stopped before this batch was full: the thread that led sent it
        assertTrue(wakes.appended(true), "a batch after one the sender did not fill: wake again");
        assertTrue(wakes.appended(false));
    }

    @Test
    void aFillCountsForTheNextBatchOnly()
    {
        wakes.appended(true);
        wakes.filled();
        assertFalse(wakes.appended(true), "after the fill");
        assertTrue(wakes.appended(true), "a second batch with no fill between: not streaming");
    }
}
