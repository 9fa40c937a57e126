package org.rds4j.core;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * Wraps an idle strategy given by the application (one that is not a {@link ParkingBackoffIdleStrategy}) so
 * that it reports to a {@link WakeSignal}: the whole idle call counts as parked, since any agrona strategy
 * may park inside it. One that may sleep first looks whether work was handed over before it said so, as
 * {@link WakeSignal#park} does: else it would sleep its whole period through it, a driver's clients would not
 * ring for what they write while it sleeps, and a close would wait for it.
 */
final class WakeableIdleStrategy implements IdleStrategy
{
    private final IdleStrategy delegate;
    private final WakeSignal signal;
    /** The delegate may sleep (it is not one that only spins or yields). */
    private final boolean sleeps;

    WakeableIdleStrategy(final IdleStrategy delegate, final WakeSignal signal)
    {
        this.delegate = delegate;
        this.signal = signal;
        this.sleeps = !(delegate instanceof BusySpinIdleStrategy || delegate instanceof YieldingIdleStrategy ||
            delegate instanceof NoOpIdleStrategy);
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
        if (!sleeps || !signal.hasQueuedInput())
        {
            delegate.idle();
        }
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
