package org.rds4j.core;

import org.rds4j.RdsMessageHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.ClosedChannelException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A socket's push delivery ({@link org.rds4j.RdsSocket#startDelivery}): the socket's {@link SocketWatcher}, which
 * submits one task to the application's executor when the duty cycle delivers to the socket and no task of it
 * is submitted or running. The task polls the socket as an application thread would, so a message's bytes stay
 * in the receive buffer until its handler returns (the back-pressure of a slow reader) and notifications go to
 * the listener first. One task at a time keeps the order; a task hands over at most {@link #BATCHES} polls'
 * worth and then submits itself again, so that one busy socket does not hold a thread of a shared pool forever.
 */
final class PushDelivery implements SocketWatcher, Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(PushDelivery.class);
    /** Messages per poll. */
    private static final int BATCH = 64;
    /** Polls per task. */
    private static final int BATCHES = 16;

    private final WatchableSocket socket;
    private final Executor executor;
    private final RdsMessageHandler handler;
    /** A task is submitted or running: set by whoever submits it, cleared by the task as it ends. */
    private final AtomicBoolean scheduled = new AtomicBoolean();

    PushDelivery(final WatchableSocket socket, final Executor executor, final RdsMessageHandler handler)
    {
        this.socket = socket;
        this.executor = executor;
        this.handler = handler;
    }

    @Override
    public void signal()
    {
        if (!scheduled.get() && scheduled.compareAndSet(false, true))
        {
            try
            {
                executor.execute(this);
            }
            catch (final RejectedExecutionException ex)
            {
                scheduled.set(false);
                LOG.warn("{}: the executor refused a delivery; messages stay queued until the next one", socket, ex);
            }
        }
    }

    @Override
    public void run()
    {
        try
        {
            for (int i = 0; i < BATCHES && socket.isOpen(); i++)
            {
                if (pollOnce() == 0)
                {
                    break;
                }
            }
        }
        finally
        {
            scheduled.set(false);
        }
        // delivered after the last poll looked, before the flag was cleared: that signal found it set
        if (socket.isOpen() && socket.hasQueued())
        {
            signal();
        }
    }

    private int pollOnce()
    {
        try
        {
            return socket.poll(handler, BATCH);
        }
        catch (final ClosedChannelException ex)
        {
            return 0; // closed meanwhile: delivery ends
        }
        catch (final Exception ex)
        {
            // the message it threw on is taken, as after a poll's handler throws: go on with the next
            LOG.error("{}: the delivery handler threw", socket, ex);
            return 1;
        }
    }
}
