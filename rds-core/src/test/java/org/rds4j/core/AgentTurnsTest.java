package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rds4j.core.AgentTurns.Turn.DORMANT;
import static org.rds4j.core.AgentTurns.Turn.LEAD;
import static org.rds4j.core.AgentTurns.Turn.STAND_BY;

/** {@link AgentTurns}: when the agent thread drives the stack, each rule with the counts that decide it. */
class AgentTurnsTest
{
    private final AgentTurns turns = new AgentTurns();

    @Test
    void leadsWhileNoCallWaitsOrHasEnded()
    {
        assertEquals(LEAD, turns.next(0, 0, false));
        assertEquals(LEAD, turns.next(0, 0, false));
    }

    @Test
    void standsByForOnePeriodAfterACallEnded()
    {
        assertEquals(STAND_BY, turns.next(0, 1, false), "a call ended since the last look: its thread may call again");
        assertEquals(LEAD, turns.next(0, 1, false), "none ended during the period: the agent takes over");
    }

    @Test
    void standsByWhileCallsWaitAndEnd()
    {
        assertEquals(STAND_BY, turns.next(1, 1, false));
        assertEquals(STAND_BY, turns.next(1, 2, false));
        assertEquals(STAND_BY, turns.next(2, 3, false));
    }

    @Test
    void sleepsWhileCallsWaitAndNoneEnds()
    {
        assertEquals(STAND_BY, turns.next(1, 5, false));
        assertEquals(DORMANT, turns.next(1, 5, false), "the waiting threads lead: no need to look every period");
        assertEquals(DORMANT, turns.next(3, 5, false));
    }

    @Test
    void workHandedOverWhileNoCallWaitsIsTakenAtOnce()
    {
        assertEquals(LEAD, turns.next(0, 7, true), "a call just ended, but nobody drives the stack for the new work");
    }

    @Test
    void workHandedOverWhileCallsWaitIsLeftToTheirThreads()
    {
        assertEquals(STAND_BY, turns.next(1, 1, true));
        assertEquals(DORMANT, turns.next(1, 1, true), "the leading thread was woken for it by the wake signal");
    }
}
