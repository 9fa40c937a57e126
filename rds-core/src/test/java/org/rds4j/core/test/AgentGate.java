package org.rds4j.core.test;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * An idle strategy that lets a test hold a stack's agent between duty cycles, so that messages stay in a
 * socket's hand-off queue until the test lets go. Pass it to {@code CoreStack.open(config, idleStrategy)}.
 * Tests only.
 */
public final class AgentGate implements IdleStrategy
{
    private final IdleStrategy delegate = new BackoffIdleStrategy(100, 100, 1_000, 1_000_000);
    /** Set to stop the agent at its next idle call; clear to let it go. */
    public volatile boolean hold;
    /** True while the agent is stopped. */
    public volatile boolean held;

    private void gate()
    {
        while (hold && !Thread.currentThread().isInterrupted())
        {
            held = true;
            LockSupport.parkNanos(100_000);
        }
        held = false;
    }

    @Override
    public void idle(final int workCount)
    {
        gate();
        delegate.idle(workCount);
    }

    @Override
    public void idle()
    {
        gate();
        delegate.idle();
    }

    @Override
    public void reset()
    {
        gate();
        delegate.reset();
    }
}
