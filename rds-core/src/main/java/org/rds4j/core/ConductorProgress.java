package org.rds4j.core;

/**
 * Whether a driver's conductor runs, for its heartbeat: the agent writes the heartbeat, so by itself a heartbeat
 * that moves says only that the agent runs, and a conductor stuck in one of its steps (a client's frame, a task)
 * would leave every client waiting for replies without a timeout. The conductor counts its loop's turns and says
 * when it sleeps in its selector; the agent, before each beat, asks {@link #runs()}: the conductor sleeps, or has
 * turned since the last look. A heartbeat that skips its beats while the conductor does not run then stands still
 * as it does for a stopped agent, and the clients let the driver go after their {@code driverTimeout}.
 * <p>
 * A turn that merely takes longer than a heartbeat period skips a beat, harmlessly: a client waits for
 * {@code driverTimeout} (10 s by default, at least 100 periods) before it lets a driver go.
 * <p>
 * Threads: the conductor calls {@link #turned()} and {@link #sleeping}; the agent calls {@link #runs()}.
 */
final class ConductorProgress
{
    // Conductor writes, agent reads.
    private volatile long turns;
    private volatile boolean asleep;

    // Agent only.
    private long turnsSeen = -1;

    /** Conductor: one more turn of its loop. */
    void turned()
    {
        turns = turns + 1; // one writer
    }

    /** Conductor: it is about to wait in its selector (true), or has come back from it (false). */
    void sleeping(final boolean inSelector)
    {
        asleep = inSelector;
    }

    /** @return true if the conductor sleeps in its selector or has turned since the last call. Agent only. */
    boolean runs()
    {
        final long now = turns;
        final boolean runs = asleep || now != turnsSeen;
        turnsSeen = now;
        return runs;
    }
}
