package org.rds4j.core;

import org.agrona.CloseHelper;
import org.jctools.queues.MpscUnboundedArrayQueue;
import org.rds4j.RdsPeerListener;
import org.rds4j.RdsStackConfig;
import org.rds4j.Threading;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A driver: one stack per host that processes on it share, as they share the kernel's. It runs a {@link CoreStack}
 * and serves client processes over a UNIX domain socket in its directory ({@link DriverProtocol}); each client
 * socket is a socket of this stack, so ports, connections (one per node pair) and congestion are the driver's.
 * <p>
 * Files in the directory, its user's only (or its group's too): {@code driver.lock} (held while the driver runs, so
 * that a second driver in the directory fails and a dead one's files are replaced), {@code driver.sock} (where
 * clients connect), {@code congestion} ({@link CongestionBoard}: the stack's congestion maps, which clients read
 * to refuse a send to a congested port at once), {@code heartbeat} ({@link DriverHeartbeat}: when the stack's agent
 * last ran while the conductor ran too, which clients watch to let a stopped or hung driver go), and for a moment
 * per client its ring ({@link DriverRing}), whose name the client deletes once it has mapped it.
 * <p>
 * Threads: the stack's own, and one conductor ({@code rds4j-driver-<name>}) that waits in a NIO selector on the
 * listening socket and the clients' connections, runs their frames (from their rings and connections) against the
 * stack's sockets and writes what those sockets deliver back to the clients. It reads the rings again as long as a
 * read finds frames to run, and otherwise sleeps in the selector: the stack wakes it through each socket's watcher
 * ({@link #signal}), a client through its ring's doorbell. It never spins. While it sleeps the stack's agent runs
 * the clients' sends into empty send buffers from their rings ({@link #agentWork}), so that a request is written
 * in the duty cycle that read it instead of waking the conductor first; the rest it leaves to the conductor. A
 * client whose connection ends (it exited or was killed) is noticed at once: its sockets are closed, so their ports
 * are free and what they had queued is dropped.
 */
public final class DriverServer implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(DriverServer.class);
    private static final String LOCK_FILE = "driver.lock";

    private final Path directory;
    private final boolean groupAccess;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final CongestionBoard board;
    private final DriverHeartbeat heartbeat;
    private final CoreStack stack;
    private final ServerSocketChannel listener;
    private final Selector selector;
    private final Thread conductor;
    private final long startedMillis = System.currentTimeMillis();

    // Any thread (the stack's watchers, its peer listener) to the conductor.
    private final MpscUnboundedArrayQueue<DriverSession.Entry> signalled = new MpscUnboundedArrayQueue<>(256);
    private final MpscUnboundedArrayQueue<Runnable> tasks = new MpscUnboundedArrayQueue<>(64);
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    private final Consumer<SelectionKey> onReady = this::onReady;
    /** The conductor will look at its queues and the rings again before it sleeps: nobody need wake it. */
    private volatile boolean conductorAwake = true;
    private volatile boolean running = true;
    private final CountDownLatch stopped = new CountDownLatch(1);
    /** The conductor's turns, which the agent's heartbeat looks at. */
    private final ConductorProgress progress = new ConductorProgress();
    /**
     * The stack's agent runs the clients' sends from their rings in its duty cycles ({@link #agentWork}) and has not
     * stopped since: a conductor going to sleep need not arm the rings' doorbells (the agent arms them as it stops).
     */
    private volatile boolean agentWatching;
    /**
     * The agent's last look at the rings found a client streaming (a full batch of its frames): a conductor going to
     * sleep then arms the doorbells, so that the client's next frames wake it at once and the two threads share the
     * work. Otherwise it leaves the rings to the agent, whose next cycle finds a request. Whether the agent's last
     * cycle had any work does not tell the two apart: a ping-pong between two clients of one driver keeps it busy,
     * and a conductor that armed the doorbells then was rung by most requests (0.6 wake-ups per round trip).
     */
    private volatile boolean clientStreams;
    /** The sessions, for the agent: copied by the conductor when one begins or ends. */
    private volatile DriverSession[] agentSessions = new DriverSession[0];
    private final AgentExtension agentWork = new AgentExtension()
    {
        @Override
        public int doWork()
        {
            if (!agentWatching)
            {
                agentWatching = true;
            }
            if (conductorAwake)
            {
                // it reads the rings itself, in parallel with this thread's transmitting, but leaves the sends
                int ran = 0;
                for (final DriverSession session : agentSessions)
                {
                    final int now = session.runLeftSends();
                    if (now < 0)
                    {
                        // a frame on the connection waited for the send run here, and the conductor seen awake may
                        // have gone to sleep since its last look (a lost wake-up: a test's frame waited until its end)
                        wakeConductor();
                    }
                    ran += Math.max(now, 0);
                }
                return ran;
            }
            int ran = 0;
            boolean streams = false;
            for (final DriverSession session : agentSessions)
            {
                final int now = session.runSends(false);
                // a full batch of frames other than sends: a client streams them, and the conductor runs its frames
                // while this thread transmits (sends the agent runs itself, at most a batch of them per cycle)
                final boolean others = now > 0 && session.streamsOtherFrames();
                streams |= others;
                if (now < 0 || others)
                {
                    wakeConductor();
                }
                ran += Math.max(now, 0);
            }
            if (clientStreams != streams)
            {
                clientStreams = streams;
            }
            return ran;
        }

        @Override
        public void stopping()
        {
            if (!agentWatching)
            {
                return; // the last stop armed the doorbells or woke the conductor, and the agent has not looked since
            }
            agentWatching = false;
            // the store above before this load, as the conductor stores conductorAwake before it loads agentWatching:
            // one of the two sees the other stopped, and arms
            if (conductorAwake)
            {
                return;
            }
            for (final DriverSession session : agentSessions)
            {
                if (!session.armDoorbell())
                {
                    wakeConductor(); // it reads the rings, and arms them before it sleeps
                    return;
                }
            }
        }
    };

    // Conductor only.
    private final List<DriverSession> sessions = new ArrayList<>();
    private long ringNumber;
    /**
     * A session queued a client's send to the stack's agent. The conductor wakes the agent once per read of the rings
     * and once at the end of each turn of its loop (for the frames it ran from the connections), not per send: at 64 B
     * one-way through drivers, a wake per send cost about 3 % of the rate (alternated pairs, benchmarks.md).
     */
    boolean sendsQueued;

    // Counters: the conductor writes, any thread reads.
    final AtomicLong clientsAttached = new AtomicLong();
    final AtomicLong clientsGone = new AtomicLong();
    final AtomicLong clientsCutOff = new AtomicLong();
    final AtomicLong droppedSendBytes = new AtomicLong();
    /** Clients' sends run by the stack's agent (from the rings) and by the conductor: one writer each. */
    final AtomicLong sendsByAgent = new AtomicLong();
    final AtomicLong sendsByConductor = new AtomicLong();
    /** Messages the agent wrote for clients past their sockets' receive queues (one writer). */
    final AtomicLong deliveredPast = new AtomicLong();
    /** Clients' numbered frames that came on their connections, too long for their rings (either thread). */
    final AtomicLong framesOnConnection = new AtomicLong();

    private DriverServer(final RdsStackConfig config, final StackOptions options, final Path directory,
        final boolean groupAccess) throws IOException
    {
        this.directory = directory;
        this.groupAccess = groupAccess;
        DriverFiles.prepareDirectory(directory, groupAccess);
        final Path lockFile = directory.resolve(LOCK_FILE);
        lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        DriverFiles.restrict(lockFile, groupAccess);
        lock = tryLock(lockChannel);
        if (lock == null)
        {
            lockChannel.close();
            throw new IOException("a driver is already running in " + directory);
        }
        CongestionBoard madeBoard = null;
        DriverHeartbeat madeHeartbeat = null;
        CoreStack madeStack = null;
        ServerSocketChannel madeListener = null;
        try
        {
            madeBoard = CongestionBoard.create(directory, config.maxPeers() + 64, groupAccess);
            madeHeartbeat = DriverHeartbeat.create(directory, groupAccess, options.epochClock().time(), progress);
            // its own agent drives the stack (no application thread of this process calls it), and beats
            madeStack = CoreStack.open(config.toBuilder().driverDirectory("").threading(Threading.AGENT).build(),
                options.congestionMaps(madeBoard::create).driverHeartbeat(madeHeartbeat).agentExtension(agentWork));
            final Path socketFile = directory.resolve(DriverProtocol.SOCKET_FILE);
            Files.deleteIfExists(socketFile); // a dead driver's: the lock says none runs
            deleteRings(); // a dead driver's clients' rings that they never mapped
            madeListener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            madeListener.bind(UnixDomainSocketAddress.of(socketFile));
            DriverFiles.restrict(socketFile, groupAccess);
            madeListener.configureBlocking(false);
            selector = Selector.open();
            madeListener.register(selector, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException | RuntimeException ex)
        {
            CloseHelper.quietClose(madeListener);
            if (madeStack != null)
            {
                madeStack.close();
            }
            if (madeHeartbeat != null)
            {
                madeHeartbeat.close();
            }
            if (madeBoard != null)
            {
                madeBoard.close();
            }
            lock.release();
            lockChannel.close();
            throw ex;
        }
        board = madeBoard;
        heartbeat = madeHeartbeat;
        stack = madeStack;
        listener = madeListener;
        stack.setPeerListener(this::execute, new RdsPeerListener()
        {
            @Override
            public void onPeerUp(final InetAddress local, final InetAddress peer)
            {
                sessions.forEach(session -> session.peer(true, local, peer));
            }

            @Override
            public void onPeerDown(final InetAddress local, final InetAddress peer)
            {
                sessions.forEach(session -> session.peer(false, local, peer));
            }
        });
        conductor = new Thread(this::run, "rds4j-driver-" + config.name());
        conductor.setDaemon(true);
        conductor.start();
        LOG.info("driver {} serving {} (pid {})", config.name(), directory, ProcessHandle.current().pid());
    }

    private void deleteRings() throws IOException
    {
        try (DirectoryStream<Path> rings = Files.newDirectoryStream(directory, "client-*.{ring,ring.down}"))
        {
            for (final Path ring : rings)
            {
                Files.deleteIfExists(ring);
            }
        }
    }

    /** @return the lock, or null if another driver holds it (in another process, or in this one). */
    private static FileLock tryLock(final FileChannel channel) throws IOException
    {
        try
        {
            return channel.tryLock();
        }
        catch (final OverlappingFileLockException ex)
        {
            return null;
        }
    }

    /**
     * Starts a driver.
     *
     * @param config      the stack's configuration (its {@code driverDirectory} is ignored).
     * @param directory   the driver's directory, made if needed ({@link RdsStackConfig#defaultDriverDirectory()}).
     * @param groupAccess whether the directory's group may use the driver too; else its user only.
     * @return the running driver.
     * @throws IOException if another driver runs in the directory, or it cannot be set up.
     */
    public static DriverServer start(final RdsStackConfig config, final Path directory, final boolean groupAccess)
        throws IOException
    {
        return start(config, new StackOptions(), directory, groupAccess);
    }

    /**
     * Starts a driver whose stack is opened with options (clocks, transports), as {@link CoreStack#open(RdsStackConfig,
     * StackOptions)}; the options are given the driver's congestion maps.
     *
     * @param config      the stack's configuration.
     * @param options     the stack's options.
     * @param directory   the driver's directory.
     * @param groupAccess whether the directory's group may use the driver too.
     * @return the running driver.
     * @throws IOException if another driver runs in the directory, or it cannot be set up.
     */
    public static DriverServer start(final RdsStackConfig config, final StackOptions options, final Path directory,
        final boolean groupAccess) throws IOException
    {
        return new DriverServer(config, options, directory, groupAccess);
    }

    /** @return the driver's stack: its counters, connections and info file are the host's. */
    public CoreStack stack()
    {
        return stack;
    }

    /** @return the driver's directory. */
    public Path directory()
    {
        return directory;
    }

    /** @return whether the directory's group may use the driver too. */
    boolean groupAccess()
    {
        return groupAccess;
    }

    /** Conductor: a number for a client's ring file, new in this directory while the driver runs. */
    long nextRingNumber()
    {
        return ++ringNumber;
    }

    /** @return when the driver started, in epoch milliseconds: a restarted driver is another one. */
    long startedMillis()
    {
        return startedMillis;
    }

    CongestionBoard board()
    {
        return board;
    }

    /**
     * @return the driver's own counters: clients attached, gone (their connection ended) and cut off (bad frames),
     *         send bytes dropped, sends by thread, deliveries past a queue, frames that came on a connection.
     */
    public Map<String, Long> counters()
    {
        final Map<String, Long> counters = new TreeMap<>();
        counters.put("driver_clients_attached", clientsAttached.get());
        counters.put("driver_clients_gone", clientsGone.get());
        counters.put("driver_clients_cut_off", clientsCutOff.get());
        counters.put("driver_dropped_send_bytes", droppedSendBytes.get());
        counters.put("driver_sends_by_agent", sendsByAgent.get());
        counters.put("driver_sends_by_conductor", sendsByConductor.get());
        counters.put("driver_delivered_past_queue", deliveredPast.get());
        counters.put("driver_frames_on_connection", framesOnConnection.get());
        return counters;
    }

    /**
     * Waits until the driver has stopped (closed, or its conductor failed).
     *
     * @throws InterruptedException if interrupted.
     */
    public void awaitStopped() throws InterruptedException
    {
        stopped.await();
    }

    /** Any thread: a socket of a session has something for its client, or room for its sends. */
    void signal(final DriverSession.Entry entry)
    {
        if (entry.signalPending.compareAndSet(false, true))
        {
            signalled.offer(entry);
            wakeConductor();
        }
    }

    /** Any thread: runs a task on the conductor (the stack's peer listener's executor; tests). */
    void execute(final Runnable task)
    {
        tasks.offer(task);
        wakeConductor();
    }

    /** Whether the agent runs duty cycles and reads the rings in them whenever the conductor sleeps. */
    boolean agentRunsRings()
    {
        return agentWatching;
    }

    private void wakeConductor()
    {
        // the caller's offer before this load: a conductor going to sleep stores, then looks at the queues
        VarHandle.fullFence();
        if (!conductorAwake && wakeupPending.compareAndSet(false, true))
        {
            selector.wakeup();
        }
    }

    private void run()
    {
        try
        {
            while (running)
            {
                if (drainRings())
                {
                    selector.selectNow(onReady); // busy: the clients' rings are read again at once
                }
                else
                {
                    // from here whoever queues work wakes the selector, and the clients ring a doorbell for frames
                    // they write unless the agent reads the rings (it arms the doorbells when it stops); what was
                    // queued or written before is seen here
                    conductorAwake = false;
                    wakeupPending.set(false);
                    if (!agentWatching || clientStreams)
                    {
                        sleeping(true);
                    }
                    if (drainRings() || !signalled.isEmpty() || !tasks.isEmpty())
                    {
                        selector.selectNow(onReady);
                    }
                    else
                    {
                        progress.sleeping(true);
                        selector.select(onReady);
                        progress.sleeping(false);
                    }
                    conductorAwake = true;
                    sleeping(false);
                }
                Runnable task;
                while ((task = tasks.poll()) != null)
                {
                    task.run();
                }
                DriverSession.Entry entry;
                while ((entry = signalled.poll()) != null)
                {
                    entry.signalPending.set(false);
                    entry.session().service(entry);
                }
                wakeAgentForSends();
                progress.turned();
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            if (running)
            {
                LOG.error("driver {}: the conductor failed; the driver stops", stack.config().name(), ex);
            }
        }
        finally
        {
            for (final DriverSession session : new ArrayList<>(sessions))
            {
                session.end(null);
            }
            stopped.countDown();
        }
    }

    /** Conductor: a key the selector found ready (the action form of select allocates no set or iterator). */
    private void onReady(final SelectionKey key)
    {
        progress.sleeping(false); // select runs this before it returns: a frame run here is not sleep
        if (!key.isValid())
        {
            return;
        }
        if (key.attachment() == null)
        {
            try
            {
                accept();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex); // the listening socket failed: the conductor stops, as before
            }
        }
        else
        {
            ((DriverSession)key.attachment()).onReady(key);
        }
    }

    /** Conductor: the sends it queued since its last look wait for the stack's agent, which may be parked. */
    private void wakeAgentForSends()
    {
        if (sendsQueued)
        {
            sendsQueued = false;
            stack.wakeAgent();
        }
    }

    /** @return true if a frame of any client's ring ran; the sends that ran are the agent's at once. */
    private boolean drainRings()
    {
        boolean ran = false;
        for (int i = sessions.size() - 1; i >= 0; i--)
        {
            ran |= sessions.get(i).drainRing(); // a session that ends removes only itself
        }
        wakeAgentForSends();
        return ran;
    }

    private void sleeping(final boolean asleep)
    {
        for (int i = 0, n = sessions.size(); i < n; i++)
        {
            sessions.get(i).sleeping(asleep);
        }
    }

    private void accept() throws IOException
    {
        final SocketChannel channel = listener.accept();
        if (channel == null)
        {
            return;
        }
        channel.configureBlocking(false);
        final DriverSession session = new DriverSession(this, channel);
        session.key(channel.register(selector, SelectionKey.OP_READ, session));
        sessions.add(session);
        agentSessions = sessions.toArray(new DriverSession[0]);
    }

    /** Conductor: a line per attached client ({@link DriverSession#describe}). */
    void describeClients(final StringBuilder text)
    {
        for (final DriverSession session : sessions)
        {
            if (session.pid() != 0)
            {
                session.describe(text);
            }
        }
    }

    /** A client of a driver, as {@code rds info} shows it. */
    public record Client(long pid, int sockets, long sendQueuedBytes, long receiveQueuedBytes)
    {
    }

    /**
     * Asks the driver in a directory for its clients, attaching to it for the question (the asking process is left
     * out).
     *
     * @param directory the driver's directory.
     * @return its clients.
     * @throws java.io.UncheckedIOException if no driver runs there.
     */
    public static List<Client> clients(final Path directory)
    {
        final RdsStackConfig config = RdsStackConfig.builder().name("rds-info").infoFile(false)
            .driverDirectory(directory.toString()).build();
        final List<Client> clients = new ArrayList<>();
        try (DriverStack stack = DriverStack.open(config))
        {
            for (final String line : stack.query(DriverProtocol.QUERY_CLIENTS))
            {
                final String[] f = line.split(" ");
                final long pid = Long.parseLong(f[0]);
                if (pid != ProcessHandle.current().pid())
                {
                    clients.add(new Client(pid, Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])));
                }
            }
        }
        return clients;
    }

    /** Conductor: a session ended; {@code cutOff} says why if the client broke the protocol, else null. */
    void ended(final DriverSession session, final String cutOff)
    {
        sessions.remove(session);
        agentSessions = sessions.toArray(new DriverSession[0]);
        if (cutOff != null)
        {
            clientsCutOff.incrementAndGet();
        }
        else if (session.pid() != 0)
        {
            clientsGone.incrementAndGet();
        }
    }

    /** Stops serving, ends every client's session (its calls then fail) and closes the stack. */
    @Override
    public void close()
    {
        if (!running)
        {
            return;
        }
        running = false;
        selector.wakeup();
        try
        {
            conductor.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        CloseHelper.quietClose(listener);
        CloseHelper.quietClose(selector);
        try
        {
            Files.deleteIfExists(directory.resolve(DriverProtocol.SOCKET_FILE));
        }
        catch (final IOException ex)
        {
            LOG.debug("cannot delete the driver's socket file", ex);
        }
        stack.close();
        heartbeat.close();
        board.close();
        try
        {
            lock.release();
            lockChannel.close();
        }
        catch (final IOException ex)
        {
            LOG.debug("cannot release the driver's lock", ex);
        }
        LOG.info("driver {} stopped", stack.config().name());
    }

    @Override
    public String toString()
    {
        return "DriverServer[" + directory + "]";
    }
}
