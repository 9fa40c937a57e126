package org.rds4j.samples.stress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;

/**
 * One sender thread of {@code rds stress}: sends requests to one peer until the run's end, at most
 * {@code depth} of them unanswered (unless one-way), then a DONE carrying how many it sent.
 * <p>
 * Without {@code --rate} it sends as fast as the window and the socket allow, and a request's timestamp is
 * the moment it is sent (one-way, where no round trip is timed, the clock is read once every
 * {@link #ONE_WAY_CLOCK_REQUESTS} requests, and a request carries the last reading). With {@code --rate} request
 * {@code k} is scheduled at {@code start + k * interval} (tasks are staggered by a fraction of the interval) and
 * carries its <em>scheduled</em> time, so a request held up by a full window or a slow send shows the delay in its
 * round trip (no coordinated omission).
 * <p>
 * The loop allocates nothing: one direct buffer per task, restamped for every request. A task waiting for
 * the window spins briefly and then parks; the receive thread unparks it when a reply comes. A node's only
 * task, sending request/reply without {@code --rate}, reads the node's messages itself instead
 * ({@link #readWith}).
 */
public final class SenderTask implements Runnable
{
    private static final int SPINS = 64;
    private static final long PARK_NANOS = 1_000_000L;
    /** Without --rate, one-way: the requests per read of the clock (a power of two); a run ends at most this late. */
    static final int ONE_WAY_CLOCK_REQUESTS = 64;
    /** With --rate: park until this close to the scheduled time, then spin, to beat the timer slack. */
    private static final long SPIN_BEFORE_NANOS = 60_000L;

    private final int id;
    private final InetSocketAddress peer;
    private final RdsSocket socket;
    private final StressSettings settings;
    private final int peersTasks;
    private final long intervalNanos;
    private final long offsetNanos;
    private final ByteBuffer request;
    private final ByteBuffer done;

    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong attempted = new AtomicLong(-1);
    private final AtomicLong replies = new AtomicLong();
    private final AtomicLong sendErrors = new AtomicLong();
    private final SequenceTracker replyTracker = new SequenceTracker();
    private volatile boolean parked;
    private volatile boolean finished;
    private volatile boolean doneAcked;
    private volatile long peerReceived = -1;
    private volatile long stopNanos;
    private volatile String failure;
    private Thread thread;
    /** The node's receive side, when this task reads its replies itself (see {@link Receiver#readOn}). */
    private Receiver reader;
    private volatile long giveUpNanos;
    private long startNanos;
    private long endNanos;

    /**
     * @param id       the task's number on this node, 0..65535: its requests carry it.
     * @param slot     the task's index among all tasks of the node (staggers scheduled sends).
     * @param peer     where it sends.
     * @param socket   the node's socket, shared by its tasks and its receive thread.
     * @param settings the run.
     */
    public SenderTask(final int id, final int slot, final InetSocketAddress peer, final RdsSocket socket, final StressSettings settings)
    {
        this.id = id;
        this.peer = peer;
        this.socket = socket;
        this.settings = settings;
        this.peersTasks = settings.tasksPerPeer();
        final int tasks = settings.totalTasks();
        this.intervalNanos = settings.rate() > 0 ? Math.max(1L, Math.round(1e9 * tasks / settings.rate())) : 0;
        this.offsetNanos = intervalNanos * slot / Math.max(1, tasks);
        this.request = ByteBuffer.allocateDirect(settings.size());
        final int flags = (settings.oneWay() ? StressMessage.FLAG_ONE_WAY : 0) | (settings.verify() ? StressMessage.FLAG_PATTERN : 0);
        StressMessage.writeHeader(request, StressMessage.REQUEST, flags, id, settings.size(), settings.ackSize(), 0, 0);
        this.done = ByteBuffer.allocateDirect(StressMessage.HEADER_BYTES);
    }

    /**
     * Starts the task on its own thread.
     *
     * @param start     when the run started ({@link System#nanoTime()}).
     * @param end       when to stop sending requests.
     * @param giveUp    when to stop trying to send DONE (a peer that takes no messages); moved on by
     *                  {@link #giveUpAt(long)}.
     * @param name      the thread's name.
     */
    public void start(final long start, final long end, final long giveUp, final String name)
    {
        this.startNanos = start;
        this.endNanos = end;
        this.giveUpNanos = giveUp;
        thread = new Thread(this, name);
        thread.setDaemon(true);
        if (reader != null)
        {
            reader.readOn(thread);
        }
        thread.start();
    }

    /**
     * Before {@link #start}: this task is the node's reader. It takes the node's messages while it waits for
     * its window, and once it has sent DONE it runs the receive loop until the node stops it.
     *
     * @param receiver the node's receive side.
     */
    public void readWith(final Receiver receiver)
    {
        this.reader = receiver;
    }

    @Override
    public void run()
    {
        try
        {
            final long count = sendRequests();
            stopNanos = System.nanoTime();
            StressMessage.writeHeader(done, StressMessage.DONE, 0, id, StressMessage.HEADER_BYTES, peersTasks, count, 0);
            final int result = sendDone();
            if (result < 0)
            {
                sendErrors.incrementAndGet();
                failure = "DONE to " + peer + " not sent: " + RdsResult.name(result);
            }
        }
        catch (final IOException | RuntimeException e)
        {
            if (stopNanos == 0)
            {
                stopNanos = System.nanoTime();
            }
            if (socket.isOpen())
            {
                sendErrors.incrementAndGet();
                failure = e.toString();
            }
        }
        finally
        {
            finished = true;
        }
        if (reader != null)
        {
            reader.run();
        }
    }

    private long sendRequests() throws IOException
    {
        final boolean window = !settings.oneWay();
        final boolean pattern = settings.verify();
        final long depth = settings.depth();
        long sequence = 0;
        long clock = 0;
        while (true)
        {
            long stamp;
            if (intervalNanos > 0)
            {
                stamp = startNanos + offsetNanos + sequence * intervalNanos;
                if (stamp - endNanos >= 0)
                {
                    break;
                }
                waitUntil(stamp);
                if (window && !awaitWindow(sequence, depth))
                {
                    break;
                }
            }
            else
            {
                // one-way requests time no round trip: the clock is read for the run's end once every
                // ONE_WAY_CLOCK_REQUESTS (a read per request was about 15 % of a 64 B sender's time)
                if (window || (sequence & (ONE_WAY_CLOCK_REQUESTS - 1)) == 0)
                {
                    clock = System.nanoTime();
                }
                stamp = clock;
                if (stamp - endNanos >= 0)
                {
                    break;
                }
                if (window && sequence - replies.get() >= depth)
                {
                    if (!awaitWindow(sequence, depth))
                    {
                        break;
                    }
                    stamp = System.nanoTime(); // the round trip starts when the request goes, not when it waited
                }
            }
            request.clear(); // the last send left the position at the limit
            StressMessage.restamp(request, sequence, stamp);
            if (pattern)
            {
                StressMessage.fill(request, id, sequence);
            }
            attempted.lazySet(sequence); // before the send: its reply may come back before send returns
            final int result = send(request, endNanos);
            if (result < 0)
            {
                if (retryable(result))
                {
                    break; // still blocked at the end: this request was not sent
                }
                sendErrors.incrementAndGet();
                failure = "request " + sequence + " to " + peer + ": " + RdsResult.name(result);
                break;
            }
            sequence++;
            sent.lazySet(sequence);
        }
        attempted.set(sequence - 1);
        return sequence;
    }

    /** Sends DONE, retried after SO_SNDTIMEO until the give-up moment, which may move on meanwhile. */
    private int sendDone() throws IOException
    {
        int result;
        do
        {
            result = send(done, giveUpNanos);
        }
        while (retryable(result) && System.nanoTime() - giveUpNanos < 0);
        return result;
    }

    /** Blocking send, retried after SO_SNDTIMEO until {@code deadline}; returns the last result. */
    private int send(final ByteBuffer message, final long deadline) throws IOException
    {
        while (true)
        {
            message.clear();
            final int result = socket.send(message, peer);
            if (!retryable(result) || System.nanoTime() - deadline >= 0)
            {
                return result;
            }
            if (reader != null)
            {
                reader.takeQueued();
            }
        }
    }

    /** @return whether a send failed only for want of room or of an uncongested destination, so may be tried again. */
    private static boolean retryable(final int result)
    {
        return result == RdsResult.ETIMEDOUT || result == RdsResult.EAGAIN || result == RdsResult.ENOBUFS;
    }

    private boolean awaitWindow(final long sequence, final long depth) throws IOException
    {
        if (reader != null)
        {
            while (sequence - replies.get() >= depth)
            {
                if (System.nanoTime() - endNanos >= 0)
                {
                    return false;
                }
                reader.step();
            }
            return true;
        }
        int spins = 0;
        while (sequence - replies.get() >= depth)
        {
            if (spins < SPINS)
            {
                spins++;
                Thread.onSpinWait();
                continue;
            }
            final long left = endNanos - System.nanoTime();
            if (left <= 0)
            {
                return false;
            }
            parked = true;
            if (sequence - replies.get() >= depth)
            {
                LockSupport.parkNanos(this, Math.min(left, PARK_NANOS));
            }
            parked = false;
        }
        return true;
    }

    private static void waitUntil(final long when)
    {
        long left;
        while ((left = when - System.nanoTime()) > 0)
        {
            if (left > 2 * SPIN_BEFORE_NANOS)
            {
                LockSupport.parkNanos(left - SPIN_BEFORE_NANOS);
            }
            else
            {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Moves the moment the task stops trying to send DONE: the run's grace period starts later while the
     * send queue is still draining.
     *
     * @param giveUp the new moment ({@link System#nanoTime()}).
     */
    public void giveUpAt(final long giveUp)
    {
        giveUpNanos = giveUp;
    }

    // ------------------------------------------------------------ called by the receive thread

    /** @return the tracker of this task's replies; only the receive thread uses it. */
    SequenceTracker replyTracker()
    {
        return replyTracker;
    }

    /** Receive thread: a new reply came; frees one place of the window. */
    void onReply()
    {
        replies.set(replyTracker.distinct());
        if (parked)
        {
            LockSupport.unpark(thread);
        }
    }

    /**
     * Receive thread: the peer answered DONE.
     *
     * @param received how many of this task's requests the peer got.
     */
    void onDoneAck(final long received)
    {
        peerReceived = received;
        doneAcked = true;
    }

    /** @return the highest sequence number handed to send so far, -1 before the first. */
    long attempted()
    {
        return attempted.get();
    }

    // ------------------------------------------------------------ read by the reporting thread

    /** @return the task's number. */
    public int id()
    {
        return id;
    }

    /** @return where it sends. */
    public InetSocketAddress peer()
    {
        return peer;
    }

    /** @return requests sent. */
    public long sent()
    {
        return sent.get();
    }

    /** @return different requests answered. */
    public long replies()
    {
        return replies.get();
    }

    /** @return sends that failed with an error other than a timeout at the end. */
    public long sendErrors()
    {
        return sendErrors.get();
    }

    /** @return whether the thread has ended (requests and DONE sent or given up). */
    public boolean finished()
    {
        return finished;
    }

    /** @return whether the peer answered DONE. */
    public boolean doneAcked()
    {
        return doneAcked;
    }

    /** @return how many requests the peer said it got (DONE_ACK), -1 before. */
    public long peerReceived()
    {
        return peerReceived;
    }

    /** @return when the task stopped sending requests ({@link System#nanoTime()}), 0 while sending. */
    public long stopNanos()
    {
        return stopNanos;
    }

    /** @return why a send failed, or {@code null}. */
    public String failure()
    {
        return failure;
    }

    /**
     * Waits for the thread to end.
     *
     * @param millis at most this long.
     * @throws InterruptedException if interrupted.
     */
    public void join(final long millis) throws InterruptedException
    {
        if (thread != null)
        {
            thread.join(Math.max(1, millis));
        }
    }

    /** Interrupts the thread (a blocked send returns EINTR). */
    public void interrupt()
    {
        if (thread != null)
        {
            thread.interrupt();
        }
    }
}
