package org.rds4j.core;

/**
 * Work that the process hosting a stack adds to its agent thread's duty cycle: a driver's clients' rings
 * ({@link DriverServer}), so that a client's send is transmitted by the agent that is awake anyway instead of
 * waking the driver's conductor first. Run on the stack's own agent thread only, never on an application thread
 * that drives the stack.
 */
interface AgentExtension
{
    /**
     * The agent thread, in its duty cycle: from now until {@link #stopping()} it looks again each cycle.
     *
     * @return the work done (0 if none).
     */
    int doWork();

    /**
     * The agent thread stops running duty cycles for a while (it parks in its idle strategy, or stands aside for an
     * application thread): what it looked at must be watched by someone else from now on. Called by whichever
     * thread idles; called once more than needed costs only that.
     */
    void stopping();
}
