package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ConductorProgress}: a conductor runs while it turns or sleeps, and not while it stays in one turn. */
class ConductorProgressTest
{
    private final ConductorProgress progress = new ConductorProgress();

    @Test
    void aConductorThatTurnsBetweenLooksRuns()
    {
        progress.turned();
        assertTrue(progress.runs());
        progress.turned();
        progress.turned();
        assertTrue(progress.runs());
    }

    @Test
    void aConductorThatStaysInOneTurnDoesNotRunUntilItTurnsAgain()
    {
        progress.turned();
        assertTrue(progress.runs());
        assertFalse(progress.runs());
        assertFalse(progress.runs());
        progress.turned();
        assertTrue(progress.runs());
    }

    @Test
    void aConductorAsleepInItsSelectorRunsWithoutTurning()
    {
        progress.turned();
        assertTrue(progress.runs());
        progress.sleeping(true);
        assertTrue(progress.runs());
        assertTrue(progress.runs());
        progress.sleeping(false);
        assertFalse(progress.runs());
    }

    @Test
    void aConductorThatHasNotTurnedYetRunsAtTheFirstLook()
    {
        assertTrue(progress.runs()); // the first look has nothing to compare with: the driver has just started
        assertFalse(progress.runs());
    }
}
