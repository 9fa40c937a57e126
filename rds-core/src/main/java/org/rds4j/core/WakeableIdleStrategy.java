package org.rds4j.core;

import org.agrona.concurrent.IdleStrategy;

/**
 * Wraps the configured idle strategy and publishes whether the agent is idling, so that an application
 * thread that hands it work can unpark it instead of waiting out a park period. A wake-up that races with
 * the agent going idle is not lost for longer than the strategy's longest park.
 */
final class WakeableIdleStrategy implements IdleStrategy
{
    private final IdleStrategy delegate;
    private volatile boolean idling;

    WakeableIdleStrategy(final IdleStrategy delegate)
    {
        this.delegate = delegate;
    }

    boolean isIdling()
    {
        return idling;
    }

    @Override
    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            delegate.reset();
            return;
        }
        idle();
    }

    @Override
    public void idle()
    {
        idling = true;
        delegate.idle();
        idling = false;
    }

    @Override
    public void reset()
    {
        delegate.reset();
    }

    @Override
    public String alias()
    {
        return "wakeable-" + delegate.alias();
    }
}
