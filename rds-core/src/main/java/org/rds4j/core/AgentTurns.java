package org.rds4j.core;

/**
 * When the agent thread drives the stack and when it leaves that to the application (AGENT mode). An
 * application thread blocked in a call runs the duty cycle itself (see {@link Invoker}): it then reads the
 * reply it waits for and writes what it sends without handing either to another thread, which is what makes a
 * blocking round trip cost two wake-ups, as with blocking NIO. The agent thread is needed only while no
 * application thread is in such a call: then nobody else acks, retransmits, reconnects or reads.
 * <p>
 * The agent thread asks {@link #next} after each of its duty cycles and after each of its waits:
 * <pre>
 *   LEAD     no call is waiting, and either none ended in the last period or work was handed to the stack
 *            since: run a duty cycle (and idle, as the agent always has).
 *   STAND_BY no call is waiting but one ended in the last period: its thread is likely to call again at once,
 *            so the agent stays out of the way for one period (and takes over within it if work is handed over).
 *   DORMANT  calls are waiting and none ended in the last period: their threads lead and idle; the agent
 *            sleeps until the last waiting call ends or work is handed over.
 * </pre>
 * A period is one wait of the agent thread, {@link Invoker#STAND_BY_NS}. State of the agent thread only.
 */
final class AgentTurns
{
    enum Turn
    {
        LEAD, STAND_BY, DORMANT
    }

    /** The count of ended calls when the agent last asked. */
    private long endedSeen;

    /**
     * @param waitingCalls application threads now waiting in a blocking call.
     * @param endedCalls   blocking calls ended so far (a count that only grows).
     * @param handedOver   work was handed to the stack since the agent last asked (a send, a command).
     * @return what the agent thread does next.
     */
    Turn next(final int waitingCalls, final long endedCalls, final boolean handedOver)
    {
        final boolean endedRecently = endedCalls != endedSeen;
        endedSeen = endedCalls;
        if (waitingCalls > 0)
        {
            return endedRecently ? Turn.STAND_BY : Turn.DORMANT;
        }
        return handedOver || !endedRecently ? Turn.LEAD : Turn.STAND_BY;
    }
}
