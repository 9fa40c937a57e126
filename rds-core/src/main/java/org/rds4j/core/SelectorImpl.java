package org.rds4j.core;

import org.jctools.queues.MpscUnboundedArrayQueue;
import org.rds4j.RdsSelectionKey;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;

import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The stack's {@link RdsSelector}. Each key is its socket's {@link SocketWatcher}: the duty cycle signals it when
 * it wakes the socket's blocked receivers or senders, and the key queues itself (once until the next select
 * takes it) and unparks the selecting thread. A select looks only at the keys signalled since the last one and
 * at those it found ready then (readiness is level-triggered: they are looked at again until found not ready),
 * so its cost is the ready sockets', not the registered ones'.
 * <p>
 * A select that waits is a blocking call of the stack ({@link AgentCalls#await}): it leads the duty cycle, or
 * parks as a follower until a signal, a {@link #wakeup()} or the leader's end wakes it. A signal raised by the
 * selecting thread's own duty cycle is seen when that cycle returns; one from another thread unparks it. A
 * change made by an application thread (a registration, a close, a wake-up) also wakes the leader through the
 * stack's {@link WakeSignal}, in case the selecting thread idles as leader in the transport's wait.
 */
final class SelectorImpl implements RdsSelector
{
    private static final int VALID_OPS = OP_READ | OP_WRITE | OP_ERROR;

    private final WatchableSocket.Waiting stack;
    private final ConcurrentHashMap<WatchableSocket, Key> keys = new ConcurrentHashMap<>();
    /** Keys signalled since the last select took them: any thread offers, the selecting thread takes. */
    private final MpscUnboundedArrayQueue<Key> signalled = new MpscUnboundedArrayQueue<>(1024);
    /** Selects one at a time; never held while registering, signalling or waking. */
    private final ReentrantLock selectLock = new ReentrantLock();
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    /** Set once a signal has unparked the selecting thread, until it looks again: one unpark per look. */
    private final AtomicBoolean unparked = new AtomicBoolean();
    private volatile Thread selecting;
    private volatile boolean open = true;

    // The selecting thread (under selectLock).
    private final Set<RdsSelectionKey> selectedKeys = new HashSet<>();
    /** Keys to look at in this select: those found ready by the last one, then those signalled since. */
    private ArrayList<Key> toCheck = new ArrayList<>();
    private ArrayList<Key> stillReady = new ArrayList<>();

    SelectorImpl(final WatchableSocket.Waiting stack)
    {
        this.stack = stack;
    }

    @Override
    public RdsSelectionKey register(final RdsSocket socket, final int ops, final Object attachment) throws IOException
    {
        Objects.requireNonNull(socket, "socket");
        checkOps(ops);
        ensureOpen();
        if (!(socket instanceof WatchableSocket impl) || impl.waiting() != stack)
        {
            throw new IllegalArgumentException(socket + " is not a socket of stack " + stack.name() +
                ": a selector serves the sockets of the stack that opened it");
        }
        final Key fresh = new Key(impl, ops, attachment);
        final SocketWatcher current = impl.watch(fresh);
        if (current == null)
        {
            throw new ClosedChannelException();
        }
        final Key key;
        if (current == fresh)
        {
            key = fresh;
            keys.put(impl, key);
            if (!open)
            {
                // closed meanwhile: close cancels only the keys it saw
                key.cancel();
                throw new ClosedSelectorException();
            }
        }
        else if (current instanceof Key existing && existing.selector() == this)
        {
            key = existing;
            key.interest = ops;
            key.attachment = attachment;
        }
        else
        {
            throw new IllegalStateException(socket + (current instanceof Key ? " is registered with another selector" :
                " delivers its messages to a handler (startDelivery)"));
        }
        key.signal();
        wakeSelecting();
        return key;
    }

    private static void checkOps(final int ops)
    {
        if ((ops & ~VALID_OPS) != 0)
        {
            throw new IllegalArgumentException("not OP_READ, OP_WRITE or OP_ERROR: " + ops);
        }
    }

    @Override
    public int select(final long timeoutMillis)
    {
        if (timeoutMillis < 0)
        {
            throw new IllegalArgumentException("negative timeout: " + timeoutMillis);
        }
        final long timeoutNs = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        // a deadline past the clock's range would wrap around and read as expired: as good as none
        return select(timeoutNs > Long.MAX_VALUE / 4 ? 0 : timeoutNs, true);
    }

    @Override
    public int select()
    {
        return select(0, true);
    }

    @Override
    public int selectNow()
    {
        return select(0, false);
    }

    /**
     * @param timeoutNs how long to wait, 0 for no limit.
     * @param wait      false: look once and return.
     */
    private int select(final long timeoutNs, final boolean wait)
    {
        ensureOpen();
        selectLock.lock();
        try
        {
            ensureOpen();
            if (!wait)
            {
                wakeupPending.set(false);
                final int found = collect();
                if (found == 0)
                {
                    stack.foundNothing();
                }
                return found;
            }
            return selectWaiting(timeoutNs);
        }
        finally
        {
            selectLock.unlock();
        }
    }

    private int selectWaiting(final long timeoutNs)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        final WatchableSocket.Waiting calls = stack;
        selecting = Thread.currentThread();
        calls.beginWait();
        try
        {
            while (true)
            {
                // cleared before looking: a signal after the look unparks this thread again
                unparked.set(false);
                // read before looking: a stack shut down then had closed its sockets, which this look reports
                final boolean stackClosed = calls.isStackClosed();
                final int found = collect();
                if (found > 0 || wakeupPending.getAndSet(false) || !open || stackClosed ||
                    calls.await(timeoutNs, deadlineNs) < 0)
                {
                    return found;
                }
            }
        }
        finally
        {
            selecting = null;
            calls.endWait();
            wakeupPending.set(false);
        }
    }

    /** Selecting thread: looks at the keys found ready last time and those signalled since. */
    private int collect()
    {
        Key key;
        while ((key = signalled.relaxedPoll()) != null)
        {
            // cleared before the key is looked at: a signal after the look queues it again
            key.queued.set(false);
            if (!key.checking)
            {
                key.checking = true;
                toCheck.add(key);
            }
        }
        int found = 0;
        for (int i = 0, n = toCheck.size(); i < n; i++)
        {
            key = toCheck.get(i);
            key.checking = false;
            if (!key.valid)
            {
                continue;
            }
            final int ops = key.socket.readyOps();
            if (ops == OP_ERROR)
            {
                key.readyOps = OP_ERROR;
                key.cancel();
                selectedKeys.add(key);
                found++;
                continue;
            }
            final int ready = ops & key.interest;
            if (ready != 0)
            {
                key.readyOps = ready;
                selectedKeys.add(key);
                found++;
                key.checking = true;
                stillReady.add(key);
            }
        }
        toCheck.clear();
        final ArrayList<Key> next = stillReady;
        stillReady = toCheck;
        toCheck = next;
        return found;
    }

    @Override
    public RdsSelector wakeup()
    {
        wakeupPending.set(true);
        wakeSelecting();
        return this;
    }

    /** An application thread changed something a select waits for: end its park, or its idle as leader. */
    private void wakeSelecting()
    {
        final Thread thread = selecting;
        if (thread != null)
        {
            LockSupport.unpark(thread);
            stack.wakeWaiting();
        }
    }

    /** The duty cycle (or a closing thread) signalled a key: unparks the selecting thread once per look. */
    private void onSignal()
    {
        final Thread thread = selecting;
        if (thread != null && !unparked.get() && unparked.compareAndSet(false, true))
        {
            LockSupport.unpark(thread);
        }
    }

    @Override
    public Set<RdsSelectionKey> selectedKeys()
    {
        ensureOpen();
        return selectedKeys;
    }

    @Override
    public Set<RdsSelectionKey> keys()
    {
        ensureOpen();
        return Set.copyOf(keys.values());
    }

    @Override
    public boolean isOpen()
    {
        return open;
    }

    @Override
    public void close()
    {
        if (!open)
        {
            return;
        }
        open = false;
        for (final Key key : keys.values())
        {
            key.cancel();
        }
        wakeSelecting();
    }

    private void ensureOpen()
    {
        if (!open)
        {
            throw new ClosedSelectorException();
        }
    }

    @Override
    public String toString()
    {
        return "RdsSelector[" + stack.name() + ", " + keys.size() + " keys" + (open ? "" : ", closed") + "]";
    }

    /** A socket's registration; the socket's watcher while valid. */
    private final class Key implements RdsSelectionKey, SocketWatcher
    {
        final WatchableSocket socket;
        /** Queued in {@link #signalled} and not yet taken by a select. */
        final AtomicBoolean queued = new AtomicBoolean();
        volatile int interest;
        volatile Object attachment;
        volatile int readyOps;
        volatile boolean valid = true;
        /** Selecting thread: in {@link #toCheck} or {@link #stillReady}. */
        boolean checking;

        Key(final WatchableSocket socket, final int interest, final Object attachment)
        {
            this.socket = socket;
            this.interest = interest;
            this.attachment = attachment;
        }

        @Override
        public void signal()
        {
            if (!queued.get() && queued.compareAndSet(false, true))
            {
                signalled.offer(this);
                onSignal();
            }
        }

        @Override
        public RdsSocket socket()
        {
            return socket;
        }

        @Override
        public RdsSelector selector()
        {
            return SelectorImpl.this;
        }

        @Override
        public int interestOps()
        {
            return interest;
        }

        @Override
        public RdsSelectionKey interestOps(final int ops)
        {
            checkOps(ops);
            if (!valid)
            {
                throw new CancelledKeyException();
            }
            interest = ops;
            signal();
            wakeSelecting();
            return this;
        }

        @Override
        public int readyOps()
        {
            return readyOps;
        }

        @Override
        public Object attachment()
        {
            return attachment;
        }

        @Override
        public Object attach(final Object newAttachment)
        {
            final Object previous = attachment;
            attachment = newAttachment;
            return previous;
        }

        @Override
        public void cancel()
        {
            if (valid)
            {
                valid = false;
                keys.remove(socket, this);
                socket.unwatch(this);
            }
        }

        @Override
        public boolean isValid()
        {
            return valid;
        }

        @Override
        public String toString()
        {
            return "RdsSelectionKey[" + socket + ", interest " + interest + ", ready " + readyOps + "]";
        }
    }
}
