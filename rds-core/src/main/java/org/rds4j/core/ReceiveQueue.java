package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.jctools.queues.SpscGrowableArrayQueue;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsReceiveInfo;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;

/**
 * A socket's receive queue (the kernel's {@code rs_recv_queue}): the messages the agent delivered and their
 * bytes, the events queued for the listener, which go out first, and the threads blocked receiving.
 * <p>
 * A delivered message is written once into the socket's {@link ReceiveRing} (shared memory, mapped at the first
 * message). The queue must still take every message, as the kernel's does: congestion is advisory, and a peer
 * may overrun the receive buffer with what it had queued before it saw the port congested. So a message that
 * does not fit (larger than the ring's largest record, or the ring is full) waits outside it in a pooled
 * message ({@code recv_ring_spill}), and so does every message after it until those are taken. That keeps
 * the order: while a message waits outside, every record in the ring is older than it and the ring gets no new
 * one, so a reader looks at the first message waiting outside first, then takes from the ring if it holds
 * anything, else that message.
 * (Looking at the ring first would let a record written after that look pass a message spilled after it.)
 * <p>
 * Threads: the agent offers messages and events and wakes the waiters; application threads take, one at a
 * time under a lock that is held only while taking, never while waiting.
 */
final class ReceiveQueue
{
    // The agent writes, application threads take.
    /** Created by the agent at the first message; read under the lock; null again once freed at close. */
    private volatile ReceiveRing ring;
    /**
     * Messages waiting outside the ring. Practically unbounded (see above); it grows to the deepest backlog seen
     * and keeps that size, so steady state allocates nothing.
     */
    private final SpscGrowableArrayQueue<Message> spilled = new SpscGrowableArrayQueue<>(1024, 1 << 30);
    /**
     * The bytes offered, written only by the thread running the duty cycle. What is queued is this less
     * {@link #takenBytes}: two counters of one writer each, so that neither side pays an atomic add per message.
     */
    private final AtomicLong offeredBytes = new AtomicLong();
    private final ConcurrentLinkedQueue<Notification> notifications = new ConcurrentLinkedQueue<>();
    /** Threads blocked in receive: they register, the agent wakes them. */
    final Waiters waiters = new Waiters();

    // Application threads (the agent only tries the lock, at unbind).
    private final TakeLock lock = new TakeLock();
    /** The bytes taken, less those a driver's session holds for its client; written only under the lock. */
    private final AtomicLong takenBytes = new AtomicLong();
    private volatile RdsNotificationListener listener;

    // Set at construction.
    private final MessagePool pool;
    private final Congestion.Member socket;
    private final Runnable wakeAgent;
    private final Path ringDirectory;
    private final int ringBytes;
    private final IntConsumer takenFromRing = this::taken;
    /** Told the length of each message taken: a driver's client reports what its application took. May be null. */
    private final IntConsumer onTaken;

    /**
     * @param pool          where messages that waited outside the ring go back once taken.
     * @param socket        the socket this is the queue of: whether taking may release its congested port.
     * @param wakeAgent     unparks the agent, so that it releases the port at once.
     * @param ringDirectory where the ring's memory is mapped from.
     * @param ringBytes     the ring's size, a power of two.
     */
    ReceiveQueue(
        final MessagePool pool, final Congestion.Member socket, final Runnable wakeAgent, final Path ringDirectory,
        final int ringBytes)
    {
        this(pool, socket, wakeAgent, ringDirectory, ringBytes, null);
    }

    /**
     * @param onTaken told the length of each message taken, on the taking thread; null for none.
     */
    ReceiveQueue(
        final MessagePool pool, final Congestion.Member socket, final Runnable wakeAgent, final Path ringDirectory,
        final int ringBytes, final IntConsumer onTaken)
    {
        this.onTaken = onTaken;
        this.pool = pool;
        this.socket = socket;
        this.wakeAgent = wakeAgent;
        this.ringDirectory = ringDirectory;
        this.ringBytes = ringBytes;
    }

    /**
     * @return whether a message or a notification is queued, so that a receive or poll would take something; any
     *         thread.
     */
    boolean hasQueued()
    {
        final ReceiveRing current = ring;
        return !notifications.isEmpty() || !spilled.isEmpty() || (current != null && !current.isEmpty());
    }

    /** @return the bytes queued; any thread. */
    long queuedBytes()
    {
        // taken first: it never passes what was offered before it, so the difference is never below zero
        final long taken = takenBytes.get();
        return offeredBytes.get() - taken;
    }

    /**
     * Application threads: takes one message if one is queued.
     *
     * @param dst  receives the payload, truncated to its room.
     * @param info if not null, given the message's sender, full length and truncation when one is taken.
     * @return the sender, or null if nothing was queued.
     */
    InetSocketAddress takeInto(final ByteBuffer dst, final RdsReceiveInfo info)
    {
        final int room = dst.remaining();
        lock.lock();
        try
        {
            deliverNotifications();
            final Message waiting = spilled.relaxedPeek();
            // read after the look outside: a ring the writer made before spilling that message is seen
            final ReceiveRing current = ring;
            if (current != null && (waiting == null || !current.isEmpty()))
            {
                final InetSocketAddress sender = current.takeInto(dst);
                if (sender != null)
                {
                    final int length = current.lastLength();
                    taken(length);
                    if (info != null)
                    {
                        info.set(sender, length, length > room);
                    }
                    return sender;
                }
            }
            if (waiting == null)
            {
                return null;
            }
            final Message message = spilled.relaxedPoll();
            final int length = message.payloadLength;
            message.buffer.getBytes(RdsHeader.LENGTH, dst, Math.min(length, room));
            final InetSocketAddress sender = message.sender;
            taken(message);
            if (info != null)
            {
                info.set(sender, length, length > room);
            }
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
            deliverNotifications();
            int delivered = 0;
            while (delivered < limit)
            {
                // as in takeInto: the first message waiting outside, then the ring, whose records are all older
                final Message waiting = spilled.relaxedPeek();
                final ReceiveRing current = ring;
                if (current != null && (waiting == null || !current.isEmpty()))
                {
                    final int read = current.poll(handler, limit - delivered, takenFromRing);
                    delivered += read;
                    if (read > 0)
                    {
                        continue;
                    }
                }
                if (waiting == null)
                {
                    break;
                }
                spilled.relaxedPoll();
                delivered++;
                try
                {
                    handler.onMessage(waiting.sender, waiting.payload());
                }
                finally
                {
                    taken(waiting);
                }
            }
            return delivered;
        }
        finally
        {
            lock.unlock();
        }
    }

    private void deliverNotifications()
    {
        if (notifications.isEmpty())
        {
            return;
        }
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
        taken(message.payloadLength);
        pool.release(message);
    }

    /** Under the lock. */
    private void taken(final int length)
    {
        leave(length);
        if (onTaken != null)
        {
            onTaken.accept(length);
        }
    }

    /** Under the lock: bytes leave the receive buffer; the agent is woken if that may release a congested port. */
    private void leave(final long length)
    {
        final long taken = takenBytes.getPlain() + length;
        takenBytes.setRelease(taken);
        if (Congestion.mayRelease(socket, offeredBytes.get() - taken))
        {
            wakeAgent.run();
        }
    }

    /**
     * A driver's session, as its client reports the bytes its application took: they leave the receive buffer.
     *
     * @param length the bytes.
     */
    void release(final long length)
    {
        lock.lock();
        try
        {
            leave(length);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * A driver's session, from the handler of its {@link #poll}: bytes it handed to its client stay counted in the
     * receive buffer until the client reports them taken ({@link #release}), so that the port is marked congested
     * by what the client holds, as by what an embedded socket holds.
     *
     * @param length the bytes.
     */
    void hold(final int length)
    {
        lock.lock(); // held already by poll: taken again (a plain count) to keep the one-writer rule plain to see
        try
        {
            takenBytes.setRelease(takenBytes.getPlain() - length);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Agent: queues a received payload, in the ring if it fits and nothing waits outside it, else in a pooled
     * message; receivers are woken at the end of the duty cycle.
     *
     * @return the bytes now queued.
     */
    long offer(
        final InetSocketAddress sender, final DirectBuffer buffer, final int offset, final int length,
        final StackCounters counters)
    {
        // counted before it can be taken, so that the count never goes below what is queued
        final long offered = offeredBytes.getPlain() + length;
        offeredBytes.setRelease(offered);
        if (!spilled.isEmpty() || !ring().write(sender, buffer, offset, length))
        {
            final Message message = pool.acquire(length);
            message.buffer.putBytes(RdsHeader.LENGTH, buffer, offset, length);
            message.sender = sender;
            spilled.offer(message);
            counters.recvRingSpill.incrementOrdered();
        }
        return offered - takenBytes.get();
    }

    /**
     * Agent: opens a run in the ring for frames of {@code sender}, this frame its first (docs/receive-runs.md), if
     * nothing waits outside the ring and it has room for a run. Its payloads are queued, counted and seen by readers
     * at {@link #closeRun}; until then nothing else may be offered, and the frames appended must stay where they are.
     *
     * @param frame  the frame's header; its payload follows it.
     * @param length the frame's bytes, its header included.
     * @return false if not: offer the payload instead.
     */
    boolean openRun(final InetSocketAddress sender, final DirectBuffer buffer, final int frame, final int length)
    {
        return spilled.isEmpty() && ring().openRun(sender, buffer, frame, length);
    }

    /**
     * Agent: appends a frame of the open run's sender to it, if it has room.
     *
     * @return false if the run is full: close it, and open another or offer the payload.
     */
    boolean appendToRun(final DirectBuffer buffer, final int frame, final int length)
    {
        return ring.appendToRun(buffer, frame, length);
    }

    /**
     * Agent: queues the open run's payloads, as {@link #offer} would have queued each in turn.
     *
     * @param frames how many the run holds.
     * @return the bytes now queued.
     */
    long closeRun(final int frames)
    {
        // counted before they can be taken, as in offer
        final long offered = offeredBytes.getPlain() + ring.runLength() - (long)frames * RdsHeader.LENGTH;
        offeredBytes.setRelease(offered);
        ring.closeRun();
        return offered - takenBytes.get();
    }

    /**
     * Agent: whether nothing waits to be taken (messages in the ring or outside it, events), so that the next message
     * may go past the queue without passing any of them.
     */
    boolean isDrained()
    {
        final ReceiveRing current = ring;
        return spilled.isEmpty() && (current == null || current.isEmpty()) && notifications.isEmpty();
    }

    /**
     * Agent: a message a driver's session handed to its client past the queue
     * ({@link DriverSession.Entry#openPastRun}): counted as offered and held at once, as {@link #offer} and then
     * {@link #hold} would.
     *
     * @return the bytes now queued.
     */
    long offerHeld(final int length)
    {
        final long offered = offeredBytes.getPlain() + length;
        offeredBytes.setRelease(offered);
        return offered - takenBytes.get();
    }

    private ReceiveRing ring()
    {
        ReceiveRing current = ring;
        if (current == null)
        {
            current = new ReceiveRing(ringDirectory, ringBytes);
            ring = current;
        }
        return current;
    }

    /**
     * Agent, when the socket is closed: frees the ring and recycles what the application did not receive.
     * Never waits for an application thread: if one is still inside receive or poll, the ring's memory and the
     * messages are left to the garbage collector instead (the ring is never unmapped under a reader).
     */
    void releaseAll()
    {
        if (!lock.tryLock())
        {
            return;
        }
        try
        {
            final ReceiveRing current = ring;
            if (current != null)
            {
                ring = null;
                current.free();
            }
            Message message;
            while ((message = spilled.relaxedPoll()) != null)
            {
                pool.release(message);
            }
            takenBytes.setRelease(offeredBytes.get());
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
