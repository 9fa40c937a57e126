package org.rds4j.core;

import org.agrona.CloseHelper;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.jctools.queues.MpscUnboundedArrayQueue;
import org.rds4j.PeerAllowList;
import org.rds4j.RdsException;
import org.rds4j.RdsPeerListener;
import org.rds4j.RdsResult;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.IdleWaiter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import static org.rds4j.core.DriverProtocol.ADDRESS;
import static org.rds4j.core.DriverProtocol.HEADER;

/**
 * A stack attached to a driver ({@link DriverServer}) instead of running in this process: what
 * {@link RdsStack#open} returns when the configuration names a driver directory. Its sockets ({@link DriverSocket})
 * are sockets of the driver's stack; this process keeps what a call must answer at once: each socket's send-buffer
 * count, its receive queue and options, and a read-only view of the driver's congestion maps.
 * <p>
 * Threads: application threads write frames to the driver under {@link #writeLock}, into the ring the driver made
 * for this process ({@link DriverRing}), waiting for room there, or, a frame longer than the ring takes, on the
 * connection. The driver's frames come in batches through a second ring or, when it is full (the driver waits for
 * no client), on the connection. They are read by a thread blocked in a call (a receive, a select, a reply it waits
 * for) while one waits, else by the reader thread
 * ({@code rds4j-driver-client-<name>}): the {@link Invoker} of an embedded stack, whose duty cycle here reads the
 * ring and the connection and hands their frames to the sockets (replies to the calls waiting for them, messages and
 * events to the receive queues, released bytes to the send buffers), and whose idle wait is in a selector, where the
 * driver's doorbell reaches it. So a message for a thread blocked in {@code receive} wakes that thread only. When the
 * driver's connection ends (it exited or was killed), or its heartbeat ({@link DriverHeartbeat}) stands still for
 * {@code driverTimeout} (it is stopped or hung; the reading thread looks every quarter of that), the stack is marked
 * gone and every waiting call wakes, and then fails with {@link RdsResult#ECONNRESET}, as every later call does.
 */
final class DriverStack implements RdsStack, WatchableSocket.Waiting
{
    private static final Logger LOG = LoggerFactory.getLogger(DriverStack.class);
    private static final int READ_BYTES = 256 << 10;
    /** A writer that finds the ring or the connection full tries again after this, then twice as long each time. */
    private static final long MIN_ROOM_WAIT_NS = TimeUnit.MICROSECONDS.toNanos(1);
    /** ... up to this: a wait for the driver to read a frame longer than its buffer costs a wake-up per 1 ms. */
    private static final long MAX_ROOM_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final AtomicReferenceFieldUpdater<DriverStack, String> GONE =
        AtomicReferenceFieldUpdater.newUpdater(DriverStack.class, String.class, "gone");
    /** A select's action: the connection's one key is all there is, and what a select returns says it is ready. */
    private static final Consumer<SelectionKey> READY = key -> { };

    private final RdsStackConfig config;
    /** {@link #configuration()}. */
    private final RdsStackConfig socketConfig;
    private final Path directory;
    private final SocketChannel channel;
    private final CongestionBoard board;
    /** The reading thread waits in it for the connection's input (and, while attaching, for room for the HELLO). */
    private final Selector selector;
    private final SelectionKey key;
    private final StackCounters counters = new StackCounters();
    private final MessagePool pool = new MessagePool(counters.poolAlloc);
    private final PeerAllowList allowedPeers;
    private final long driverPid;
    private final Thread reader;
    /**
     * Who reads the driver's connection: a thread blocked in a call (receive, select, a reply it waits for) while one
     * waits, else the reader thread ({@link Invoker}, as an embedded stack's duty cycle), so that a message for a
     * thread blocked in {@code receive} wakes that thread only.
     */
    private final Invoker invoker;

    /** Read by the reading thread, and by a writer that waits for room on the connection. */
    private final DriverHeartbeat heartbeat;

    // The thread reading the connection (the invoker's duty cycle).
    private final DriverStallDetector stallDetector;
    /** How often the reading thread looks at the heartbeat: a quarter of the timeout. */
    private final long lookPeriodNs;
    private long nextLookNs;

    // Application threads, under the lock.
    /** Held for a frame's write: a compare-and-set and an ordered store, no fence per frame on release. */
    private final TakeLock writeLock = new TakeLock();
    private final ByteBuffer frame = ByteBuffer.allocateDirect(HEADER + ADDRESS + 64);
    private final UnsafeBuffer frameBuffer = new UnsafeBuffer(frame);
    /** A SEQ frame, before a frame that goes over the connection; or a DOORBELL. */
    private final ByteBuffer control = ByteBuffer.allocateDirect(HEADER + 8);
    private final UnsafeBuffer controlBuffer = new UnsafeBuffer(control);
    private final ByteBuffer[] gather = new ByteBuffer[3];
    /** The client's frames to the driver, in shared memory. */
    private final DriverRing ring;
    /**
     * The driver's frames to the client, read by the reading thread. Never unmapped here: a thread may be reading it
     * as the stack closes, so the collector unmaps it once nothing refers to it.
     */
    private final DriverRing down;
    /** The number of the last frame written (DriverProtocol: frames are run in their order by number). */
    private int frameNumber;
    /** A writer's look at the heartbeat while it waits for room ({@link #awaitRoom}). */
    private final DriverStallDetector writerStallDetector;

    // Application threads and the reading thread.
    /** The sockets by number: replaced whole under {@link #writeLock} (rare), read without a lock. */
    private volatile Int2ObjectHashMap<DriverSocket> sockets = new Int2ObjectHashMap<>();
    private final AtomicInteger nextSocket = new AtomicInteger();
    private final AtomicInteger nextCall = new AtomicInteger();
    private final ConcurrentHashMap<Integer, Call> calls = new ConcurrentHashMap<>();
    /** Sockets closed by the application, whose receive rings the reading thread frees (their one writer). */
    private final MpscUnboundedArrayQueue<DriverSocket> closed = new MpscUnboundedArrayQueue<>(64);
    /** Why the stack is gone (set once, by {@link #lost}); null while attached. */
    private volatile String gone;
    private final PeerEvents peerEvents = new PeerEvents();

    private DriverStack(final RdsStackConfig config, final AgentTurns readerTurns) throws IOException
    {
        this.config = config;
        this.directory = Path.of(config.driverDirectory());
        final long timeoutNs = config.driverTimeout().toNanos();
        this.lookPeriodNs = timeoutNs / 4;
        selector = Selector.open();
        try
        {
            channel = connect(directory);
        }
        catch (final IOException ex)
        {
            selector.close();
            throw ex;
        }
        try
        {
            board = CongestionBoard.open(directory);
            // non-blocking, so that reading can wait for input with a deadline; writers wait for room parked
            channel.configureBlocking(false);
            key = channel.register(selector, 0);
            // the handshake's deadline: a stopped driver accepts the connection, but never answers
            final long deadlineNs = System.nanoTime() + timeoutNs;
            final ByteBuffer hello = ByteBuffer.allocateDirect(HEADER + 16);
            final UnsafeBuffer h = new UnsafeBuffer(hello);
            final int b = DriverProtocol.putHeader(h, 0, HEADER + 16, DriverProtocol.HELLO, 0);
            h.putInt(b, DriverProtocol.VERSION);
            h.putInt(b + 4, 0);
            h.putLong(b + 8, ProcessHandle.current().pid());
            while (hello.hasRemaining())
            {
                if (channel.write(hello) == 0)
                {
                    awaitHandshake(SelectionKey.OP_WRITE, deadlineNs);
                }
            }
            final ByteBuffer welcome = readFrame(ByteBuffer.allocateDirect(READ_BYTES).order(ByteOrder.LITTLE_ENDIAN),
                deadlineNs);
            final UnsafeBuffer w = new UnsafeBuffer(welcome);
            if (w.getByte(DriverProtocol.TYPE_OFFSET) != DriverProtocol.WELCOME ||
                w.getInt(HEADER) != DriverProtocol.VERSION)
            {
                throw new IOException("the driver in " + directory + " speaks another protocol");
            }
            driverPid = w.getLong(HEADER + 8);
            final int nameLength = w.getInt(HEADER + 4);
            final int downNameLength = w.getInt(HEADER + 28);
            final int fixed = HEADER + DriverProtocol.WELCOME_FIXED;
            final int largestBuffer = w.getInt(HEADER + 24);
            if (nameLength <= 0 || downNameLength <= 0 || nameLength > w.getInt(0) - fixed - downNameLength ||
                largestBuffer <= 0)
            {
                throw new IOException("the driver in " + directory + " sent a bad WELCOME");
            }
            socketConfig = boundBuffers(config, largestBuffer);
            ring = attachRing(w, fixed, nameLength, DriverRing.CAPACITY);
            down = attachRing(w, fixed + nameLength, downNameLength, DriverRing.DOWN_CAPACITY);
            final byte[] allowed = new byte[w.getInt(0) - fixed - nameLength - downNameLength];
            w.getBytes(fixed + nameLength + downNameLength, allowed);
            final String entries = new String(allowed, StandardCharsets.UTF_8);
            allowedPeers = entries.isEmpty() ? PeerAllowList.ALL : PeerAllowList.of(entries.split(","));
            welcome.limit(welcome.position()).position(w.getInt(0));
            welcome.compact(); // what came after the WELCOME is read next
            heartbeat = DriverHeartbeat.open(directory);
            final long nowNs = System.nanoTime();
            stallDetector = new DriverStallDetector(timeoutNs, heartbeat.millis(), nowNs);
            writerStallDetector = new DriverStallDetector(timeoutNs, heartbeat.millis(), nowNs);
            nextLookNs = nowNs + lookPeriodNs;
            key.interestOps(SelectionKey.OP_READ);
            final Reading reading = new Reading(welcome);
            final WakeSignal wakeSignal = new WakeSignal(SystemNanoClock.INSTANCE);
            wakeSignal.idleWaiter(reading);
            wakeSignal.idleBounds(reading);
            // yields before it waits in the selector (until input, a wake or the next heartbeat look), as an embedded
            // stack's backoff does: a reply or the next batch that comes within them is read with no doorbell, no
            // system call of the driver's and no wake-up (the 64 B round trip through a driver: p50 32 -> 25 us)
            final ParkingBackoffIdleStrategy idle =
                new ParkingBackoffIdleStrategy(ParkingBackoffIdleStrategy.YIELDS, lookPeriodNs, lookPeriodNs, wakeSignal);
            invoker = new Invoker(reading, idle, wakeSignal,
                ex -> LOG.error("{}: unexpected error reading the driver's frames", config.name(), ex), true, () -> { },
                readerTurns, null);
            reader = new Thread(invoker::runAgent, "rds4j-driver-client-" + config.name());
            reader.setDaemon(true);
            wakeSignal.agentThread(reader);
            reader.start();
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            selector.close();
            throw ex;
        }
        LOG.debug("{} attached to the driver in {} (pid {})", config.name(), directory, driverPid);
    }

    /** Maps the ring whose file the WELCOME names at {@code offset}, and deletes the name. */
    private DriverRing attachRing(final UnsafeBuffer welcome, final int offset, final int length, final int capacity)
        throws IOException
    {
        final byte[] name = new byte[length];
        welcome.getBytes(offset, name);
        final Path file = directory.resolve(new String(name, StandardCharsets.UTF_8));
        final DriverRing attached = DriverRing.attach(file, capacity);
        Files.delete(file); // mapped: nothing is left behind when either process dies
        return attached;
    }

    private static SocketChannel connect(final Path directory) throws IOException
    {
        final SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try
        {
            channel.connect(UnixDomainSocketAddress.of(directory.resolve(DriverProtocol.SOCKET_FILE)));
            return channel;
        }
        catch (final IOException ex)
        {
            channel.close();
            throw new IOException("no driver runs in " + directory + " (" + ex.getMessage() + "): start one with " +
                "rds driver --dir " + directory, ex);
        }
    }

    /** Reads one whole frame into {@code buffer} during the handshake; returns the buffer, frame at 0. */
    private ByteBuffer readFrame(final ByteBuffer buffer, final long deadlineNs) throws IOException
    {
        while (buffer.position() < 4 || buffer.position() < buffer.getInt(0))
        {
            if (buffer.position() >= 4 && (buffer.getInt(0) < HEADER || buffer.getInt(0) > buffer.capacity()))
            {
                throw new IOException("bad frame from the driver");
            }
            final int read = channel.read(buffer);
            if (read < 0)
            {
                throw new IOException("the driver closed the connection");
            }
            if (read == 0)
            {
                awaitHandshake(SelectionKey.OP_READ, deadlineNs);
            }
        }
        return buffer;
    }

    /** During the handshake: waits until the connection is ready for {@code ops}; fails past the deadline. */
    private void awaitHandshake(final int ops, final long deadlineNs) throws IOException
    {
        key.interestOps(ops);
        while (selector.select(READY, timeoutMillis(deadlineNs - System.nanoTime())) == 0)
        {
            if (System.nanoTime() - deadlineNs >= 0)
            {
                throw new IOException("the driver in " + directory + " did not answer within " +
                    config.driverTimeout().toMillis() + " ms: stopped or hung");
            }
        }
    }

    /** @return a wait of {@code ns} in a selector's whole milliseconds, rounded up: 0 would be no deadline. */
    private static long timeoutMillis(final long ns)
    {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(ns + 999_999));
    }

    /**
     * Attaches to the driver the configuration names.
     *
     * @param config the configuration: its {@code driverDirectory}, name and socket defaults.
     * @return the stack.
     * @throws UncheckedIOException if no driver runs there, or it speaks another protocol.
     */
    static DriverStack open(final RdsStackConfig config)
    {
        return open(config, new AgentTurns());
    }

    /**
     * @param config      as {@link #open(RdsStackConfig)}.
     * @param readerTurns when the reader thread stands by for the application's blocking calls (tests: long
     *                    periods).
     * @return the stack.
     */
    static DriverStack open(final RdsStackConfig config, final AgentTurns readerTurns)
    {
        try
        {
            return new DriverStack(config, readerTurns);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex.getMessage(), ex);
        }
    }

    /**
     * @return the configuration the sockets take their defaults from: this process's, with the buffers bounded by
     *         the driver's {@code maxSocketBufferBytes} as well, since the driver's sockets are.
     */
    RdsStackConfig configuration()
    {
        return socketConfig;
    }

    private static RdsStackConfig boundBuffers(final RdsStackConfig config, final int driverLargest)
    {
        final int largest = Math.min(config.maxSocketBufferBytes(), driverLargest);
        return largest == config.maxSocketBufferBytes() ? config : config.toBuilder()
            .maxSocketBufferBytes(largest)
            .sendBufferBytes(Math.min(config.sendBufferBytes(), largest))
            .receiveBufferBytes(Math.min(config.receiveBufferBytes(), largest))
            .build();
    }

    PeerAllowList allowedPeers()
    {
        return allowedPeers;
    }

    CongestionBoard board()
    {
        return board;
    }

    StackCounters stackCounters()
    {
        return counters;
    }

    MessagePool pool()
    {
        return pool;
    }

    // ---------------------------------------------------------------- the stack

    @Override
    public RdsSocket openSocket() throws IOException
    {
        ensureAttached();
        final int id = nextSocket.incrementAndGet();
        final DriverSocket socket = new DriverSocket(this, id);
        writeLock.lock();
        try
        {
            final Int2ObjectHashMap<DriverSocket> more = new Int2ObjectHashMap<>(sockets);
            more.put(id, socket);
            sockets = more;
            final int b = DriverProtocol.putHeader(frameBuffer, 0, HEADER + 8, DriverProtocol.OPEN, id);
            frameBuffer.putInt(b, socket.sendBufferBytes());
            frameBuffer.putInt(b + 4, socket.receiveBufferBytes());
            writeFrame(HEADER + 8);
        }
        finally
        {
            writeLock.unlock();
        }
        return socket;
    }

    @Override
    public RdsSelector openSelector() throws IOException
    {
        ensureAttached();
        return new SelectorImpl(this);
    }

    // ---------------------------------------------------------------- how calls wait: reading, or woken by who reads

    @Override
    public String name()
    {
        return config.name();
    }

    /** A call begins to wait: its thread reads the connection while it waits, or follows the thread that does. */
    @Override
    public void beginWait()
    {
        invoker.beginCall();
    }

    @Override
    public void endWait()
    {
        invoker.endCall();
    }

    /**
     * One step of a blocked call's wait: reads the driver's connection (waiting in the selector if nothing came) or,
     * if another thread reads it, parks until woken ({@link Invoker#await}).
     *
     * @param timeoutNs the call's timeout, 0 for none.
     * @return 0 to test again, or {@link RdsResult#ETIMEDOUT} / {@link RdsResult#EINTR}.
     */
    @Override
    public int await(final long timeoutNs, final long deadlineNs)
    {
        return invoker.await(timeoutNs, deadlineNs);
    }

    /**
     * Parks a wait for room until woken (the connection's reader hands the released bytes over), its deadline or an
     * interrupt.
     */
    private int park(final long timeoutNs, final long deadlineNs)
    {
        if (Thread.currentThread().isInterrupted())
        {
            return RdsResult.EINTR;
        }
        if (timeoutNs == 0)
        {
            LockSupport.park(this);
            return 0;
        }
        final long left = deadlineNs - System.nanoTime();
        if (left <= 0)
        {
            return RdsResult.ETIMEDOUT;
        }
        LockSupport.parkNanos(this, left);
        return 0;
    }

    /** A room wait does not read the connection: the reader thread must, even if it stands by for a call's return. */
    @Override
    public void beginRoomWait()
    {
        invoker.handOver();
    }

    @Override
    public void endRoomWait()
    {
    }

    /** Parks: the driver's agent frees room, and the connection's reader wakes the waiting sender. */
    @Override
    public int awaitRoom(final long timeoutNs, final long deadlineNs)
    {
        return park(timeoutNs, deadlineNs);
    }

    /** The reader thread may stand by for a thread's blocking calls, as an embedded stack's agent does. */
    @Override
    public void foundNothing()
    {
        invoker.foundNothing();
    }

    @Override
    public boolean isStackClosed()
    {
        return gone != null;
    }

    /**
     * Wakes the thread that reads the connection if it waits in the selector, where an unpark does not reach it (a
     * select's {@code wakeup}, a registration changed, a socket closed by another thread); if it is about to wait,
     * its wait returns at once (a selector's wake-up is kept for its next select), so none is lost.
     */
    @Override
    public void wakeWaiting()
    {
        selector.wakeup();
    }

    /** The driver's stack's peer events, which it sends once this stack listens ({@code PEERS}). */
    @Override
    public RdsStack setPeerListener(final Executor executor, final RdsPeerListener listener)
    {
        if (listener != null)
        {
            Objects.requireNonNull(executor, "executor");
        }
        peerEvents.listener(executor, listener);
        writeLock.lock();
        try
        {
            final int b = DriverProtocol.putHeader(frameBuffer, 0, HEADER + 8, DriverProtocol.PEERS, 0);
            frameBuffer.putInt(b, listener == null ? 0 : 1);
            frameBuffer.putInt(b + 4, 0);
            writeFrame(HEADER + 8);
        }
        catch (final RdsException ex)
        {
            throw new UncheckedIOException(ex);
        }
        finally
        {
            writeLock.unlock();
        }
        return this;
    }

    @Override
    public RdsStackConfig config()
    {
        return config;
    }

    /** @return the driver's counters (its stack's, and its clients'), plus this process's own counts of the same names. */
    @Override
    public Map<String, Long> counters()
    {
        final Map<String, Long> all = new LinkedHashMap<>();
        for (final String line : query(DriverProtocol.QUERY_COUNTERS))
        {
            final String[] fields = line.split(" ");
            all.put(fields[0], Long.parseLong(fields[1]));
        }
        counters.snapshot().forEach((name, value) -> all.merge(name, value, Long::sum));
        return all;
    }

    @Override
    public List<ConnectionInfo> connections()
    {
        final List<ConnectionInfo> connections = new ArrayList<>();
        for (final String line : query(DriverProtocol.QUERY_CONNECTIONS))
        {
            final String[] f = line.split(" ");
            try
            {
                connections.add(new ConnectionInfo(InetAddress.getByName(f[0]), InetAddress.getByName(f[1]), f[2],
                    f[3], Long.parseLong(f[4]), Long.parseLong(f[5]), Integer.parseInt(f[6])));
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException("the driver sent a bad connection line: " + line, ex);
            }
        }
        return connections;
    }

    List<String> query(final int what)
    {
        try
        {
            final Call call = newCall();
            writeLock.lock();
            try
            {
                final int b = DriverProtocol.putHeader(frameBuffer, 0, HEADER + 8, DriverProtocol.QUERY, 0);
                frameBuffer.putInt(b, call.id);
                frameBuffer.putInt(b + 4, what);
                writeFrame(HEADER + 8);
            }
            finally
            {
                writeLock.unlock();
            }
            await(call);
            return call.text.isEmpty() ? List.of() : Arrays.asList(call.text.split("\n"));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** The driver's stack runs its own duty cycle: there is nothing to invoke here. */
    @Override
    public int invoke()
    {
        return 0;
    }

    /** Closes this process's sockets and its connection to the driver; the driver goes on serving others. */
    @Override
    public void close()
    {
        for (final DriverSocket socket : sockets.values().toArray(new DriverSocket[0]))
        {
            socket.closeNow();
        }
        lost("the stack is closed");
        try
        {
            channel.close();
            reader.join(10_000);
            writeLock.lock(); // no writer is still in the ring
            try
            {
                ring.free();
            }
            finally
            {
                writeLock.unlock();
            }
        }
        catch (final IOException ex)
        {
            LOG.debug("close failed", ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString()
    {
        return "DriverStack[" + config.name() + " -> " + directory + "]";
    }

    // ---------------------------------------------------------------- frames to the driver

    /** A call waiting for the driver's reply. */
    static final class Call
    {
        final int id;
        final Thread caller = Thread.currentThread();
        volatile boolean done;
        int result;
        long value;
        String text;

        Call(final int id)
        {
            this.id = id;
        }
    }

    Call newCall()
    {
        final Call call = new Call(nextCall.incrementAndGet());
        calls.put(call.id, call);
        return call;
    }

    /** Waits for a call's reply; fails with {@link RdsResult#ECONNRESET} if the driver goes meanwhile. */
    void await(final Call call) throws RdsException
    {
        boolean interrupted = false;
        invoker.beginCall();
        try
        {
            while (!call.done)
            {
                ensureAttached();
                if (invoker.await(0, 0) == RdsResult.EINTR)
                {
                    // a call is not interruptible, and its thread may be the one to read the reply: kept for later
                    interrupted |= Thread.interrupted();
                }
            }
        }
        finally
        {
            invoker.endCall();
            calls.remove(call.id);
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
        if (call.result == RdsResult.ECONNRESET && gone != null)
        {
            throw goneException();
        }
    }

    /** Under {@link #writeLock}: writes the frame of {@code length} bytes the caller built in {@link #frameBuffer}. */
    private void writeFrame(final int length) throws RdsException
    {
        submit(length, null);
    }

    /**
     * Under {@link #writeLock}: gives the frame whose first {@code headLength} bytes are in {@link #frameBuffer} and
     * whose rest is {@code payload} (or null; its bytes are not consumed) the next number, and writes it into the
     * ring, ringing the doorbell if the driver sleeps, once the ring has room for it; or, if it is longer than the
     * ring takes ({@link DriverRing#maxFrame}), on the connection after a SEQ frame. A failed write means the driver
     * is gone.
     */
    private void submit(final int headLength, final ByteBuffer payload) throws RdsException
    {
        ensureAttached(); // under the lock: a closed stack's ring is unmapped
        frameNumber = DriverProtocol.nextFrameNumber(frameNumber);
        if (headLength + (payload == null ? 0 : payload.remaining()) <= ring.maxFrame())
        {
            offerToRing(headLength, payload);
            return;
        }
        final int b = DriverProtocol.putHeader(controlBuffer, 0, HEADER + 8, DriverProtocol.SEQ, 0);
        controlBuffer.putInt(b, frameNumber);
        controlBuffer.putInt(b + 4, 0);
        control.clear();
        frame.clear().limit(headLength);
        gather[0] = control;
        gather[1] = frame;
        gather[2] = payload;
        final int start = payload == null ? 0 : payload.position();
        try
        {
            write(payload == null ? 2 : 3);
        }
        finally
        {
            if (payload != null)
            {
                payload.position(start); // as after the ring: the caller consumes it
            }
        }
    }

    /**
     * Under {@link #writeLock}: writes frame {@link #frameNumber} into the ring, waiting for room as for room on the
     * connection ({@link #awaitRoom}): the ring holds records, so the driver reads it (one of them rang if it slept;
     * a driver that stops reading a client whose send its stack cannot take yet reads again once it can). Waiting,
     * not taking the connection instead: there a frame costs both sides a system call, and a writer whose send
     * buffer admits more than the ring holds would stream over it at that pace (1 KiB through a driver with a 4 MiB
     * {@code SO_SNDBUF} was 2.5 times slower so).
     */
    private void offerToRing(final int headLength, final ByteBuffer payload) throws RdsException
    {
        int waits = 0;
        boolean interrupted = false;
        try
        {
            while (!ring.offer(frameNumber, frameBuffer, headLength, payload))
            {
                awaitRoom(waits++);
                interrupted |= Thread.interrupted(); // the frame has its number: kept for later
            }
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
        if (ring.takeDoorbell())
        {
            DriverProtocol.putHeader(controlBuffer, 0, HEADER, DriverProtocol.DOORBELL, 0);
            control.clear().limit(HEADER);
            gather[0] = control;
            write(1);
        }
    }

    /** Under {@link #writeLock}: writes the first {@code count} buffers of {@link #gather} whole to the driver. */
    private void write(final int count) throws RdsException
    {
        long left = 0;
        for (int i = 0; i < count; i++)
        {
            left += gather[i].remaining();
        }
        int waits = 0;
        boolean interrupted = false;
        try
        {
            while (left > 0)
            {
                final long written = channel.write(gather, 0, count);
                left -= written;
                if (written > 0)
                {
                    waits = 0;
                }
                else
                {
                    awaitRoom(waits++);
                    interrupted |= Thread.interrupted(); // a frame is never left half written: kept for later
                }
            }
        }
        catch (final RdsException ex)
        {
            throw ex;
        }
        catch (final IOException ex)
        {
            lost("cannot write to the driver: " + ex.getMessage());
            throw goneException();
        }
        finally
        {
            gather[2] = null;
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Under {@link #writeLock}: the ring or the connection took nothing (the driver has not yet read what it was
     * sent). Parks a little, twice as long each time up to {@link #MAX_ROOM_WAIT_NS}, for the caller to try again.
     * The reading thread takes no part: it may itself be waiting for this lock (a push handler or a listener that
     * sends, run on it by a caller-runs executor), so this wait also lets a driver go whose heartbeat stands still.
     *
     * @param waits the waits since the ring or the connection last took bytes.
     * @throws RdsException {@link RdsResult#ECONNRESET} if the stack is gone, or goes now.
     */
    private void awaitRoom(final int waits) throws RdsException
    {
        ensureAttached();
        final long nowNs = System.nanoTime();
        if (writerStallDetector.hasStopped(heartbeat.millis(), System.currentTimeMillis(), nowNs))
        {
            letGo(writerStallDetector.silentNs(nowNs));
            throw goneException();
        }
        LockSupport.parkNanos(this, Math.min(MAX_ROOM_WAIT_NS, MIN_ROOM_WAIT_NS << Math.min(waits, 20)));
    }

    /** A socket's frame with two ints and an address (BIND, CANCEL, CONG_WAIT), or with no body ({@code address} null). */
    void writeSocketFrame(final byte type, final int socket, final int call, final int word,
        final InetSocketAddress address) throws RdsException
    {
        writeLock.lock();
        try
        {
            final int length = address == null ? HEADER : HEADER + 8 + ADDRESS;
            final int b = DriverProtocol.putHeader(frameBuffer, 0, length, type, socket);
            if (address != null)
            {
                frameBuffer.putInt(b, call);
                frameBuffer.putInt(b + 4, word);
                DriverProtocol.putAddress(frameBuffer, b + 8, address);
            }
            writeFrame(length);
        }
        finally
        {
            writeLock.unlock();
        }
    }

    /** An OPTION frame. */
    void writeOption(final int socket, final int call, final int option, final long value) throws RdsException
    {
        writeLock.lock();
        try
        {
            final int b = DriverProtocol.putHeader(frameBuffer, 0, HEADER + 16, DriverProtocol.OPTION, socket);
            frameBuffer.putInt(b, call);
            frameBuffer.putInt(b + 4, option);
            frameBuffer.putLong(b + 8, value);
            writeFrame(HEADER + 16);
        }
        finally
        {
            writeLock.unlock();
        }
    }

    /** A CONSUMED: the socket's application took {@code bytes} more. */
    void writeConsumed(final int socket, final long bytes) throws RdsException
    {
        writeLock.lock();
        try
        {
            DriverProtocol.putHeader(frameBuffer, 0, HEADER + 8, DriverProtocol.CONSUMED, socket);
            frameBuffer.putLong(HEADER, bytes);
            writeFrame(HEADER + 8);
        }
        finally
        {
            writeLock.unlock();
        }
    }

    /** A SEND: header and address, then the payload, which is consumed. */
    void writeSend(final int socket, final InetSocketAddress destination, final ByteBuffer payload)
        throws RdsException
    {
        writeLock.lock();
        try
        {
            final int length = HEADER + ADDRESS + payload.remaining();
            final int b = DriverProtocol.putHeader(frameBuffer, 0, length, DriverProtocol.SEND, socket);
            DriverProtocol.putAddress(frameBuffer, b, destination);
            submit(HEADER + ADDRESS, payload);
            payload.position(payload.limit());
        }
        finally
        {
            writeLock.unlock();
        }
    }

    void forget(final DriverSocket socket)
    {
        writeLock.lock();
        try
        {
            final Int2ObjectHashMap<DriverSocket> fewer = new Int2ObjectHashMap<>(sockets);
            fewer.remove(socket.id());
            sockets = fewer;
        }
        finally
        {
            writeLock.unlock();
        }
        closed.offer(socket);
    }

    /** @throws RdsException {@link RdsResult#ECONNRESET} if the driver is gone or the stack closed. */
    void ensureAttached() throws RdsException
    {
        if (gone != null)
        {
            throw goneException();
        }
    }

    boolean isAttached()
    {
        return gone == null;
    }

    RdsException goneException()
    {
        return new RdsException(RdsResult.ECONNRESET, gone);
    }

    // ---------------------------------------------------------------- frames from the driver

    /**
     * Reading the driver's frames, one step per duty cycle of the {@link #invoker}, on whichever thread runs it: takes
     * their batches in order from the ring and the connection, hands the frames to the sockets and calls, wakes their
     * waiting threads, and looks at the driver's heartbeat every {@link #lookPeriodNs}. The connection is read only
     * when the ring holds nothing whose turn it is, so a busy stream makes no system call per read. Idle, the thread
     * yields through its idle strategy's cycles, then waits in the selector ({@link IdleWaiter}) until input, the
     * driver's doorbell, a wake-up or the next look ({@link IdleBounds}).
     */
    private final class Reading implements Agent, IdleWaiter, IdleBounds
    {
        /** The most records (batches) taken from the ring in one go: the woken threads are woken after each go. */
        private static final int RING_BATCH = 16;
        /**
         * The bytes of batches handed on per duty cycle, about: a quarter of a socket's receive ring. Past it the
         * rest stays in the driver's ring for the next cycle, so that a thread that reads for the stack takes its
         * own messages in between; handing on all the ring held (up to 4 MiB) overran the sockets' receive rings,
         * and every message after an overrun waits outside the ring ({@code recv_ring_spill}) until it is taken.
         */
        private final int cycleBytes = config.receiveRingBytes() / 4; // the ring is at least 4 KiB
        private int handedOn;
        private ByteBuffer input;
        private UnsafeBuffer in;
        private final AddressCache addresses = new AddressCache();
        private final ArrayList<DriverSocket> woken = new ArrayList<>();
        /** The socket found last, in the map of the sockets as it was then ({@link #socket}). */
        private Int2ObjectHashMap<DriverSocket> lookedUpIn;
        private DriverSocket lastSocket;
        /** The number of the driver's next batch of frames to hand on. */
        private int nextBatch = 1;
        private final DriverRing.Handler fromRing = this::fromRing;
        private int ranFromRing;
        private IOException ringProblem;
        /** The last wait ended with the connection readable. */
        private boolean readable;
        /** The number of the last batch taken from the connection: the driver's mark names a later one, read. */
        private int fromConnection;

        Reading(final ByteBuffer first)
        {
            input = first;
            in = new UnsafeBuffer(input);
        }

        @Override
        public String roleName()
        {
            return reader.getName();
        }

        @Override
        public int doWork()
        {
            if (gone != null)
            {
                invoker.close(); // nothing more to read: the waiting threads find the stack gone
                return 0;
            }
            try
            {
                final long nowNs = System.nanoTime();
                if (nowNs - nextLookNs >= 0)
                {
                    nextLookNs = nowNs + lookPeriodNs;
                    if (stallDetector.hasStopped(heartbeat.millis(), System.currentTimeMillis(), nowNs))
                    {
                        letGo(stallDetector.silentNs(nowNs));
                        return 0;
                    }
                }
                handedOn = 0;
                int work = runRingFrames();
                if (down.connectionMark() != fromConnection || readable || input.position() > 0)
                {
                    // the driver sent a batch not yet taken over the connection (its bytes may still be on the way),
                    // the selector saw input (a doorbell, read now rather than found by the next wait), or a batch
                    // read before waits in the input, maybe for one the ring just gave: nothing of its turn may be
                    // left there when the thread waits, as a wait looks only at the ring and the connection. Else
                    // the connection holds nothing to read (a doorbell at most): no read, no system call per cycle
                    readable = false;
                    final int read = channel.read(input);
                    if (read < 0)
                    {
                        lost("the driver in " + directory + " (pid " + driverPid + ") closed the connection");
                        return 0;
                    }
                    work += (read > 0 ? 1 : 0) + drain();
                }
                finishDispatch();
                return work;
            }
            catch (final IOException | RuntimeException ex)
            {
                if (gone == null)
                {
                    LOG.warn("{}: lost the driver in {}", config.name(), directory, ex);
                }
                lost("lost the driver in " + directory + ": " + ex);
                return 0;
            }
        }

        /** Hands on the batches of the connection's input and of the ring, in turn, until the next is not here. */
        private int drain() throws IOException
        {
            int frames = 0;
            int now;
            do
            {
                now = runConnectionFrames() + runRingFrames();
                frames += now;
            }
            while (now > 0);
            return frames;
        }

        /** Hands on the ring's batches whose turn it is; returns how many. */
        private int runRingFrames() throws IOException
        {
            ranFromRing = 0;
            down.read(fromRing, RING_BATCH);
            if (ringProblem != null)
            {
                final IOException problem = ringProblem;
                ringProblem = null;
                throw problem;
            }
            return ranFromRing;
        }

        private boolean fromRing(final int number, final UnsafeBuffer buffer, final int index, final int length)
        {
            if (number != nextBatch || handedOn >= cycleBytes)
            {
                return false; // an earlier batch comes over the connection, or this cycle handed on enough
            }
            handedOn += length;
            try
            {
                dispatchBatch(buffer, index, length);
            }
            catch (final IOException ex)
            {
                ringProblem = ex;
                return false;
            }
            nextBatch = DriverProtocol.nextFrameNumber(nextBatch);
            ranFromRing++;
            return true;
        }

        /** Hands on the input's whole batches whose turn it is (each after its SEQ); returns how many. */
        private int runConnectionFrames() throws IOException
        {
            int position = 0;
            int batches = 0;
            final int limit = input.position();
            while (limit - position >= HEADER)
            {
                final int length = in.getInt(position);
                final byte type = in.getByte(position + DriverProtocol.TYPE_OFFSET);
                if (length != HEADER + (type == DriverProtocol.SEQ ? 8 : 0) ||
                    (type != DriverProtocol.SEQ && type != DriverProtocol.DOORBELL))
                {
                    throw new IOException("a frame of type " + type + " and length " + length +
                        " where the driver's SEQ or DOORBELL comes");
                }
                if (type == DriverProtocol.DOORBELL)
                {
                    position += length; // it woke the reading thread: that was all
                    continue;
                }
                if (limit - position < length || in.getInt(position + HEADER) != nextBatch)
                {
                    break; // not all here, or an earlier batch is in the ring
                }
                final int at = position + length;
                final int batchLength = batchLength(position);
                if (limit - at < batchLength)
                {
                    break;
                }
                dispatchBatch(in, at, batchLength);
                fromConnection = nextBatch;
                nextBatch = DriverProtocol.nextFrameNumber(nextBatch);
                position = at + batchLength;
                batches++;
            }
            input.limit(limit).position(position);
            input.compact();
            growForNextBatch();
            return batches;
        }

        /** @return the length of the batch the SEQ at {@code position} announces. */
        private int batchLength(final int position) throws IOException
        {
            final int length = in.getInt(position + HEADER + 4);
            if (length < HEADER || length > DriverProtocol.MAX_FRAME)
            {
                throw new IOException("bad batch length " + length + " from the driver");
            }
            return length;
        }

        /**
         * @return the socket {@code id}, or null if there is none (closed here meanwhile): the map's lookup was
         *         5-6 % of this thread in a 64 B stream, whose frames name the same socket (benchmarks.md,
         *         2026-12-04). The map is replaced whole when a socket opens or closes, which ends what was found in
         *         the one before.
         */
        private DriverSocket socket(final int id)
        {
            final Int2ObjectHashMap<DriverSocket> map = sockets;
            final DriverSocket last = lastSocket;
            if (map == lookedUpIn && last != null && last.id() == id)
            {
                return last;
            }
            final DriverSocket socket = map.get(id);
            lookedUpIn = map;
            lastSocket = socket;
            return socket;
        }

        /** Hands on the whole frames of a batch, which fill it exactly. */
        private void dispatchBatch(final UnsafeBuffer buffer, final int offset, final int length) throws IOException
        {
            final int end = offset + length;
            int position = offset;
            while (position < end)
            {
                final int frameLength = buffer.getInt(position);
                if (frameLength < HEADER || frameLength > end - position)
                {
                    throw new IOException("bad frame length " + frameLength + " in a batch from the driver");
                }
                dispatch(buffer, position, frameLength, this);
                position += frameLength;
            }
        }

        /** Grows the input if it is full, or shorter than its first SEQ and the batch after it. */
        private void growForNextBatch() throws IOException
        {
            final int held = input.position();
            final int need = held >= HEADER + 8 && in.getByte(DriverProtocol.TYPE_OFFSET) == DriverProtocol.SEQ ?
                HEADER + 8 + batchLength(0) : 0;
            if (input.remaining() == 0 || need > input.capacity())
            {
                final ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(need, input.capacity() * 2));
                input.flip();
                bigger.put(input);
                input = bigger;
                in = new UnsafeBuffer(input);
            }
        }

        /** Wakes the threads of the sockets frames went to, and frees the receive queues of sockets closed. */
        private void finishDispatch()
        {
            for (int i = 0, n = woken.size(); i < n; i++)
            {
                final DriverSocket socket = woken.get(i);
                socket.wakePending = false;
                socket.wakeReceivers();
            }
            woken.clear();
            DriverSocket done;
            while ((done = closed.poll()) != null)
            {
                done.released();
            }
        }

        @Override
        public void onClose()
        {
            // the channel's descriptor is closed once no selector holds it: a driver then sees this client's end
            CloseHelper.quietClose(selector);
        }

        @Override
        public void await(final long timeoutNs)
        {
            // asleep first, then a last look: a frame the driver writes after the look finds the word set, and rings
            down.sleeping(true);
            try
            {
                if (down.nextNumber() != nextBatch)
                {
                    readable = selector.select(READY, timeoutMillis(timeoutNs)) > 0;
                }
            }
            catch (final IOException | ClosedSelectorException ex)
            {
                lost("lost the driver in " + directory + ": " + ex);
            }
            finally
            {
                down.sleeping(false);
            }
        }

        @Override
        public void wake()
        {
            selector.wakeup();
        }

        /** Sockets closed meanwhile, whose receive queues a duty cycle frees; or the stack gone. */
        @Override
        public boolean hasQueuedInput()
        {
            return gone != null || !closed.isEmpty();
        }

        @Override
        public long idleDeadlineNs(final long nowNs)
        {
            return nextLookNs;
        }
    }

    /**
     * The driver's heartbeat stood still for the timeout: the stack is gone, and the connection closed, so that the
     * driver, if it resumes, frees this process's ports.
     */
    private void letGo(final long silentNs)
    {
        if (lost("the driver in " + directory + " (pid " + driverPid + ") has not run for " +
            TimeUnit.NANOSECONDS.toMillis(silentNs) + " ms: stopped or hung"))
        {
            LOG.warn("{}: {}; closing the connection", config.name(), gone);
        }
        CloseHelper.quietClose(channel);
    }

    private void dispatch(final UnsafeBuffer in, final int offset, final int length, final Reading reading)
        throws IOException
    {
        final AddressCache addresses = reading.addresses;
        final byte type = in.getByte(offset + DriverProtocol.TYPE_OFFSET);
        final int body = offset + HEADER;
        if (type == DriverProtocol.PEER)
        {
            peerEvents.offer(in.getInt(body) != 0, addresses.get(in, body + 8).getAddress(),
                addresses.get(in, body + 8 + ADDRESS).getAddress());
            return;
        }
        if (type == DriverProtocol.REPLY)
        {
            final Call call = calls.get(in.getInt(body));
            if (call != null)
            {
                call.result = in.getInt(body + 4);
                call.value = in.getLong(body + 8);
                final byte[] text = new byte[length - HEADER - 16];
                in.getBytes(body + 16, text);
                call.text = new String(text, StandardCharsets.UTF_8);
                call.done = true;
                LockSupport.unpark(call.caller);
            }
            return;
        }
        final DriverSocket socket = reading.socket(in.getInt(offset + DriverProtocol.SOCKET_OFFSET));
        if (socket == null)
        {
            return; // closed here meanwhile
        }
        switch (type)
        {
            case DriverProtocol.DELIVER:
                if (socket.deliver(addresses.get(in, body), in, body + ADDRESS, length - HEADER - ADDRESS) &&
                    !socket.wakePending)
                {
                    socket.wakePending = true;
                    reading.woken.add(socket);
                }
                break;
            case DriverProtocol.NOTIFY:
                queueNotification(socket,
                    new Notification(Notification.Kind.values()[in.getInt(body)], addresses.get(in, body + 8)));
                break;
            case DriverProtocol.RELEASED:
                socket.onReleased(in.getLong(body));
                break;
            default:
                throw new IOException("unknown frame type " + type + " from the driver");
        }
    }

    /** The reader: queues the driver's event for the socket's listener. */
    private static void queueNotification(final DriverSocket socket, final Notification notification)
    {
        if (notification.kind() == Notification.Kind.UNCONGESTED)
        {
            socket.congestion().notified(notification.address()); // before the application can see it
        }
        socket.notifyListener(notification);
    }

    /**
     * The driver is gone, or the stack closed: every call waiting or to come fails.
     *
     * @return false if it was already (nothing done).
     */
    private boolean lost(final String why)
    {
        if (!GONE.compareAndSet(this, null, why)) // the reader and a writer waiting for room may both find it
        {
            return false;
        }
        for (final Call call : calls.values())
        {
            call.result = RdsResult.ECONNRESET;
            call.done = true;
            LockSupport.unpark(call.caller);
        }
        for (final DriverSocket socket : sockets.values())
        {
            socket.onDriverLost();
        }
        selector.wakeup(); // a thread waiting in the selector sees the stack gone
        return true;
    }
}
