package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.RdsException;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsStack;
import org.rds4j.TransportType;
import org.rds4j.core.wire.CongestionMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import static org.rds4j.core.DriverProtocol.ADDRESS;
import static org.rds4j.core.DriverProtocol.HEADER;

/**
 * A driver's side of one client process: its connection, its sockets (each a socket of the driver's stack) and
 * the frames both ways.
 * <p>
 * Reading: frames come from the client's ring ({@link DriverRing}) and its connection; each is checked
 * ({@link DriverProtocol#checkClientFrame}) and run in the client's order, by number ({@link #drain}). A send the
 * stack cannot take yet (its socket's queue to the agent is full) stops the reading of this client until the agent
 * has taken some; the client's own send buffer, which this session mirrors, bounds what it can have sent meanwhile.
 * <p>
 * Writing: frames for the client (what the stack's sockets deliver, replies, events) gather in one output buffer.
 * When the session flushes, they go in batches ({@link #placeFrames}), numbered 1, 2, ... after the WELCOME: each
 * batch as one record of the client's second ring ({@link DriverRing}), which the client reads without a system call
 * while it is awake, or, if it does not fit there now, onto the connection after a {@code SEQ} frame, written when
 * the channel takes it, its number marked in the ring ({@link DriverRing#markConnection}) so that a client that is
 * awake reads the connection; the client takes the batches in their order. A {@code DOORBELL} on the connection
 * wakes a client that sleeps. One record, and one look at the doorbell, per batch and not per frame. A message that
 * finds its socket's receive queue empty the duty cycle's thread writes into the output itself ({@link #openPastRun}).
 * A message handed to the client stays counted in its socket's receive buffer ({@link ReceiveQueue#hold}) until
 * the client reports it taken ({@code CONSUMED}), so the port is marked congested, and released, by what the
 * client's application has not taken, as an embedded socket's is. Sockets are polled while the output and the bytes
 * for the connection hold less than {@link #OUTPUT_HIGH}; past that the session waits for the channel to take them,
 * so a client whose reader stops holds the driver's memory to its sockets' receive queues, its ring and this bound.
 * <p>
 * Threads: the conductor, and the thread running the stack's duty cycle when it serves a socket it signalled
 * ({@link Entry#signal}), writes a message past a socket's queue or runs the client's sends from its ring
 * ({@link #runSends}), one at a time under
 * {@link #lock}; {@link Entry#signalPending} is set by any thread. Only the conductor ends a session.
 */
final class DriverSession
{
    private static final Logger LOG = LoggerFactory.getLogger(DriverSession.class);
    private static final int INPUT_BYTES = 256 << 10;
    private static final int OUTPUT_BYTES = 256 << 10;
    /** Above this much output not yet placed or written, sockets are not polled. */
    private static final int OUTPUT_HIGH = 1 << 20;
    private static final int POLL_BATCH = 64;
    /**
     * The most bytes of frames in one batch for the client's ring (but a longer frame, alone): the client hands on a
     * batch whole, and takes a few per cycle (so the messages it holds stay within its sockets' receive rings).
     */
    private static final int BATCH_BYTES = 64 << 10;
    /**
     * The most frames other than sends ({@code CONSUMED} reports) the agent runs from a ring per duty cycle; a full
     * batch is a client streaming them, for which the conductor is woken.
     */
    static final int AGENT_BATCH = 4;
    /**
     * The agent runs a client's sends in their turn even behind the socket's unacked messages (a stream), so that
     * each payload is copied on the CPU that writes it out, where the conductor queueing them for the agent moved each
     * between the CPUs: one-way through drivers, 1 KiB about +18 % (2026-11-28); 64 B about +11 % and 256 B +17-53 %
     * once the agent appended them to the connection's transport (2026-12-03). A send smaller than this to a peer
     * whose transport never takes appended frames (InfiniBand, a kernel peer over TCP) stays the conductor's: queued
     * by the agent, a stream of 64 B went at a third of its rate (2026-11-28), the conductor's parallel work worth
     * more than the moves.
     */
    static final int AGENT_QUEUED_PAYLOAD = 1024;
    /** The most sends the agent runs from a ring per duty cycle, besides {@link #AGENT_BATCH} other frames. */
    private static final int AGENT_SEND_BATCH = 64;
    private static final int GROWN = -2;

    /** A client's socket. */
    final class Entry implements SocketWatcher
    {
        final int id;
        final RdsSocketImpl socket;
        final AtomicBoolean signalPending = new AtomicBoolean();
        /** Payload bytes the client sent through this socket; minus the socket's queued bytes: those released. */
        long accepted;
        long reportedReleased;
        /**
         * The next {@code RELEASED} is owed even if no bytes were freed: the client waits for a congested port to
         * free, or closed the socket (its reader frees the socket's receive queue when it reads the last report).
         */
        boolean reportOwed;
        /** Payload bytes handed to the client and not yet reported taken ({@code CONSUMED}): never more is released. */
        long unconsumed;
        /** The largest {@code SO_SNDBUF} the client set: what bounds the bytes it may have queued. */
        int largestSendBuffer;
        /** The agent's, within one transport batch: payload bytes of the run written past the queue and not closed. */
        int pastRunBytes;

        Entry(final int id, final RdsSocketImpl socket)
        {
            this.id = id;
            this.socket = socket;
        }

        DriverSession session()
        {
            return DriverSession.this;
        }

        /**
         * The stack: the socket delivered, freed bytes or closed. The thread running the duty cycle writes what
         * the client is owed itself if it gets the session's lock at once, so that a message reaches the client
         * without waking the conductor; else, or if a send of the client waits for this socket, the conductor does.
         */
        @Override
        public void signal()
        {
            if (!serveNow(this))
            {
                server.signal(this);
            }
        }

        /**
         * The thread running the duty cycle ({@link StackAgent#deliver}), with a message for the socket: if its
         * receive queue holds nothing (no message in its ring or outside it, no event), the session may write the
         * message for its client at once ({@link DriverSession#openPastRun}), and the messages of the same transport
         * batch after it ({@link #appendToPastRun}) until the run is closed ({@link #closePastRun}); then the queue
         * only counts their bytes ({@link ReceiveQueue#offerHeld}).
         *
         * @return true if written: the session's lock is held until {@link #closePastRun}.
         */
        boolean openPastRun(
            final InetSocketAddress sender, final DirectBuffer buffer, final int offset, final int length)
        {
            if (socket.received.isDrained() && DriverSession.this.openPastRun(this, sender, buffer, offset, length))
            {
                pastRunBytes = length;
                return true;
            }
            return false;
        }

        /** @return true if the message was written after the run's others; false if the output is full. */
        boolean appendToPastRun(
            final InetSocketAddress sender, final DirectBuffer buffer, final int offset, final int length)
        {
            if (!outputHasRoom())
            {
                return false;
            }
            writePast(this, sender, buffer, offset, length);
            pastRunBytes += length;
            return true;
        }

        /**
         * Ends the run of {@code frames} messages: the session's lock is let go.
         *
         * @return the run's payload bytes.
         */
        int closePastRun(final int frames)
        {
            final int bytes = pastRunBytes;
            pastRunBytes = 0;
            server.deliveredPast.lazySet(server.deliveredPast.get() + frames); // the agent's alone
            lock.unlock();
            return bytes;
        }
    }

    private final DriverServer server;
    private final SocketChannel channel;
    /**
     * The session's state is the conductor's, and the thread running the stack's duty cycle's while it serves a
     * signalled socket ({@link Entry#signal}); it only tries the lock, and nobody waits while holding it.
     */
    private final ReentrantLock lock = new ReentrantLock();
    private SelectionKey key;
    private final Int2ObjectHashMap<Entry> sockets = new Int2ObjectHashMap<>();
    /** The socket found last ({@link #entry}): a stream's frames name the same one. */
    private Entry lastEntry;
    private final AddressCache addresses = new AddressCache();
    private long pid;
    private boolean ended;
    /** The client listens to the stack's peer events. */
    private boolean peerEvents;

    private ByteBuffer input = ByteBuffer.allocateDirect(INPUT_BYTES);
    private UnsafeBuffer in = new UnsafeBuffer(input);
    /** A view of {@link #input} handed to the stack's send as a frame's payload. */
    private ByteBuffer payload = input.duplicate();
    /** The client's ring, from its HELLO until the session ends; and a view of it for payloads. */
    private DriverRing ring;
    private ByteBuffer ringView;
    private Path ringFile;
    /** A ring read is under way: its memory is freed after it, not by an end meanwhile. */
    private boolean readingRing;
    /**
     * The ring is read by the stack's agent ({@link #runSends}), which runs only well-formed sends and
     * {@code CONSUMED} reports; and it met a frame it leaves to the conductor.
     */
    private boolean onAgent;
    private boolean leftToConductor;
    /** The conductor left a send in the ring for the agent, which runs it even while the conductor is awake. */
    private volatile boolean leftToAgent;
    /** Agent: sends and other frames run from the ring in this cycle. */
    private int agentSends;
    private int agentOthers;
    private final DriverRing.Handler ringFrame = this::ringFrame;
    private int ranFromRing;
    /** The number of the client's next frame to run. */
    private int nextFrame = 1;
    /** Where the frame being run is: the input or the ring, and a view of the same memory for its payload. */
    private UnsafeBuffer src;
    private ByteBuffer srcView;
    /** The socket whose send waits for room in its queue to the agent: reading stops until it has some. */
    private Entry blockedOn;

    /** Frames for the client not yet placed in its ring or on the connection. */
    private ByteBuffer output = ByteBuffer.allocateDirect(OUTPUT_BYTES);
    private UnsafeBuffer out = new UnsafeBuffer(output);
    /** Bytes for the connection the channel has not taken yet. */
    private ByteBuffer wire = ByteBuffer.allocateDirect(OUTPUT_BYTES);
    private UnsafeBuffer wireOut = new UnsafeBuffer(wire);
    /** The client's second ring: the batches of frames to it, from its HELLO until the session ends. */
    private DriverRing down;
    private Path downFile;
    /** The number of the last batch placed. */
    private int batchNumber;
    /** Batches went into the ring since the last look at its doorbell. */
    private boolean ringWritten;
    /**
     * The sockets not polled for lack of output room: polled again once the output is written. Two lists that swap,
     * so that polling them again (which may starve some anew) allocates nothing.
     */
    private ArrayList<Entry> starved = new ArrayList<>();
    private ArrayList<Entry> starvedSpare = new ArrayList<>();

    /** The socket being polled, for {@link #deliver} and the notification listener. */
    private Entry polling;
    private final RdsMessageHandler deliver = this::deliver;

    DriverSession(final DriverServer server, final SocketChannel channel)
    {
        this.server = server;
        this.channel = channel;
    }

    void key(final SelectionKey key)
    {
        this.key = key;
    }

    long pid()
    {
        return pid;
    }

    /** Under the session's lock: see {@link #onReadyLocked}. */
    void onReady(final SelectionKey ready)
    {
        lock.lock();
        try
        {
            onReadyLocked(ready);
        }
        finally
        {
            lock.unlock();
        }
    }

    /** The selector says the channel is readable or writable. */
    private void onReadyLocked(final SelectionKey ready)
    {
        try
        {
            if (ready.isWritable())
            {
                flush();
            }
            if (!ended && ready.isReadable())
            {
                read();
            }
        }
        catch (final IOException ex)
        {
            end(null);
        }
    }

    private void read() throws IOException
    {
        final int read = channel.read(input);
        drain(); // at the end too: what the client wrote before it went is run first
        if (read < 0)
        {
            end(null);
            return;
        }
        flush();
    }

    /**
     * Conductor, under the lock: runs what the client's ring holds (and its connection's input).
     *
     * @return true if any ran, or if the agent held the lock (it delivers for a moment): the conductor comes back
     *         before it sleeps, and never queues for the lock (which would allocate on every wait).
     */
    boolean drainRing()
    {
        if (!lock.tryLock())
        {
            return true;
        }
        try
        {
            if (ended || ring == null)
            {
                return false;
            }
            final boolean ran = drain() > 0;
            flush();
            return ran;
        }
        catch (final IOException ex)
        {
            end(null);
            return false;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Agent, in its duty cycle: runs the client's sends and {@code CONSUMED} reports from its ring in their turn, as
     * the conductor would, so that a send is transmitted in the same cycle without waking the conductor: up to
     * {@link #AGENT_SEND_BATCH} sends and {@link #AGENT_BATCH} other frames. It stops at any other frame and at a
     * frame that breaks a rule: those the conductor runs, or cuts the client off for.
     *
     * @param sendsOnly the conductor is awake and runs the rest: only sends, which it leaves to the agent.
     * @return how many frames ran, or -1 if the conductor must look at the ring.
     */
    int runSends(final boolean sendsOnly)
    {
        if (!lock.tryLock())
        {
            return 0; // the conductor is at it
        }
        try
        {
            if (ended || ring == null || blockedOn != null)
            {
                return 0;
            }
            onAgent = true;
            leftToConductor = false;
            agentSends = 0;
            agentOthers = sendsOnly ? AGENT_BATCH : 0;
            final int ran = runRingFrames(AGENT_SEND_BATCH + AGENT_BATCH);
            if (blockedOn != null)
            {
                interest(); // a send waits for room in its socket's queue: the connection's reads stop meanwhile
            }
            // a frame of the connection may be next now that these ran: its bytes are the conductor's to run (not
            // when none ran: the conductor already found it waiting, and would be woken in a loop)
            return leftToConductor || (ran > 0 && input.position() > 0) ? -1 : ran;
        }
        finally
        {
            onAgent = false;
            lock.unlock();
        }
    }

    /**
     * Agent, while the conductor is awake: runs the sends the conductor left in the ring for it, if it left any since
     * the last call (so a client streaming other frames, all of them the conductor's, costs the agent nothing).
     *
     * @return how many ran, or -1 if the conductor must look at the ring or the connection (as {@link #runSends}).
     */
    int runLeftSends()
    {
        if (!leftToAgent)
        {
            return 0;
        }
        leftToAgent = false;
        return runSends(true);
    }

    /** Agent, after {@link #runSends}: whether it ran a full {@link #AGENT_BATCH} of frames other than sends. */
    boolean streamsOtherFrames()
    {
        return agentOthers == AGENT_BATCH;
    }

    /**
     * Agent, as it stops running its duty cycles: arms the doorbell, so that the client rings for what it writes
     * from now on.
     *
     * @return false if the conductor must look at the ring: its lock is held, or it holds frames written before.
     */
    boolean armDoorbell()
    {
        if (!lock.tryLock())
        {
            return false;
        }
        try
        {
            if (ended || ring == null)
            {
                return true;
            }
            ring.sleeping(true);
            return ring.isEmpty();
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Conductor: it is about to sleep, so the client must ring (true), or it is awake (false). */
    void sleeping(final boolean asleep)
    {
        final DriverRing r = ring;
        if (r != null && !ended)
        {
            r.sleeping(asleep);
        }
    }

    /**
     * Runs the client's frames in their order, from the connection's input and the ring, until the next is not here
     * yet or must wait (a send with no room).
     *
     * @return how many ran.
     */
    private int drain() throws IOException
    {
        int ran = 0;
        while (!ended && blockedOn == null)
        {
            int now = runConnectionFrames();
            if (!ended && blockedOn == null && ring != null)
            {
                now += runRingFrames(POLL_BATCH);
            }
            if (now == 0)
            {
                break;
            }
            ran += now;
        }
        return ran;
    }

    /** Runs the whole frames in the input whose turn it is, in order, until one must wait; returns how many ran. */
    private int runConnectionFrames() throws IOException
    {
        int ran = 0;
        int position = 0;
        final int limit = input.position();
        while (!ended && blockedOn == null)
        {
            final int length = wholeFrame(position, limit, position);
            if (length == GROWN)
            {
                return ran;
            }
            if (length <= 0)
            {
                break;
            }
            final byte type = in.getByte(position + DriverProtocol.TYPE_OFFSET);
            if (type == DriverProtocol.DOORBELL)
            {
                position += length; // it woke the conductor: that was all
                continue;
            }
            if (pid == 0 || type != DriverProtocol.SEQ)
            {
                if (pid != 0)
                {
                    end("a frame without its SEQ");
                    break;
                }
                runAt(in, payload, position, length); // the HELLO, or the end for anything else
                position += length;
                ran++;
                continue;
            }
            final int at = position + length;
            final int frameLength = wholeFrame(at, limit, position);
            if (frameLength == GROWN)
            {
                return ran;
            }
            if (frameLength <= 0 || in.getInt(position + HEADER) != nextFrame)
            {
                break; // the frame is not all here, or an earlier one is in the ring
            }
            if (!runInTurn(in, payload, at, frameLength))
            {
                break; // the frame waits: run again when its socket has room
            }
            server.framesOnConnection.incrementAndGet(); // either thread, for any session: rare
            position = at + frameLength;
            ran++;
        }
        if (!ended)
        {
            compact(position, limit);
        }
        return ran;
    }

    /**
     * @param from where the input's unread bytes start: the input is grown from there for a frame longer than it.
     * @return the length of the checked whole frame at {@code position}, 0 if it is not all here, {@link #GROWN} if
     *         it is not and the input was grown (its bytes from {@code from} now start it), or -1 if the session ended
     *         on it.
     */
    private int wholeFrame(final int position, final int limit, final int from)
    {
        if (limit - position < 4)
        {
            return 0;
        }
        final int length = in.getInt(position);
        if (length < HEADER || length > DriverProtocol.MAX_FRAME)
        {
            end("frame length " + length);
            return -1;
        }
        if (limit - position < length)
        {
            if (position - from + length > input.capacity())
            {
                grow(position - from + length, from, limit);
                return GROWN;
            }
            return 0;
        }
        final String problem = DriverProtocol.checkClientFrame(in, position, length);
        if (problem != null)
        {
            end(problem);
            return -1;
        }
        return length;
    }

    /** Runs the ring's frames whose turn it is; returns how many ran. */
    private int runRingFrames(final int limit)
    {
        ranFromRing = 0;
        readingRing = true;
        try
        {
            ring.read(ringFrame, limit);
        }
        catch (final RuntimeException ex)
        {
            if (onAgent)
            {
                leftToConductor = true;
            }
            else
            {
                end("unreadable ring: " + ex); // the client wrote over the ring's structure
            }
        }
        finally
        {
            readingRing = false;
            if (ended)
            {
                freeRing();
            }
        }
        return ranFromRing;
    }

    private boolean ringFrame(final int number, final UnsafeBuffer buffer, final int index, final int length)
    {
        if (ended || blockedOn != null || number != nextFrame)
        {
            return false; // the frame after: over the connection, not here yet
        }
        boolean send = false;
        if (onAgent)
        {
            if (!agentMayRun(buffer, index, length))
            {
                leftToConductor = true;
                return false;
            }
            send = isSend(buffer, index);
            if (send ? agentSends == AGENT_SEND_BATCH : agentOthers == AGENT_BATCH)
            {
                return false; // this cycle's share: the next cycle goes on
            }
        }
        else
        {
            final String problem = DriverProtocol.checkClientFrame(buffer, index, length);
            if (problem != null)
            {
                end(problem);
                return false;
            }
            if (server.agentRunsRings() && isSend(buffer, index) && agentMayRun(buffer, index, length))
            {
                leftToAgent = true;
                return false; // the agent's (the stream stays on its CPU)
            }
        }
        try
        {
            if (!runInTurn(buffer, ringView, index, length))
            {
                return false; // waits for room, and is read again then
            }
        }
        catch (final IOException ex)
        {
            if (onAgent)
            {
                leftToConductor = true;
            }
            else
            {
                end(null);
            }
            return false;
        }
        ranFromRing++;
        if (onAgent)
        {
            if (send)
            {
                agentSends++;
            }
            else
            {
                agentOthers++;
            }
        }
        return true;
    }

    /**
     * Agent: whether a ring's frame is one the duty cycle may run: a well-formed {@code SEND} or {@code CONSUMED} of
     * a socket the client opened, breaking no rule. Only the conductor ends a session.
     */
    private boolean agentMayRun(final MutableDirectBuffer buffer, final int index, final int length)
    {
        final byte type = buffer.getByte(index + DriverProtocol.TYPE_OFFSET);
        if ((type != DriverProtocol.SEND && type != DriverProtocol.CONSUMED) ||
            DriverProtocol.checkClientFrame(buffer, index, length) != null)
        {
            return false;
        }
        final Entry entry = entry(buffer.getInt(index + DriverProtocol.SOCKET_OFFSET));
        if (entry == null)
        {
            return false;
        }
        if (type == DriverProtocol.CONSUMED)
        {
            return !overConsumed(entry, buffer.getLong(index + HEADER));
        }
        // a send into an empty buffer, as an embedded blocking send transmits in its caller; behind unacked messages
        // (a stream) one appended, or large, but never one that would overrun the buffer (the conductor cuts that
        // client off)
        final long queued = entry.socket.sendQueuedBytes();
        return queued == 0 || (queued < 2L * entry.largestSendBuffer &&
            (length - HEADER - ADDRESS >= AGENT_QUEUED_PAYLOAD || entry.socket.mayAppendToAll() ||
            entry.socket.mayAppendTo(addresses.get(buffer, index + HEADER).getAddress())));
    }

    /**
     * @return the client's socket {@code id}, or null: the map's lookup was 3-7 % of a sending driver's samples in a
     *         64 B stream, whose frames look the same socket up twice each (benchmarks.md, 2026-12-04).
     */
    private Entry entry(final int id)
    {
        final Entry last = lastEntry;
        if (last != null && last.id == id)
        {
            return last;
        }
        final Entry entry = sockets.get(id);
        if (entry != null)
        {
            lastEntry = entry;
        }
        return entry;
    }

    private static boolean isSend(final MutableDirectBuffer buffer, final int index)
    {
        return buffer.getByte(index + DriverProtocol.TYPE_OFFSET) == DriverProtocol.SEND;
    }

    /** Runs the client's next frame (numbered {@link #nextFrame}); once run, the number after is next. */
    private boolean runInTurn(final UnsafeBuffer buffer, final ByteBuffer view, final int offset, final int length)
        throws IOException
    {
        if (!runAt(buffer, view, offset, length))
        {
            return false;
        }
        nextFrame = DriverProtocol.nextFrameNumber(nextFrame);
        return true;
    }

    /** Runs the frame at {@code offset} of {@code buffer}, whose payload {@code view} shows ({@link #run}). */
    private boolean runAt(final UnsafeBuffer buffer, final ByteBuffer view, final int offset, final int length)
        throws IOException
    {
        src = buffer;
        srcView = view;
        return run(offset, length);
    }

    private void compact(final int position, final int limit)
    {
        if (position > 0)
        {
            input.limit(limit).position(position);
            input.compact();
        }
    }

    private void grow(final int length, final int position, final int limit)
    {
        final ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(length, input.capacity() * 2));
        input.limit(limit).position(position);
        bigger.put(input);
        input = bigger;
        in = new UnsafeBuffer(input);
        payload = input.duplicate();
    }

    /** @return false if the frame must wait (a send with no room), else true. */
    private boolean run(final int offset, final int length) throws IOException
    {
        final byte type = src.getByte(offset + DriverProtocol.TYPE_OFFSET);
        final int id = src.getInt(offset + DriverProtocol.SOCKET_OFFSET);
        final int body = offset + HEADER;
        if (pid == 0 && type != DriverProtocol.HELLO)
        {
            end("frame before HELLO");
            return true;
        }
        switch (type)
        {
            case DriverProtocol.HELLO:
                hello(body);
                return true;
            case DriverProtocol.QUERY:
                query(src.getInt(body), src.getInt(body + 4));
                return true;
            case DriverProtocol.OPEN:
                open(id, src.getInt(body), src.getInt(body + 4));
                return true;
            case DriverProtocol.PEERS:
                peerEvents = src.getInt(body) != 0;
                return true;
            case DriverProtocol.SEQ:
            case DriverProtocol.DOORBELL:
                end("a " + (type == DriverProtocol.SEQ ? "SEQ" : "DOORBELL") + " in the ring");
                return true;
            default:
                break;
        }
        final Entry entry = entry(id);
        if (entry == null)
        {
            end("no socket " + id);
            return true;
        }
        switch (type)
        {
            case DriverProtocol.SEND:
                return send(entry, body, offset + length);
            case DriverProtocol.BIND:
                bind(entry, src.getInt(body), src.getInt(body + 4), addresses.get(src, body + 8));
                break;
            case DriverProtocol.OPTION:
                option(entry, src.getInt(body), src.getInt(body + 4), src.getLong(body + 8));
                break;
            case DriverProtocol.CANCEL:
                final int cancelled = entry.socket.cancelSentTo(addresses.get(src, body + 8));
                // the freed bytes first: when the client's cancel returns, its send buffer has them back
                reportReleased(entry);
                reply(src.getInt(body), cancelled, 0, null);
                break;
            case DriverProtocol.CONG_WAIT:
                congestionWait(entry, src.getInt(body) != 0, addresses.get(src, body + 8));
                break;
            case DriverProtocol.CONSUMED:
                consumed(entry, src.getLong(body));
                break;
            case DriverProtocol.CLOSE:
                sockets.remove(id);
                lastEntry = null;
                entry.socket.close();
                // a last report, so that the client's reader wakes and frees the socket's receive queue
                entry.reportOwed = true;
                reportReleased(entry);
                break;
            default:
                throw new IllegalStateException("checked frame of type " + type);
        }
        return true;
    }

    private void hello(final int body) throws IOException
    {
        if (pid != 0 || src.getInt(body) != DriverProtocol.VERSION || src.getLong(body + 8) <= 0)
        {
            end(pid != 0 ? "second HELLO" : "protocol version " + src.getInt(body));
            return;
        }
        final long clientPid = src.getLong(body + 8);
        final String ringName = "client-" + clientPid + "-" + server.nextRingNumber() + ".ring";
        final String downName = ringName + ".down";
        try
        {
            ringFile = server.directory().resolve(ringName);
            ring = DriverRing.create(ringFile, DriverRing.CAPACITY, server.groupAccess());
            ringView = ring.view();
            downFile = server.directory().resolve(downName);
            down = DriverRing.create(downFile, DriverRing.DOWN_CAPACITY, server.groupAccess());
        }
        catch (final IOException ex)
        {
            LOG.warn("driver: cannot make a ring for client pid {}: {}", clientPid, ex.toString());
            end(null);
            return;
        }
        pid = clientPid;
        server.clientsAttached.incrementAndGet();
        final byte[] name = ringName.getBytes(StandardCharsets.UTF_8);
        final byte[] downNameBytes = downName.getBytes(StandardCharsets.UTF_8);
        final byte[] allowed = String.join(",", server.stack().config().allowedPeers().entries())
            .getBytes(StandardCharsets.UTF_8);
        final int length =
            HEADER + DriverProtocol.WELCOME_FIXED + name.length + downNameBytes.length + allowed.length;
        // unnumbered, on the connection: the client maps the ring when it has read this
        final int at = reserveWire(length);
        final int b = DriverProtocol.putHeader(wireOut, at, length, DriverProtocol.WELCOME, 0);
        wireOut.putInt(b, DriverProtocol.VERSION);
        wireOut.putInt(b + 4, name.length);
        wireOut.putLong(b + 8, ProcessHandle.current().pid());
        wireOut.putLong(b + 16, server.startedMillis());
        // the client admits sends against buffers this bounds, as the driver's sockets do
        wireOut.putInt(b + 24, server.stack().config().maxSocketBufferBytes());
        wireOut.putInt(b + 28, downNameBytes.length);
        wireOut.putBytes(b + DriverProtocol.WELCOME_FIXED, name);
        wireOut.putBytes(b + DriverProtocol.WELCOME_FIXED + name.length, downNameBytes);
        wireOut.putBytes(b + DriverProtocol.WELCOME_FIXED + name.length + downNameBytes.length, allowed);
        wire.position(at + length);
        LOG.debug("driver: client pid {} attached", pid);
    }

    private void open(final int id, final int sendBufferBytes, final int receiveBufferBytes) throws IOException
    {
        if (sockets.containsKey(id))
        {
            end("socket " + id + " opened twice");
            return;
        }
        final RdsSocketImpl socket = (RdsSocketImpl)server.stack().openSocket();
        socket.configureBlocking(false);
        try
        {
            socket.setOption(RdsOptions.SO_SNDBUF, sendBufferBytes);
            socket.setOption(RdsOptions.SO_RCVBUF, receiveBufferBytes);
        }
        catch (final RdsException | IllegalArgumentException ex)
        {
            socket.close();
            end("socket " + id + ": " + ex.getMessage());
            return;
        }
        final Entry entry = new Entry(id, socket);
        // as lowered to the driver's maxSocketBufferBytes, which WELCOME told the client
        entry.largestSendBuffer = socket.sendBufferBytes();
        socket.setNotificationListener(new Notifications(entry));
        sockets.put(id, entry);
    }

    private void bind(final Entry entry, final int call, final int transport, final InetSocketAddress local)
        throws IOException
    {
        final TransportType[] types = TransportType.values();
        if (transport < 0 || transport >= types.length)
        {
            end("transport " + transport);
            return;
        }
        try
        {
            if (entry.socket.getOption(RdsOptions.RDS_TRANSPORT) != types[transport])
            {
                // once: a bind that failed leaves the socket's transport set, and a second bind sends it again
                entry.socket.setOption(RdsOptions.RDS_TRANSPORT, types[transport]);
            }
            entry.socket.bind(local);
            if (entry.socket.watch(entry) != entry)
            {
                throw new IllegalStateException("a driver's socket has no other watcher");
            }
            reply(call, 0, entry.socket.localAddress().getPort(), null);
        }
        catch (final RdsException ex)
        {
            reply(call, ex.code(), 0, reason(ex));
        }
    }

    private void option(final Entry entry, final int call, final int option, final long value) throws IOException
    {
        try
        {
            switch (option)
            {
                case DriverProtocol.OPTION_SNDBUF:
                    entry.socket.setOption(RdsOptions.SO_SNDBUF, (int)Math.min(value, Integer.MAX_VALUE));
                    entry.largestSendBuffer = Math.max(entry.largestSendBuffer, entry.socket.sendBufferBytes());
                    break;
                case DriverProtocol.OPTION_RCVBUF:
                    entry.socket.setOption(RdsOptions.SO_RCVBUF, (int)Math.min(value, Integer.MAX_VALUE));
                    break;
                case DriverProtocol.OPTION_CONG_MONITOR:
                    entry.socket.setOption(RdsOptions.RDS_CONG_MONITOR, value != 0);
                    break;
                default:
                    end("option " + option);
                    return;
            }
            reply(call, 0, 0, null);
        }
        catch (final RdsException ex)
        {
            reply(call, ex.code(), 0, reason(ex));
        }
        catch (final IllegalArgumentException ex)
        {
            reply(call, RdsResult.EINVAL, 0, ex.getMessage());
        }
    }

    /** @return whether a {@code CONSUMED} report of {@code bytes} reports more than was handed to the client. */
    private static boolean overConsumed(final Entry entry, final long bytes)
    {
        return bytes > entry.unconsumed;
    }

    private void consumed(final Entry entry, final long bytes)
    {
        if (overConsumed(entry, bytes))
        {
            // else the socket's receive-buffer count would go below zero: its port never congested, the driver
            // would queue for this client without bound
            end("socket " + entry.id + " consumed " + bytes + " bytes, " + entry.unconsumed + " handed out");
            return;
        }
        entry.unconsumed -= bytes;
        entry.socket.received.release(bytes);
    }

    private boolean send(final Entry entry, final int body, final int end)
    {
        final InetSocketAddress destination = addresses.get(src, body);
        srcView.limit(end).position(body + ADDRESS);
        final int length = srcView.remaining();
        if (entry.socket.sendQueuedBytes() >= 2L * entry.largestSendBuffer)
        {
            // a client that admits as it must never gets here (its count is at least this one, and a send is
            // admitted below its SO_SNDBUF, with a claim's room taken earlier at most one more buffer's worth): it
            // ignores its buffer, and would make the driver hold without bound what no peer acks
            end("send buffer overrun on socket " + entry.id);
            return true;
        }
        final int result = entry.socket.sendAdmitted(srcView, destination, onAgent);
        if (result == RdsResult.EAGAIN)
        {
            blockedOn = entry;
            return false;
        }
        if (!onAgent)
        {
            server.sendsQueued = true; // the conductor wakes the agent after its read or turn
        }
        final AtomicLong ranBy = onAgent ? server.sendsByAgent : server.sendsByConductor;
        ranBy.lazySet(ranBy.get() + 1); // its thread's alone
        if (result >= 0)
        {
            entry.accepted += length;
        }
        // else the socket was closed under the send (the stack closing): dropped as close drops what was queued
        return true;
    }

    private void congestionWait(final Entry entry, final boolean returned, final InetSocketAddress destination)
    {
        if (returned && entry.socket.congestion().onRefusalReturned(destination))
        {
            // freed between the client's refusal and this frame (a conductor held up while the agent applied the
            // update): the update found no refusal to notify, so this does, in order with the socket's messages
            entry.socket.notifyListener(new Notification(Notification.Kind.UNCONGESTED, destination));
        }
        entry.reportOwed = true;
        final CongestionMap map = server.stack().congestionMap(destination.getAddress());
        if (map == null || !map.isCongested(destination.getPort()))
        {
            service(entry); // freed before the client asked: say so now, or it would wait for the next change
        }
    }

    private void query(final int call, final int what) throws IOException
    {
        final StringBuilder text = new StringBuilder();
        if (what == DriverProtocol.QUERY_CONNECTIONS)
        {
            for (final RdsStack.ConnectionInfo c : server.stack().connections())
            {
                text.append(c.local().getHostAddress()).append(' ').append(c.remote().getHostAddress()).append(' ')
                    .append(c.transport()).append(' ').append(c.state()).append(' ').append(c.nextTxSequence())
                    .append(' ').append(c.nextRxSequence()).append(' ').append(c.unacked()).append('\n');
            }
        }
        else if (what == DriverProtocol.QUERY_CLIENTS)
        {
            server.describeClients(text);
        }
        else if (what == DriverProtocol.QUERY_COUNTERS)
        {
            server.stack().counters().forEach((name, value) -> text.append(name).append(' ').append(value).append('\n'));
            server.counters().forEach((name, value) -> text.append(name).append(' ').append(value).append('\n'));
        }
        else
        {
            end("query " + what);
            return;
        }
        reply(call, 0, 0, text.toString());
    }

    /** An exception's message without the code's name in front: the client's exception puts it back. */
    private static String reason(final RdsException ex)
    {
        final String prefix = RdsResult.name(ex.code()) + ": ";
        final String message = ex.getMessage();
        return message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    }

    private void reply(final int call, final int result, final long value, final String text)
    {
        final byte[] bytes = text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        final int length = HEADER + 16 + bytes.length;
        final int at = reserveOutput(length);
        final int b = DriverProtocol.putHeader(out, at, length, DriverProtocol.REPLY, 0);
        out.putInt(b, call);
        out.putInt(b + 4, result);
        out.putLong(b + 8, value);
        out.putBytes(b + 16, bytes);
        output.position(at + length);
    }

    /** Under the session's lock: see {@link #serviceLocked}. */
    void service(final Entry entry)
    {
        lock.lock();
        try
        {
            serviceLocked(entry);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Conductor: the socket was signalled (something delivered, bytes released, room in its queue), or its client
     * resumed it: retries a waiting send, delivers what the client has room for and reports released bytes.
     */
    private void serviceLocked(final Entry entry)
    {
        if (ended)
        {
            return;
        }
        try
        {
            if (blockedOn == entry)
            {
                blockedOn = null;
                drain();
                if (ended)
                {
                    return;
                }
            }
            deliverFrom(entry);
            reportReleased(entry);
            flush();
        }
        catch (final IOException ex)
        {
            end(null);
        }
    }

    /** @return true if the socket was served here and now; false if the conductor must (also to finish writing). */
    private boolean serveNow(final Entry entry)
    {
        if (!lock.tryLock())
        {
            return false;
        }
        try
        {
            if (ended)
            {
                return true;
            }
            if (blockedOn == entry)
            {
                return false; // the client's input is the conductor's to read again
            }
            deliverFrom(entry);
            reportReleased(entry);
            flush();
            // bytes the channel did not take wait for OP_WRITE, which only the conductor's next select sees
            return wire.position() == 0;
        }
        catch (final IOException ex)
        {
            return false; // the conductor meets the error too, and ends the session
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * The thread running the duty cycle, with a message for the socket while its receive queue is empty: writes it
     * straight into the output for the client, as {@link #deliverFrom} would write it once polled from the queue
     * (the copy into the socket's receive ring and its poll saved: 64 B one-way through drivers about +6 %). Only
     * if the session's lock is free at once and the output is below the bound polling keeps to; else the message
     * goes into the queue, and so do those after it until the session has taken them, which keeps the order. Held in
     * the socket's receive buffer until the client reports it taken, as a polled message. The lock stays held for
     * the messages of the same transport batch that follow ({@link Entry#appendToPastRun}): one take of the lock and
     * one look at the queue a run, not a message. The conductor, which waits for the lock only to read a client's
     * connection, waits at most for the batch.
     *
     * @return true if written, the lock held; false if not, the lock not held.
     */
    private boolean openPastRun(
        final Entry entry, final InetSocketAddress sender, final DirectBuffer buffer, final int offset,
        final int length)
    {
        if (!lock.tryLock())
        {
            return false;
        }
        boolean written = false;
        try
        {
            if (!ended && delivers(entry) && outputHasRoom())
            {
                writePast(entry, sender, buffer, offset, length);
                written = true;
            }
        }
        finally
        {
            if (!written)
            {
                lock.unlock(); // also if the write threw: no run is open to let the lock go
            }
        }
        return written;
    }

    private void writePast(
        final Entry entry, final InetSocketAddress sender, final DirectBuffer buffer, final int offset,
        final int length)
    {
        final int payload = deliverFrame(entry, sender, length); // before out is read: it may grow the output
        out.putBytes(payload, buffer, offset, length);
    }

    private void deliverFrom(final Entry entry) throws IOException
    {
        if (!delivers(entry))
        {
            return;
        }
        polling = entry;
        try
        {
            while (outputHasRoom())
            {
                if (entry.socket.poll(deliver, POLL_BATCH) < POLL_BATCH)
                {
                    return;
                }
            }
            if (!starved.contains(entry))
            {
                starved.add(entry);
            }
        }
        finally
        {
            polling = null;
        }
    }

    /** @return whether the entry's socket is still this client's, open and bound: what it receives goes out. */
    private boolean delivers(final Entry entry)
    {
        return entry(entry.id) == entry && entry.socket.isOpen() && entry.socket.localAddress() != null;
    }

    /** @return whether more deliveries may be written: the output and the bytes for the connection are under it. */
    private boolean outputHasRoom()
    {
        return output.position() + wire.position() < OUTPUT_HIGH;
    }

    private void deliver(final InetSocketAddress sender, final ByteBuffer message)
    {
        final int length = message.remaining();
        final int payload = deliverFrame(polling, sender, length); // before out is read: it may grow the output
        out.putBytes(payload, message, message.position(), length);
        polling.socket.received.hold(length);
    }

    /**
     * Adds a {@code DELIVER} frame of {@code length} payload bytes to the output, its bytes the client's to report
     * taken; the caller puts the payload.
     *
     * @return where the payload goes in {@link #out}.
     */
    private int deliverFrame(final Entry entry, final InetSocketAddress sender, final int length)
    {
        final int frame = HEADER + ADDRESS + length;
        final int at = reserveOutput(frame);
        final int b = DriverProtocol.putHeader(out, at, frame, DriverProtocol.DELIVER, entry.id);
        DriverProtocol.putAddress(out, b, sender);
        output.position(at + frame);
        entry.unconsumed += length;
        return b + ADDRESS;
    }

    private void queueNotification(final Entry entry, final Notification.Kind kind, final InetSocketAddress address)
    {
        final int length = HEADER + 8 + ADDRESS;
        final int at = reserveOutput(length);
        final int b = DriverProtocol.putHeader(out, at, length, DriverProtocol.NOTIFY, entry.id);
        out.putInt(b, kind.ordinal());
        out.putInt(b + 4, 0);
        DriverProtocol.putAddress(out, b + 8, address);
        output.position(at + length);
    }

    /** Under the session's lock: see {@link #describeLocked}. */
    void describe(final StringBuilder text)
    {
        lock.lock();
        try
        {
            describeLocked(text);
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Conductor: one line for {@code rds info}: pid, sockets, bytes in their send buffers, bytes handed out untaken. */
    private void describeLocked(final StringBuilder text)
    {
        long sendQueued = 0;
        long receiveQueued = 0;
        for (final Entry entry : sockets.values())
        {
            sendQueued += entry.socket.sendQueuedBytes();
            receiveQueued += entry.socket.receiveQueuedBytes();
        }
        text.append(pid).append(' ').append(sockets.size()).append(' ').append(sendQueued).append(' ')
            .append(receiveQueued).append('\n');
    }

    /** Under the session's lock: see {@link #peerLocked}. */
    void peer(final boolean up, final InetAddress local, final InetAddress peer)
    {
        lock.lock();
        try
        {
            peerLocked(up, local, peer);
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Conductor: the stack's peer listener saw a peer come up or go down; told to the client if it listens. */
    private void peerLocked(final boolean up, final InetAddress local, final InetAddress peer)
    {
        if (ended || !peerEvents)
        {
            return;
        }
        final int length = HEADER + 8 + 2 * ADDRESS;
        final int at = reserveOutput(length);
        final int b = DriverProtocol.putHeader(out, at, length, DriverProtocol.PEER, 0);
        out.putInt(b, up ? 1 : 0);
        out.putInt(b + 4, 0);
        DriverProtocol.putAddress(out, b + 8, new InetSocketAddress(local, 0));
        DriverProtocol.putAddress(out, b + 8 + ADDRESS, new InetSocketAddress(peer, 0));
        output.position(at + length);
        try
        {
            flush();
        }
        catch (final IOException ex)
        {
            end(null);
        }
    }

    private void reportReleased(final Entry entry)
    {
        final long released = entry.accepted - entry.socket.sendQueuedBytes();
        if (released != entry.reportedReleased || entry.reportOwed)
        {
            entry.reportedReleased = released;
            entry.reportOwed = false;
            final int length = HEADER + 8;
            final int at = reserveOutput(length);
            DriverProtocol.putHeader(out, at, length, DriverProtocol.RELEASED, entry.id);
            out.putLong(at + HEADER, released);
            output.position(at + length);
        }
    }

    /** @return where a frame of {@code length} bytes goes in the output, grown if needed. */
    private int reserveOutput(final int length)
    {
        final ByteBuffer room = withRoom(output, length);
        if (room != output)
        {
            output = room;
            out = new UnsafeBuffer(output);
        }
        return output.position();
    }

    /** @return where {@code length} bytes go in the bytes for the connection, grown if needed. */
    private int reserveWire(final int length)
    {
        final ByteBuffer room = withRoom(wire, length);
        if (room != wire)
        {
            wire = room;
            wireOut = new UnsafeBuffer(wire);
        }
        return wire.position();
    }

    /** @return {@code buffer} if it has room for {@code length} more bytes, else a larger copy of it. */
    private static ByteBuffer withRoom(final ByteBuffer buffer, final int length)
    {
        final int at = buffer.position();
        if (buffer.capacity() - at >= length)
        {
            return buffer;
        }
        final ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(buffer.capacity() * 2, at + length));
        buffer.flip();
        bigger.put(buffer);
        return bigger;
    }

    /**
     * Moves the output's frames to the client in batches: runs of whole frames of at most a record's room (or one
     * longer frame), each numbered, into the ring if it has room, else onto the connection after a {@code SEQ}.
     */
    private void placeFrames()
    {
        final int end = output.position();
        if (end == 0)
        {
            return;
        }
        // null once the session ended: nothing is sent then
        final int most = down == null ? 0 : Math.min(down.maxFrame(), BATCH_BYTES);
        int start = 0;
        while (start < end)
        {
            int stop = start + out.getInt(start);
            while (stop < end && stop + out.getInt(stop) - start <= most)
            {
                stop += out.getInt(stop);
            }
            final int length = stop - start;
            batchNumber = DriverProtocol.nextFrameNumber(batchNumber);
            final int index = down == null ? -1 : down.claim(batchNumber, length);
            if (index >= 0)
            {
                down.buffer().putBytes(index, out, start, length);
                down.commit();
                ringWritten = true;
            }
            else
            {
                final int seq = HEADER + 8;
                final int at = reserveWire(seq + length);
                final int b = DriverProtocol.putHeader(wireOut, at, seq, DriverProtocol.SEQ, 0);
                wireOut.putInt(b, batchNumber);
                wireOut.putInt(b + 4, length);
                wireOut.putBytes(at + seq, out, start, length);
                wire.position(at + seq + length);
                if (down != null)
                {
                    down.markConnection(batchNumber);
                }
            }
            start = stop;
        }
        output.clear();
    }

    /** Reads while no send waits for room; writes while output is pending. */
    private void interest()
    {
        if (!ended)
        {
            key.interestOps((blockedOn == null ? SelectionKey.OP_READ : 0) |
                (wire.position() > 0 ? SelectionKey.OP_WRITE : 0));
        }
    }

    /** Places the output's frames, rings for them if the client sleeps, and writes what the channel takes. */
    private void flush() throws IOException
    {
        placeFrames();
        if (ringWritten)
        {
            ringWritten = false;
            if (down != null && down.takeDoorbell())
            {
                final int at = reserveWire(HEADER);
                DriverProtocol.putHeader(wireOut, at, HEADER, DriverProtocol.DOORBELL, 0);
                wire.position(at + HEADER);
            }
        }
        if (wire.position() == 0 && starved.isEmpty())
        {
            interest();
            return;
        }
        wire.flip();
        channel.write(wire);
        wire.compact();
        final boolean pending = wire.position() > 0;
        interest();
        if (!pending && !starved.isEmpty())
        {
            final ArrayList<Entry> again = starved;
            starved = starvedSpare;
            starvedSpare = again;
            for (int i = 0, n = again.size(); i < n; i++)
            {
                deliverFrom(again.get(i));
            }
            again.clear();
            if (output.position() > 0)
            {
                flush();
            }
        }
    }

    /** Under the session's lock: see {@link #endLocked}. */
    void end(final String cutOff)
    {
        lock.lock();
        try
        {
            endLocked(cutOff);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Ends the session: closes the client's sockets (their ports are free, what they queued is dropped) and the
     * connection.
     *
     * @param cutOff why the client is cut off (a malformed frame), or null if its connection ended or the driver
     *               stops.
     */
    private void endLocked(final String cutOff)
    {
        if (ended)
        {
            return;
        }
        ended = true;
        long dropped = 0;
        for (final Entry entry : sockets.values())
        {
            dropped += entry.socket.sendQueuedBytes();
            entry.socket.close();
        }
        server.droppedSendBytes.addAndGet(dropped);
        if (cutOff != null)
        {
            LOG.warn("driver: client pid {} cut off: {}", pid, cutOff);
        }
        else
        {
            LOG.info("driver: client pid {} gone with {} sockets, {} queued bytes dropped", pid, sockets.size(),
                dropped);
        }
        sockets.clear();
        lastEntry = null;
        if (!readingRing)
        {
            freeRing();
        }
        if (key != null)
        {
            key.cancel();
        }
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            LOG.debug("close failed", ex);
        }
        server.ended(this, cutOff);
    }

    /** Unmaps the client's rings, and deletes their files if the client did not get to. */
    private void freeRing()
    {
        if (ring != null)
        {
            ring.free();
            ring = null;
            ringView = null;
        }
        if (down != null)
        {
            down.free();
            down = null;
        }
        delete(ringFile);
        ringFile = null;
        delete(downFile);
        downFile = null;
    }

    private static void delete(final Path file)
    {
        if (file != null)
        {
            try
            {
                Files.deleteIfExists(file);
            }
            catch (final IOException ex)
            {
                LOG.debug("cannot delete {}", file, ex);
            }
        }
    }

    /** A socket's events, queued as NOTIFY frames in order with its messages (listeners run inside its poll). */
    private final class Notifications implements RdsNotificationListener
    {
        private final Entry entry;

        Notifications(final Entry entry)
        {
            this.entry = entry;
        }

        @Override
        public void onUncongested(final InetSocketAddress destination)
        {
            queueNotification(entry, Notification.Kind.UNCONGESTED, destination);
        }

        @Override
        public void onPeerUp(final InetAddress peer)
        {
            queueNotification(entry, Notification.Kind.PEER_UP, new InetSocketAddress(peer, 0));
        }

        @Override
        public void onPeerDown(final InetAddress peer)
        {
            queueNotification(entry, Notification.Kind.PEER_DOWN, new InetSocketAddress(peer, 0));
        }
    }
}
