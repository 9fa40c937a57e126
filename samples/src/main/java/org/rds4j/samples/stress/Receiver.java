package org.rds4j.samples.stress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import org.HdrHistogram.SingleWriterRecorder;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;

/**
 * The receive side of an {@code rds stress} node, the only reader of its socket: a thread of its own, or a node's
 * one sender task ({@link #readOn}). It
 * <ul>
 *   <li>checks every REQUEST: its sequence number in the stream of its (sender address, task), its length and,
 *       when the request carries {@link StressMessage#FLAG_PATTERN}, its payload; and answers it with a REPLY of
 *       the length the request asks for unless it is one-way;</li>
 *   <li>matches every REPLY to the local task that sent the request, checks it the same way and records the
 *       round trip (now minus the request's echoed timestamp) in an HdrHistogram recorder;</li>
 *   <li>on DONE from a sender's task notes how many requests the task sent (what did not arrive is lost) and
 *       answers DONE_ACK with how many did; on DONE_ACK tells the local task.</li>
 * </ul>
 * Messages are taken with {@link RdsSocket#poll} (no copy) while any are queued, and with a blocking
 * {@link RdsSocket#receive} bounded by the socket's SO_RCVTIMEO when none are, so an idle node parks. The loop
 * allocates nothing per message: streams are created on a sender's first message, and a queue of answers that
 * could not be sent at once grows only when it must.
 */
public final class Receiver implements Runnable, RdsMessageHandler
{
    /** Round trips above this (10 minutes) are recorded as this. */
    static final long MAX_RTT_NANOS = 600_000_000_000L;
    private static final int POLL_LIMIT = 256;

    private final RdsSocket socket;
    private final StressSettings settings;
    private final SenderTask[] tasks;
    private final Runnable onComplete;
    private final SingleWriterRecorder rtt = new SingleWriterRecorder(1, MAX_RTT_NANOS, 3);
    private final ReplyQueue pending = new ReplyQueue(1024);
    private final ByteBuffer receiveBuffer;
    private ByteBuffer replyBuffer = ByteBuffer.allocateDirect(4096);

    private SenderNode[] senders = new SenderNode[4];
    private int senderCount;
    private int sendersDone;
    private SenderNode lastSender;
    private int tasksDoneAcked;
    private boolean complete;

    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong requestBytes = new AtomicLong();
    private final AtomicLong replies = new AtomicLong();
    private final AtomicLong replyBytes = new AtomicLong();
    private final AtomicLong repliesSent = new AtomicLong();
    private final AtomicLong replyBytesSent = new AtomicLong();
    private final AtomicLong duplicated = new AtomicLong();
    private final AtomicLong reordered = new AtomicLong();
    private final AtomicLong verifyErrors = new AtomicLong();
    private final AtomicLong sendErrors = new AtomicLong();
    private final AtomicLong lastRequestNanos = new AtomicLong();
    private volatile long firstRequestNanos;
    /**
     * Reading thread: the clock at the first request of the current read, 0 until one comes. Read once per read, not
     * per request: at 64 B one-way a read of the clock per request was about 14 % of the receiving thread's time.
     */
    private long readNanos;
    private volatile long completeNanos;
    private volatile int pendingReplies;
    private volatile boolean running = true;
    private volatile String lastError;
    private Thread thread;

    /**
     * @param socket     the node's socket, bound; its SO_RCVTIMEO bounds how long one receive waits.
     * @param settings   the run.
     * @param tasks      the node's sender tasks, indexed by their id (empty for a passive node).
     * @param onComplete called once on this thread, at the moment the run is complete: every task's DONE was
     *                   acknowledged and every sender heard from said DONE for all its tasks (a passive node
     *                   needs at least one sender). May be {@code null}.
     */
    public Receiver(final RdsSocket socket, final StressSettings settings, final SenderTask[] tasks, final Runnable onComplete)
    {
        this.socket = socket;
        this.settings = settings;
        this.tasks = tasks.clone();
        this.onComplete = onComplete;
        this.receiveBuffer = ByteBuffer.allocateDirect(RdsSocket.MAX_MESSAGE_SIZE);
    }

    /**
     * Starts the receive thread.
     *
     * @param name its name.
     */
    public void start(final String name)
    {
        thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Makes a node's one sender task the reader instead of a receive thread of its own: the task calls
     * {@link #step()} while it waits for a reply and {@link #run()} once it has sent DONE. A request and its reply
     * then cost no hand-off between two threads of the tool (an unpark, a thread wake-up of tens of
     * microseconds), so the round trip measured is the stack's, as an application that sends and receives on
     * one thread sees it.
     *
     * @param task the thread that reads from now on; {@link #stop} interrupts it.
     */
    void readOn(final Thread task)
    {
        thread = task;
    }

    /**
     * Stops the receive thread and waits for it.
     *
     * @param millis how long to wait at most.
     * @throws InterruptedException if interrupted while waiting.
     */
    public void stop(final long millis) throws InterruptedException
    {
        running = false;
        if (thread != null)
        {
            thread.interrupt(); // a blocked receive returns at once
            thread.join(millis);
        }
    }

    @Override
    public void run()
    {
        try
        {
            while (running)
            {
                step();
            }
        }
        catch (final ClosedChannelException e)
        {
            // the socket closed: the end
        }
        catch (final IOException | RuntimeException e)
        {
            if (socket.isOpen())
            {
                lastError = e.toString();
                verifyErrors.incrementAndGet();
            }
        }
    }

    /**
     * Reading thread: sends the answers that waited, then handles what the socket holds, or waits for one
     * message up to the socket's SO_RCVTIMEO if it holds none.
     *
     * @throws IOException if the socket fails or closes.
     */
    void step() throws IOException
    {
        if (takeQueued() == 0 && running)
        {
            receiveBuffer.clear(); // readNanos is still 0: takeQueued's poll found nothing
            final InetSocketAddress from = socket.receive(receiveBuffer);
            if (from != null)
            {
                receiveBuffer.flip();
                onMessage(from, receiveBuffer);
            }
        }
    }

    /**
     * Reading thread: {@link #step()} without waiting, for a task whose send is blocked: a node that stopped
     * reading could hold up the peers that its send waits for.
     *
     * @return the messages handled.
     * @throws IOException if the socket fails or closes.
     */
    int takeQueued() throws IOException
    {
        if (!pending.isEmpty())
        {
            flushPending();
        }
        readNanos = 0;
        return socket.poll(this, POLL_LIMIT);
    }

    @Override
    public void onMessage(final InetSocketAddress sender, final ByteBuffer m)
    {
        if (!StressMessage.isStress(m) || StressMessage.length(m) != m.remaining())
        {
            if (error())
            {
                lastError = m.remaining() + " bytes from " + sender + " that are not a stress message of that length";
            }
            return;
        }
        final int task = StressMessage.task(m);
        final long sequence = StressMessage.sequence(m);
        switch (StressMessage.type(m))
        {
            case StressMessage.REQUEST -> onRequest(sender, m, task, sequence);
            case StressMessage.REPLY -> onReply(sender, m, task, sequence);
            case StressMessage.DONE -> onDone(sender, task, sequence, StressMessage.arg(m));
            case StressMessage.DONE_ACK -> onDoneAck(sender, task, sequence);
            default ->
            {
                if (error())
                {
                    lastError = "unknown message type " + StressMessage.type(m) + " from " + sender;
                }
            }
        }
    }

    private void onRequest(final InetSocketAddress from, final ByteBuffer m, final int task, final long sequence)
    {
        if (readNanos == 0)
        {
            readNanos = System.nanoTime();
        }
        final long now = readNanos;
        if (firstRequestNanos == 0)
        {
            firstRequestNanos = now;
        }
        lastRequestNanos.lazySet(now);
        final SenderNode node = sender(from);
        final SequenceTracker stream = node.stream(task);
        if (count(stream.record(sequence)))
        {
            requests.lazySet(requests.get() + 1);
        }
        if (node.doneCount(task) >= 0)
        {
            if (error())
            {
                lastError = "request " + sequence + " of task " + task + " from " + from + " after its DONE";
            }
        }
        requestBytes.lazySet(requestBytes.get() + m.remaining());
        final int flags = StressMessage.flags(m);
        if ((flags & StressMessage.FLAG_PATTERN) != 0 && !StressMessage.matches(m, task, sequence))
        {
            if (error())
            {
                lastError = "request " + sequence + " of task " + task + " from " + from + ": payload differs from the pattern";
            }
        }
        if ((flags & StressMessage.FLAG_ONE_WAY) == 0)
        {
            int length = StressMessage.arg(m);
            if (length < StressMessage.HEADER_BYTES || length > RdsSocket.MAX_MESSAGE_SIZE)
            {
                if (error())
                {
                    lastError = "request " + sequence + " of task " + task + " from " + from + " asks for a reply of " + length + " bytes";
                }
                length = StressMessage.HEADER_BYTES;
            }
            final int replyFlags = (flags & StressMessage.FLAG_PATTERN) | (settings.verify() ? StressMessage.FLAG_PATTERN : 0);
            answer(from, StressMessage.REPLY, replyFlags, task, length, sequence, StressMessage.timestamp(m));
        }
    }

    private void onReply(final InetSocketAddress from, final ByteBuffer m, final int task, final long sequence)
    {
        final long now = System.nanoTime();
        final SenderTask owner = task < tasks.length ? tasks[task] : null;
        if (owner == null || !owner.peer().equals(from))
        {
            if (error())
            {
                lastError = "reply for task " + task + " from " + from + ", which has no request from this node";
            }
            return;
        }
        if (sequence > owner.attempted())
        {
            if (error())
            {
                lastError = "reply " + sequence + " for task " + task + " from " + from + " to a request never sent";
            }
            return;
        }
        final SequenceTracker stream = owner.replyTracker();
        if (!count(stream.record(sequence)))
        {
            return;
        }
        rtt.recordValue(Math.max(1, Math.min(MAX_RTT_NANOS, now - StressMessage.timestamp(m))));
        replies.lazySet(replies.get() + 1);
        replyBytes.lazySet(replyBytes.get() + m.remaining());
        owner.onReply();
        if ((StressMessage.flags(m) & StressMessage.FLAG_PATTERN) != 0 && !StressMessage.matches(m, task, sequence))
        {
            if (error())
            {
                lastError = "reply " + sequence + " for task " + task + " from " + from + ": payload differs from the pattern";
            }
        }
    }

    private void onDone(final InetSocketAddress from, final int task, final long count, final int senderTasks)
    {
        final SenderNode node = sender(from);
        if (node.doneCount(task) >= 0)
        {
            if (error())
            {
                lastError = "second DONE of task " + task + " from " + from;
            }
            return;
        }
        if (count < 0 || senderTasks < 1 || (node.expectedTasks >= 0 && node.expectedTasks != senderTasks))
        {
            if (error())
            {
                lastError = "DONE of task " + task + " from " + from + " says " + count + " requests from " + senderTasks + " tasks";
            }
        }
        final boolean wasComplete = node.complete();
        node.done(task, Math.max(0, count), senderTasks);
        answer(from, StressMessage.DONE_ACK, 0, task, StressMessage.HEADER_BYTES, node.stream(task).distinct(), 0);
        if (!wasComplete && node.complete())
        {
            sendersDone++;
        }
        checkComplete();
    }

    private void onDoneAck(final InetSocketAddress from, final int task, final long received)
    {
        final SenderTask owner = task < tasks.length ? tasks[task] : null;
        if (owner == null || !owner.peer().equals(from) || owner.doneAcked())
        {
            if (error())
            {
                lastError = "unexpected DONE_ACK for task " + task + " from " + from;
            }
            return;
        }
        owner.onDoneAck(received);
        tasksDoneAcked++;
        checkComplete();
    }

    private void checkComplete()
    {
        if (complete)
        {
            return;
        }
        final boolean sendersFinished = senderCount == 0 ? settings.active() : sendersDone == senderCount;
        if (sendersFinished && tasksDoneAcked == tasks.length)
        {
            complete = true;
            completeNanos = System.nanoTime();
            if (onComplete != null)
            {
                onComplete.run();
            }
        }
    }

    /** @return whether {@code result} is a new sequence number; counts duplicates, reordering and bad numbers. */
    private boolean count(final int result)
    {
        switch (result)
        {
            case SequenceTracker.IN_ORDER, SequenceTracker.AHEAD:
                return true;
            case SequenceTracker.REORDERED:
                reordered.lazySet(reordered.get() + 1);
                return true;
            case SequenceTracker.DUPLICATE:
                duplicated.lazySet(duplicated.get() + 1);
                return false;
            default:
                if (error())
                {
                    lastError = "negative sequence number";
                }
                return false;
        }
    }

    /**
     * Counts a verification error.
     *
     * @return whether it is the first, whose description the caller keeps (so no String is built per message).
     */
    private boolean error()
    {
        verifyErrors.lazySet(verifyErrors.get() + 1);
        return lastError == null;
    }

    // ------------------------------------------------------------ answers

    private void answer(
        final InetSocketAddress to, final byte type, final int flags, final int task, final int length, final long sequence,
        final long timestamp)
    {
        if (pending.isEmpty())
        {
            final int result = send(to, type, flags, task, length, sequence, timestamp);
            if (!retry(result))
            {
                return;
            }
        }
        pending.add(to, type, flags, task, length, sequence, timestamp); // after the ones before it, in order
        pendingReplies = pending.size();
    }

    private void flushPending()
    {
        while (!pending.isEmpty())
        {
            final int result = send(pending.destination(), pending.type(), pending.flags(), pending.task(), pending.length(),
                pending.sequence(), pending.timestamp());
            if (retry(result))
            {
                break;
            }
            pending.remove();
        }
        pendingReplies = pending.size();
    }

    /** @return whether to try again later: the send timed out or found the destination congested. */
    private boolean retry(final int result)
    {
        if (result >= 0)
        {
            return false;
        }
        if ((result == RdsResult.ETIMEDOUT || result == RdsResult.EAGAIN || result == RdsResult.ENOBUFS) && running)
        {
            return true;
        }
        if (running)
        {
            sendErrors.incrementAndGet();
            if (lastError == null)
            {
                lastError = "answer not sent: " + RdsResult.name(result);
            }
        }
        return false;
    }

    private int send(
        final InetSocketAddress to, final byte type, final int flags, final int task, final int length, final long sequence,
        final long timestamp)
    {
        if (replyBuffer.capacity() < length)
        {
            replyBuffer = ByteBuffer.allocateDirect(Math.max(length, Math.min(RdsSocket.MAX_MESSAGE_SIZE, 2 * replyBuffer.capacity())));
        }
        final ByteBuffer b = replyBuffer;
        b.clear().limit(length);
        StressMessage.writeHeader(b, type, flags, task, length, 0, sequence, timestamp);
        if ((flags & StressMessage.FLAG_PATTERN) != 0)
        {
            StressMessage.fill(b, task, sequence);
        }
        try
        {
            final int result = socket.send(b, to);
            if (result >= 0 && type == StressMessage.REPLY)
            {
                repliesSent.lazySet(repliesSent.get() + 1);
                replyBytesSent.lazySet(replyBytesSent.get() + length);
            }
            return result;
        }
        catch (final IOException e)
        {
            running = false; // the socket closed
            return RdsResult.EINTR;
        }
    }

    // ------------------------------------------------------------ senders

    private SenderNode sender(final InetSocketAddress from)
    {
        final SenderNode last = lastSender;
        if (last != null && (last.address == from || last.address.equals(from)))
        {
            return last;
        }
        for (int i = 0; i < senderCount; i++)
        {
            if (senders[i].address.equals(from))
            {
                lastSender = senders[i];
                return senders[i];
            }
        }
        if (senderCount == senders.length)
        {
            senders = Arrays.copyOf(senders, senderCount * 2);
        }
        final SenderNode node = new SenderNode(from);
        senders[senderCount++] = node;
        lastSender = node;
        return node;
    }

    /** One node that sends to this one: the stream of each of its tasks. Receive thread only. */
    private static final class SenderNode
    {
        final InetSocketAddress address;
        SequenceTracker[] streams = new SequenceTracker[4];
        long[] doneCounts = filled(4);
        /** Tasks of the sender that send here, from its DONE; -1 before the first. */
        int expectedTasks = -1;
        int dones;

        SenderNode(final InetSocketAddress address)
        {
            this.address = address;
        }

        SequenceTracker stream(final int task)
        {
            ensure(task);
            SequenceTracker stream = streams[task];
            if (stream == null)
            {
                stream = new SequenceTracker();
                streams[task] = stream;
            }
            return stream;
        }

        long doneCount(final int task)
        {
            return task < doneCounts.length ? doneCounts[task] : -1;
        }

        void done(final int task, final long count, final int senderTasks)
        {
            ensure(task);
            doneCounts[task] = count;
            dones++;
            expectedTasks = Math.max(expectedTasks, senderTasks);
        }

        boolean complete()
        {
            return expectedTasks >= 0 && dones >= expectedTasks;
        }

        private void ensure(final int task)
        {
            if (task >= streams.length)
            {
                final int n = Integer.highestOneBit(task) << 1;
                streams = Arrays.copyOf(streams, n);
                final long[] counts = filled(n);
                System.arraycopy(doneCounts, 0, counts, 0, doneCounts.length);
                doneCounts = counts;
            }
        }

        private static long[] filled(final int n)
        {
            final long[] a = new long[n];
            Arrays.fill(a, -1L);
            return a;
        }
    }

    // ------------------------------------------------------------ results (after stop, or live where noted)

    /** @return the recorder of round trips in nanoseconds; its interval histograms are taken by the reporter. */
    public SingleWriterRecorder rttRecorder()
    {
        return rtt;
    }

    /** @return live: different requests received. */
    public long requests()
    {
        return requests.get();
    }

    /** @return live: payload bytes of requests received. */
    public long requestBytes()
    {
        return requestBytes.get();
    }

    /** @return live: different replies received. */
    public long replies()
    {
        return replies.get();
    }

    /** @return live: payload bytes of replies received. */
    public long replyBytes()
    {
        return replyBytes.get();
    }

    /** @return live: replies sent. */
    public long repliesSent()
    {
        return repliesSent.get();
    }

    /** @return live: payload bytes of replies sent. */
    public long replyBytesSent()
    {
        return replyBytesSent.get();
    }

    /** @return live: requests and replies that arrived again. */
    public long duplicated()
    {
        return duplicated.get();
    }

    /** @return live: requests and replies that arrived after a later one of their stream. */
    public long reordered()
    {
        return reordered.get();
    }

    /** @return live: messages that failed a check (pattern, length, type, sequence, unexpected sender). */
    public long verifyErrors()
    {
        return verifyErrors.get();
    }

    /** @return live: answers that could not be sent (an error other than a timeout). */
    public long sendErrors()
    {
        return sendErrors.get();
    }

    /** @return live: answers waiting for the requester's port to take them. */
    public int pendingReplies()
    {
        return pendingReplies;
    }

    /** @return live: when the first request arrived ({@link System#nanoTime()}), 0 before. */
    public long firstRequestNanos()
    {
        return firstRequestNanos;
    }

    /** @return live: when the last request arrived, 0 before. */
    public long lastRequestNanos()
    {
        return lastRequestNanos.get();
    }

    /** @return live: when the run became complete (see the constructor), 0 before. */
    public long completeNanos()
    {
        return completeNanos;
    }

    /** @return the first problem seen, for a person, or {@code null}. */
    public String lastError()
    {
        return lastError;
    }

    /** @return after stop: how many nodes sent requests or DONE here. */
    public int senders()
    {
        return senderCount;
    }

    /** @return after stop: senders whose every task said DONE. */
    public int sendersDone()
    {
        return sendersDone;
    }

    /**
     * @return after stop: requests lost on the way here: per stream, what its DONE says was sent (or, without
     *         a DONE, the highest number seen plus one) minus what arrived.
     */
    public long lostRequests()
    {
        long lost = 0;
        for (int i = 0; i < senderCount; i++)
        {
            final SenderNode node = senders[i];
            for (int t = 0; t < node.streams.length; t++)
            {
                final long done = node.doneCount(t);
                final SequenceTracker stream = node.streams[t];
                if (stream != null)
                {
                    lost += stream.lost(Math.max(0, done));
                }
                else if (done > 0)
                {
                    lost += done;
                }
            }
        }
        return lost;
    }
}
