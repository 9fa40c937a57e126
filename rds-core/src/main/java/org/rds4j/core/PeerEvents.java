package org.rds4j.core;

import org.rds4j.RdsPeerListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The stack's peer events for its {@link RdsPeerListener} ({@link org.rds4j.RdsStack#setPeerListener}): the duty
 * cycle queues each event and submits a task to the application's executor if none is submitted or running; the
 * task calls the listener for each queued event in order. So the listener never runs in the duty cycle, and never
 * twice at once.
 */
final class PeerEvents implements Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(PeerEvents.class);

    private record Event(boolean up, InetAddress local, InetAddress peer)
    {
    }

    private record Target(Executor executor, RdsPeerListener listener)
    {
    }

    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile Target target;

    /** Any thread: the listener and its executor; a null listener stops the events and drops those queued. */
    void listener(final Executor executor, final RdsPeerListener listener)
    {
        if (listener == null)
        {
            target = null;
            events.clear();
            return;
        }
        target = new Target(executor, listener);
    }

    /** Agent: a connection came up or went down. */
    void offer(final boolean up, final InetAddress local, final InetAddress peer)
    {
        final Target current = target;
        if (current != null)
        {
            events.offer(new Event(up, local, peer));
            schedule(current);
        }
    }

    private void schedule(final Target current)
    {
        if (!scheduled.get() && scheduled.compareAndSet(false, true))
        {
            try
            {
                current.executor().execute(this);
            }
            catch (final RejectedExecutionException ex)
            {
                scheduled.set(false);
                LOG.warn("the executor refused the peer listener's task; its events wait for the next one", ex);
            }
        }
    }

    @Override
    public void run()
    {
        try
        {
            Event event;
            while ((event = events.poll()) != null)
            {
                final Target current = target;
                if (current == null)
                {
                    break;
                }
                call(current.listener(), event);
            }
        }
        finally
        {
            scheduled.set(false);
        }
        // queued after the last look, before the flag was cleared: that offer found it set
        final Target current = target;
        if (current != null && !events.isEmpty())
        {
            schedule(current);
        }
    }

    private static void call(final RdsPeerListener listener, final Event event)
    {
        try
        {
            if (event.up())
            {
                listener.onPeerUp(event.local(), event.peer());
            }
            else
            {
                listener.onPeerDown(event.local(), event.peer());
            }
        }
        catch (final RuntimeException ex)
        {
            LOG.error("the peer listener threw on {}", event, ex);
        }
    }
}
