package org.rds4j.core;

import org.jctools.queues.SpscGrowableArrayQueue;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsNotificationListener;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A socket's receive queue (the kernel's {@code rs_recv_queue}): the messages the agent delivered and their
 * bytes, the events queued for the listener, which go out first, and the threads blocked receiving.
 * <p>
 * Threads: the agent offers messages and events and wakes the waiters; application threads take, one at a
 * time under a lock that is held only while taking, never while waiting.
 */
final class ReceiveQueue
{
    // The agent writes, application threads take.
    /**
     * Practically unbounded because congestion is advisory and a peer may overrun the receive buffer; it grows
     * to the deepest backlog seen and keeps that size, so steady state allocates nothing.
     */
    private final SpscGrowableArrayQueue<Message> messages = new SpscGrowableArrayQueue<>(1024, 1 << 30);
    private final AtomicLong queuedBytes = new AtomicLong();
    private final ConcurrentLinkedQueue<Notification> notifications = new ConcurrentLinkedQueue<>();
    /** Threads blocked in receive: they register, the agent wakes them. */
    final Waiters waiters = new Waiters();

    // Application threads (the agent only tries the lock, at unbind).
    private final ReentrantLock lock = new ReentrantLock();
    private volatile RdsNotificationListener listener;

    // Set at construction.
    private final MessagePool pool;
    private final Congestion.Member socket;
    private final Runnable wakeAgent;

    /**
     * @param pool      where taken messages go back.
     * @param socket    the socket this is the queue of: whether taking may release its congested port.
     * @param wakeAgent unparks the agent, so that it releases the port at once.
     */
    ReceiveQueue(final MessagePool pool, final Congestion.Member socket, final Runnable wakeAgent)
    {
        this.pool = pool;
        this.socket = socket;
        this.wakeAgent = wakeAgent;
    }

    /** @return the bytes queued; any thread. */
    long queuedBytes()
    {
        return queuedBytes.get();
    }

    /**
     * Application threads: takes one message if one is queued.
     *
     * @param dst receives the payload, truncated to its room.
     * @return the sender, or null if nothing was queued.
     */
    InetSocketAddress takeInto(final ByteBuffer dst)
    {
        lock.lock();
        try
        {
            final Message message = next();
            if (message == null)
            {
                return null;
            }
            final int length = Math.min(message.payloadLength, dst.remaining());
            message.buffer.getBytes(RdsHeader.LENGTH, dst, length);
            final InetSocketAddress sender = message.sender;
            taken(message);
            return sender;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Application threads: hands queued messages to a handler, each returned to the pool after it.
     *
     * @param handler gets each message.
     * @param limit   most messages.
     * @return how many were handled.
     */
    int poll(final RdsMessageHandler handler, final int limit)
    {
        lock.lock();
        try
        {
            int delivered = 0;
            Message message;
            while (delivered < limit && (message = next()) != null)
            {
                delivered++;
                try
                {
                    handler.onMessage(message.sender, message.payload());
                }
                finally
                {
                    taken(message);
                }
            }
            return delivered;
        }
        finally
        {
            lock.unlock();
        }
    }

    private Message next()
    {
        if (!notifications.isEmpty())
        {
            deliverNotifications();
        }
        return messages.relaxedPoll();
    }

    private void deliverNotifications()
    {
        Notification notification;
        while ((notification = notifications.poll()) != null)
        {
            final RdsNotificationListener current = listener;
            if (current != null)
            {
                notification.deliverTo(current);
            }
        }
    }

    private void taken(final Message message)
    {
        final long queued = queuedBytes.addAndGet(-message.payloadLength);
        if (Congestion.mayRelease(socket, queued))
        {
            wakeAgent.run();
        }
        pool.release(message);
    }

    /**
     * Agent: queues a received message; receivers are woken at the end of the duty cycle.
     *
     * @param message the message.
     * @return the bytes now queued.
     */
    long offer(final Message message)
    {
        final long queued = queuedBytes.addAndGet(message.payloadLength);
        messages.offer(message);
        return queued;
    }

    /**
     * Agent, when the socket is closed: recycles what the application did not receive. Never waits for an
     * application thread: if one is still inside receive or poll, the messages are left to the garbage
     * collector instead.
     */
    void releaseAll()
    {
        if (!lock.tryLock())
        {
            return;
        }
        try
        {
            Message message;
            while ((message = messages.relaxedPoll()) != null)
            {
                queuedBytes.addAndGet(-message.payloadLength);
                pool.release(message);
            }
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Any thread: the listener events go to, on the thread that next receives or polls; null for none.
     *
     * @param listener the listener.
     */
    void listener(final RdsNotificationListener listener)
    {
        this.listener = listener;
    }

    /**
     * Agent: queues an event if someone listens, and wakes the blocked receivers to deliver it.
     *
     * @param notification the event.
     */
    void notifyListener(final Notification notification)
    {
        if (listener != null)
        {
            notifications.offer(notification);
            waiters.wakeAll();
        }
    }
}
