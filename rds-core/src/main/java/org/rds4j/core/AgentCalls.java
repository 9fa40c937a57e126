package org.rds4j.core;

import org.agrona.concurrent.status.AtomicCounter;
import org.rds4j.RdsResult;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * How application threads wait for the stack: a function run on the agent with its result awaited
 * ({@link #call}), and the waits of blocking socket calls ({@link #await}). In both threading modes a thread
 * that waits drives the stack through the {@link Invoker}: it runs duty cycles itself, or parks briefly while
 * another thread runs them; in AGENT mode the agent thread steps aside meanwhile.
 * <p>
 * Timeouts here are the application's, on {@link System#nanoTime()}: a blocking call's timeout is measured on
 * the caller's clock, not on the stack's {@link StackOptions#nanoClock()}, which a test may hold still.
 */
final class AgentCalls implements WatchableSocket.Waiting
{
    /**
     * The largest payload a streaming blocking sender appends or transmits itself; larger ones it leaves to the
     * agent, whose write of the messages before runs in parallel with the sender's copy. 1 KiB messages were left to
     * the agent until 2026-12-02: on the AMD machines appending them cost 9 % of a pair's rate, on the Intel ones
     * leaving them cost a third (benchmarks.md, "1 KiB messages appended on an Intel machine").
     */
    static final int SENDER_STREAM_MAX_PAYLOAD = 1024;
    /**
     * Bytes of a socket's send ring unread by the stack (records, each a frame rounded up to
     * {@link SendRing#ALIGN}) from which a blocking sender of smaller messages runs a
     * duty cycle itself: the agent is that far behind the stream, and at these sizes what a message costs is its
     * hand-off between threads. With 16 KiB the sender ran too many short cycles, with 64 KiB too few.
     */
    static final int SENDER_STREAM_BYTES = 32 * 1024;
    /**
     * Bytes of frames a sender appends to its connection's transport before it sends them itself (TCP: one
     * {@code sendfile}), with a send buffer of 480 KiB or more ({@link #appendBatchBytes}). At 32 KiB on an AMD
     * machine a 1 KiB stream paid a system call and the loopback's receive processing every 30 messages: 120 KiB
     * carried 1 KiB +31 % and 64 B +15 % in pairs (benchmarks.md, "Appended batches of 120 KiB"). Under TCP's
     * 128 KiB stage, so a batch is one claim of its send ring.
     */
    static final int APPEND_BATCH_BYTES = 120 * 1024;

    /**
     * The batch a sender appends before it sends it, for a socket's {@code SO_SNDBUF}: {@link #APPEND_BATCH_BYTES},
     * and at most a quarter of the buffer. A batch near the whole buffer is sent only once the buffer is full, and
     * the sender then waits for acks of all of it: with 64 KiB, 120 KiB batches cut 64 B to 1.43M msgs/s from
     * 4.83M, 1 KiB with 128 KiB to 0.25M from 1.17M; a quarter kept 4.02M and 1.06M.
     */
    static int appendBatchBytes(final int sendBufferBytes)
    {
        return Math.min(APPEND_BATCH_BYTES, sendBufferBytes / 4);
    }

    /**
     * Tries for the duty cycle's lock between looks at the clock: with one try and no wait, more than half of a 64 B
     * stream's messages went the usual way, each try failing while the agent took an ack (benchmarks.md, 2026-12-02).
     */
    private static final int HOLD_TRIES = 32;
    /** How long a sender waits for the lock before its message goes the usual way: an idle agent's wake-up and more. */
    private static final long HOLD_WAIT_NS = TimeUnit.MICROSECONDS.toNanos(100);

    private final CoreStack stack;
    private final Invoker invoker;
    private final AtomicCounter callerCycles;

    @Override
    public String name()
    {
        return stack.config().name();
    }

    /** Wakes the thread leading the duty cycle, which may idle in the transport's wait where an unpark does not reach it. */
    @Override
    public void wakeWaiting()
    {
        stack.wakeAgent();
    }

    AgentCalls(final CoreStack stack, final Invoker invoker, final AtomicCounter callerCycles)
    {
        this.stack = stack;
        this.invoker = invoker;
        this.callerCycles = callerCycles;
    }

    /**
     * A blocking send has queued its message: runs one duty cycle on the calling thread if no other thread is
     * running one, so that the message goes out now without waking another thread. In AGENT mode only
     * <ul>
     * <li>if it is the only message in its socket's send buffer (nothing of the socket's queued or unacked: a
     * request, a reply), or</li>
     * <li>if messages of up to {@link #SENDER_STREAM_MAX_PAYLOAD} bytes have piled up in the socket's send ring,
     * unread by the stack, to {@link #SENDER_STREAM_BYTES}: the sender then transmits its own stream in batches,
     * as the kernel's {@code rds_sendmsg} does in its caller, and the agent, finding the duty cycle taken,
     * sleeps.</li>
     * </ul>
     * Otherwise the socket is streaming and its messages are left to the agent, which writes them in batches, as
     * TCP's Nagle algorithm holds back small segments while earlier ones are unacknowledged. In INVOKER mode there
     * is no agent to leave them to. When no cycle ran, the thread that drives the stack is woken.
     *
     * @param socket the sending socket: a message a busy sender's cycle left unread needs the agent.
     * @param alone  the message is the only one in the socket's send buffer.
     * @param length the message's payload bytes.
     */
    void afterBlockingSend(final RdsSocketImpl socket, final boolean alone, final int length)
    {
        final boolean runs = alone || !invoker.hasAgentThread() ||
            (length <= SENDER_STREAM_MAX_PAYLOAD && socket.unreadSendBytes() >= SENDER_STREAM_BYTES);
        final boolean ran = runs && invoker.tryInvoke();
        if (ran)
        {
            callerCycles.increment(); // several sending threads may count, one cycle after another
        }
        if (!ran || socket.hasUnreadSends())
        {
            stack.wakeAgent();
        }
    }

    /**
     * A sending thread takes the duty cycle's lock to write its message into the stack itself: in AGENT mode only
     * (in INVOKER mode the application's thread drives the stack in batches of its own), tried a few times, since
     * whoever holds it holds it for a cycle of a few microseconds or for one message.
     *
     * @return whether the lock was taken; {@link #unhold} gives it back.
     */
    boolean tryHold()
    {
        if (!invoker.hasAgentThread())
        {
            return false;
        }
        if (invoker.tryHold())
        {
            return true;
        }
        // the agent runs a cycle, or idles leading: it steps aside, which takes it a wake-up at most
        invoker.holdWanted(true);
        final long deadlineNs = System.nanoTime() + HOLD_WAIT_NS;
        do
        {
            for (int i = 0; i < HOLD_TRIES; i++)
            {
                if (invoker.tryHold())
                {
                    return true;
                }
                Thread.onSpinWait();
            }
        }
        while (System.nanoTime() < deadlineNs);
        invoker.holdWanted(false);
        return false;
    }

    /** Under the lock {@link #tryHold} took: runs a duty cycle (acks that came, the socket's earlier messages). */
    void cycleHeld()
    {
        callerCycles.increment();
        invoker.cycleHeld();
    }

    /**
     * Gives back the lock {@link #tryHold} took.
     *
     * @param wakeFollower whether a thread waiting to lead is woken ({@link FollowerWakes}).
     */
    void unhold(final boolean wakeFollower)
    {
        invoker.unhold(wakeFollower);
    }

    @Override
    public void foundNothing()
    {
        invoker.foundNothing();
    }

    /** @return whether the stack has shut down (after closing its sockets): no duty cycle will run again. */
    @Override
    public boolean isStackClosed()
    {
        return invoker.isClosed();
    }

    /** A blocking call is about to wait: see {@link Invoker#beginCall()}. */
    @Override
    public void beginWait()
    {
        invoker.beginCall();
    }

    /** A blocking call's wait has ended: see {@link Invoker#endCall()}. */
    @Override
    public void endWait()
    {
        invoker.endCall();
    }

    /**
     * One step of a blocking call's wait, between {@link #beginWait()} and {@link #endWait()}: runs a duty cycle
     * (idling after it if it found nothing), or parks briefly while another thread runs one (see
     * {@link Invoker#await}).
     *
     * @param timeoutNs  the call's timeout, 0 for none.
     * @param deadlineNs when it expires (with a timeout), on {@link System#nanoTime()}.
     * @return 0 to check again, {@link RdsResult#ETIMEDOUT} or {@link RdsResult#EINTR}.
     */
    @Override
    public int await(final long timeoutNs, final long deadlineNs)
    {
        return invoker.await(timeoutNs, deadlineNs);
    }

    /**
     * A blocking send waits for room in its socket's send buffer. In AGENT mode it parks until the agent frees
     * room (acks, a cancel) and wakes it: a socket whose buffer is full is streaming, and the agent is busy
     * sending its messages, so taking the duty cycle from it would only move that work to this thread and back.
     * In INVOKER mode it drives the stack as any waiting call does, between {@link #beginWait()} and
     * {@link #endWait()}.
     *
     * @param timeoutNs  the call's timeout, 0 for none.
     * @param deadlineNs when it expires (with a timeout), on {@link System#nanoTime()}.
     * @return 0 to check again, {@link RdsResult#ETIMEDOUT} or {@link RdsResult#EINTR}.
     */
    @Override
    public int awaitRoom(final long timeoutNs, final long deadlineNs)
    {
        if (!invoker.hasAgentThread())
        {
            return invoker.await(timeoutNs, deadlineNs);
        }
        if (Thread.currentThread().isInterrupted())
        {
            return RdsResult.EINTR;
        }
        if (timeoutNs == 0)
        {
            LockSupport.park(this);
            return 0;
        }
        final long remainingNs = deadlineNs - System.nanoTime();
        if (remainingNs <= 0)
        {
            return RdsResult.ETIMEDOUT;
        }
        LockSupport.parkNanos(this, remainingNs);
        return 0;
    }

    /** Before a blocking send waits for room: see {@link #awaitRoom}. */
    @Override
    public void beginRoomWait()
    {
        if (!invoker.hasAgentThread())
        {
            invoker.beginCall();
        }
    }

    /** After a blocking send waited for room: see {@link #awaitRoom}. */
    @Override
    public void endRoomWait()
    {
        if (!invoker.hasAgentThread())
        {
            invoker.endCall();
        }
    }

    /**
     * Runs a function on the agent and waits for its result, driving the stack meanwhile as a blocking call
     * does (or parking briefly while another thread drives it), so the call needs nobody else to run it.
     */
    <T> T call(final Function<StackAgent, T> function)
    {
        final CompletableFuture<T> result = new CompletableFuture<>();
        final Thread caller = Thread.currentThread();
        stack.send(stackAgent ->
        {
            try
            {
                result.complete(function.apply(stackAgent));
            }
            catch (final RuntimeException ex)
            {
                result.completeExceptionally(ex);
            }
            // a caller parked as a follower while another thread ran this: end its park now
            LockSupport.unpark(caller);
        });
        return awaitInvoked(result);
    }

    private <T> T awaitInvoked(final CompletableFuture<T> result)
    {
        invoker.beginCall();
        try
        {
            while (!result.isDone())
            {
                if (invoker.isClosed())
                {
                    // the agent's close runs every queued command: this one was queued after it
                    if (result.isDone())
                    {
                        break;
                    }
                    throw new IllegalStateException("stack " + stack.config().name() + " is closed");
                }
                if (invoker.await(0, 0) == RdsResult.EINTR)
                {
                    throw new IllegalStateException("interrupted while waiting for the stack's agent");
                }
            }
        }
        finally
        {
            invoker.endCall();
        }
        try
        {
            return result.get();
        }
        catch (final InterruptedException ex)
        {
            // not reached: the result is complete, so get does not wait
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the stack's agent", ex);
        }
        catch (final ExecutionException ex)
        {
            throw (RuntimeException)ex.getCause();
        }
    }
}
