package org.rds4j.core;

/**
 * What bounds an idle wait of the thread that runs the duty cycle (the agent, or in INVOKER mode the thread
 * holding it): work handed over while it was deciding to park, and the deadlines of timers that only a duty
 * cycle runs. Called by that thread only, between duty cycles.
 */
interface IdleBounds
{
    /** @return true if an application thread has queued work since the last duty cycle looked. */
    boolean hasQueuedInput();

    /**
     * @param nowNs the stack's clock now ({@link StackOptions#nanoClock()}).
     * @return the latest time for the next duty cycle, or {@link org.rds4j.core.spi.Transport#NO_DEADLINE}.
     */
    long idleDeadlineNs(long nowNs);
}
