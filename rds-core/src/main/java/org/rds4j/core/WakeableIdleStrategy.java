package org.rds4j.core;

import org.agrona.concurrent.IdleStrategy;

/**
 * Wraps an idle strategy given by the application (one that is not a {@link ParkingBackoffIdleStrategy}) so
 * that it reports to a {@link WakeSignal}: the whole idle call counts as parked, since any agrona strategy
 * may park inside it.
 */
final class WakeableIdleStrategy implements IdleStrategy
{
    private final IdleStrategy delegate;
    private final WakeSignal signal;

    WakeableIdleStrategy(final IdleStrategy delegate, final WakeSignal signal)
    {
        this.delegate = delegate;
        this.signal = signal;
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
        signal.parking();
        delegate.idle();
        signal.awake();
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
