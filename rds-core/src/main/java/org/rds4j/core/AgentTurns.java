package org.rds4j.core;

import java.util.concurrent.TimeUnit;

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
 * A period is one wait of the agent thread ({@link #standByNs()}): {@link #MIN_STAND_BY_NS} after the agent led or
 * slept, doubling up to {@link #MAX_STAND_BY_NS} while each look finds that calls ended since the last (a
 * request/response loop). Each look wakes the agent thread, and on a machine whose cores the looping threads
 * keep busy that wake preempts one of them for the length of a wake-up: with a look every millisecond, 1-2 % of
 * 8 us round trips took about 120 us instead, and on a slower virtual machine a look every 8 ms still took the
 * ping-pong's p99 from about 31 to 51 us. Once calls stop, the agent takes over within twice the longest period
 * (64 ms): until then what arrives waits in the kernel for the next call, and the peer for its ack; whatever an
 * application thread hands the stack (a send, a command), and a non-blocking call that finds nothing to take (the
 * application polls now: it will not drive the stack), wakes the agent at once. State of the agent thread only.
 */
final class AgentTurns
{
    enum Turn
    {
        LEAD, STAND_BY, DORMANT
    }

    /** The first stand-by period. */
    static final long MIN_STAND_BY_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The longest stand-by period, reached while calls keep ending. */
    static final long MAX_STAND_BY_NS = TimeUnit.MILLISECONDS.toNanos(32);

    /** The first stand-by period, and the longest. */
    private final long firstStandByNs;
    private final long longestStandByNs;
    /** The count of ended calls when the agent last asked. */
    private long endedSeen;
    /** The stand-by period {@link #next} chose last. */
    private long standByNs;
    /** The last turn was {@link Turn#STAND_BY}: the period grows if the next is too. */
    private boolean standingBy;

    /** The periods of {@link #MIN_STAND_BY_NS} and {@link #MAX_STAND_BY_NS}. */
    AgentTurns()
    {
        this(MIN_STAND_BY_NS, MAX_STAND_BY_NS);
    }

    /**
     * @param firstStandByNs   the first stand-by period.
     * @param longestStandByNs the longest (tests make them long, to tell an early take-over from a period's end).
     */
    AgentTurns(final long firstStandByNs, final long longestStandByNs)
    {
        this.firstStandByNs = firstStandByNs;
        this.longestStandByNs = longestStandByNs;
        this.standByNs = firstStandByNs;
    }

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
        final Turn turn;
        if (waitingCalls > 0)
        {
            turn = endedRecently ? Turn.STAND_BY : Turn.DORMANT;
        }
        else
        {
            turn = handedOver || !endedRecently ? Turn.LEAD : Turn.STAND_BY;
        }
        standByNs = turn == Turn.STAND_BY && standingBy ? Math.min(standByNs * 2, longestStandByNs) : firstStandByNs;
        standingBy = turn == Turn.STAND_BY;
        return turn;
    }

    /** @return how long the agent thread stands by after {@link #next} said {@link Turn#STAND_BY}. */
    long standByNs()
    {
        return standByNs;
    }
}
