package org.rds4j.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rds4j.core.AgentTurns.MAX_STAND_BY_NS;
import static org.rds4j.core.AgentTurns.MIN_STAND_BY_NS;
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

    @Test
    void thePeriodDoublesWhileCallsKeepEndingUpToTheLongest()
    {
        long ended = 0;
        final long[] expected = {MIN_STAND_BY_NS, 2 * MIN_STAND_BY_NS, 4 * MIN_STAND_BY_NS, 8 * MIN_STAND_BY_NS,
            16 * MIN_STAND_BY_NS, 32 * MIN_STAND_BY_NS};
        assertEquals(32 * MIN_STAND_BY_NS, MAX_STAND_BY_NS, "the sequence below reaches the longest period");
        for (final long periodNs : expected)
        {
            assertEquals(STAND_BY, turns.next(1, ++ended, false));
            assertEquals(periodNs, turns.standByNs());
        }
        assertEquals(STAND_BY, turns.next(0, ++ended, false), "a look between two calls of the loop");
        assertEquals(MAX_STAND_BY_NS, turns.standByNs());
        assertEquals(STAND_BY, turns.next(1, ++ended, false));
        assertEquals(MAX_STAND_BY_NS, turns.standByNs(), "never longer than the longest");
    }

    @Test
    void thePeriodIsTheShortestAgainOnceTheAgentLeadsOrSleeps()
    {
        assertEquals(STAND_BY, turns.next(1, 1, false));
        assertEquals(STAND_BY, turns.next(1, 2, false));
        assertEquals(2 * MIN_STAND_BY_NS, turns.standByNs());
        assertEquals(LEAD, turns.next(0, 2, false), "the calls stopped: the agent takes over");
        assertEquals(STAND_BY, turns.next(0, 3, false));
        assertEquals(MIN_STAND_BY_NS, turns.standByNs());
        assertEquals(STAND_BY, turns.next(1, 4, false));
        assertEquals(DORMANT, turns.next(1, 4, false), "a call waits long: the agent sleeps until it ends");
        assertEquals(STAND_BY, turns.next(0, 5, false));
        assertEquals(MIN_STAND_BY_NS, turns.standByNs());
    }
}
