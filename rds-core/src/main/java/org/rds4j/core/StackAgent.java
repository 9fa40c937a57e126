package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpscUnboundedArrayQueue;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.CongestionMap;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The stack's one background agent: executes commands, moves messages from sockets into connections,
 * drives the transports' I/O and the connections' state machines, and applies the congestion policy
 * ({@link Congestion}) to what it delivers and receives. Everything here runs on the agent thread unless a
 * method says otherwise.
 */
final class StackAgent implements Agent, IdleBounds, PathHost
{
    private static final long HEARTBEAT_PERIOD_NS = RdsStackConfig.DRIVER_HEARTBEAT_PERIOD.toNanos();

    private final RdsStackConfig config;
    private final StackCounters counters;
    private final MessagePool pool;
    /** This stack's generation number, random and non-zero: a peer that sees it change knows we restarted. */
    private final int generation;

    private final String roleName;
    private final MpscUnboundedArrayQueue<StackCommand> commands = new MpscUnboundedArrayQueue<>(256);
    private final List<Transport> transports;
    private final Transport loopback;
    private final Map<InetAddress, LocalEndpoint> endpoints;
    private final Map<InetAddress, CongestionMap> congestionMaps;
    private final Function<InetAddress, CongestionMap> newCongestionMap;
    private final ArrayList<RdsSocketImpl> sockets = new ArrayList<>();
    private final ArrayList<Connection> connections = new ArrayList<>();
    private final Map<ConnectionKey, Connection> connectionsByKey = new HashMap<>();
    private final Congestion congestion = new Congestion(sockets);
    private final SocketWakeups wakeups = new SocketWakeups();
    /** The sockets with a run of frames open in their receive ring, within a transport's read. */
    private final ArrayList<RdsSocketImpl> runs = new ArrayList<>();
    /** Within one ack: the sockets whose recycled messages' bytes are still to be freed ({@link #releaseAckedDone}). */
    private final ArrayList<RdsSocketImpl> acked = new ArrayList<>();
    /** The stack's peer listener: events queued here, handed to the application's executor. */
    final PeerEvents peerEvents = new PeerEvents();
    private final Rotation socketRotation = new Rotation();
    private final Rotation connectionRotation = new Rotation();
    private final Rotation transportRotation = new Rotation();
    /** What the connections' paths see of this agent. */
    private final MessagePassingQueue.Consumer<StackCommand> executeCommand = this::execute;
    private final NanoClock clock;
    private final EpochClock epochClock;
    private long nowNs;
    /** Duty cycles begun. */
    private long cycle;
    /** The last duty cycle woke a socket's waiting threads. */
    private boolean wokeSockets;
    /** The info file snapshots go to (null: none), and when the next is due. */
    private StackInfoFile infoFile;
    private long nextInfoSnapshotNs;
    /** A driver's heartbeat for its clients (null: not a driver's stack), and when the next beat is due. */
    private DriverHeartbeat driverHeartbeat;
    private long nextHeartbeatNs;
    /** Work the stack's host adds to the duty cycle on its agent thread (null: none), and that thread. */
    private AgentExtension extension;
    private Thread extensionThread;
    private volatile boolean closing;

    private record ConnectionKey(InetAddress local, InetAddress remote, Transport transport)
    {
    }

    StackAgent(
        final RdsStackConfig config,
        final StackCounters counters,
        final MessagePool pool,
        final List<Transport> transports,
        final Transport loopback,
        final Map<InetAddress, LocalEndpoint> endpoints,
        final ConcurrentHashMap<InetAddress, CongestionMap> congestionMaps,
        final Function<InetAddress, CongestionMap> newCongestionMap,
        final NanoClock clock,
        final EpochClock epochClock)
    {
        this.config = config;
        this.clock = clock;
        this.epochClock = epochClock;
        this.nowNs = clock.nanoTime();
        this.nextInfoSnapshotNs = nowNs;
        this.nextHeartbeatNs = nowNs;
        this.counters = counters;
        this.pool = pool;
        this.transports = transports;
        this.loopback = loopback;
        this.endpoints = endpoints;
        this.congestionMaps = congestionMaps;
        this.newCongestionMap = newCongestionMap;
        int random;
        do
        {
            random = new SecureRandom().nextInt();
        }
        while (random == 0);
        this.generation = random;
        this.roleName = "rds4j-agent-" + config.name();
    }

    @Override
    public String roleName()
    {
        return roleName;
    }

    @Override
    public StackCounters counters()
    {
        return counters;
    }

    @Override
    public RdsStackConfig config()
    {
        return config;
    }

    @Override
    public int generation()
    {
        return generation;
    }

    @Override
    public MessagePool pool()
    {
        return pool;
    }

    /** @return the stack's clock ({@link StackOptions#nanoClock()}) read at the start of this duty cycle. */
    @Override
    public long nowNs()
    {
        return nowNs;
    }

    /** @return the number of the current duty cycle. */
    @Override
    public long cycle()
    {
        return cycle;
    }

    /** Any thread: queues a command for the agent. */
    void send(final StackCommand command)
    {
        commands.offer(command);
    }

    @Override
    public int doWork()
    {
        nowNs = clock.nanoTime();
        cycle++;
        int work = commands.drain(executeCommand, 64);
        if (extension != null && Thread.currentThread() == extensionThread)
        {
            // before the sockets' queues: a send it runs leaves in this cycle
            work += extension.doWork();
        }
        work += serveSocketsAndConnections();
        final int transportCount = transports.size();
        final int firstTransport = transportRotation.first(transportCount);
        for (int turn = 0; turn < transportCount; turn++)
        {
            work += transports.get(Rotation.index(firstTransport, turn, transportCount)).doWork(nowNs);
        }
        work += endCycle();
        return work;
    }

    /**
     * A sending thread's duty cycle on the lock lent by a thread asleep in a transport's idle wait ({@link
     * Invoker#tryInvoke()}): the cycle without the transports' work (reads, selects), which stays with the sleeper.
     *
     * @param sleeperWakeAtNs the latest time the sleeper wakes, on the stack's clock.
     * @return whether the sleeper must be woken: a command ran (its caller may be the sleeper), a socket's waiters
     *         were woken (the sleeper may be one, and its wait does not see an unpark), or something is due before
     *         the sleeper would wake (an ack owed, output left, a transport's task).
     */
    boolean borrowedCycle(final long sleeperWakeAtNs)
    {
        nowNs = clock.nanoTime();
        cycle++;
        final int commandsRun = commands.drain(executeCommand, 64);
        serveSocketsAndConnections();
        endCycle();
        return commandsRun > 0 || wokeSockets || idleDeadlineNs(nowNs) - sleeperWakeAtNs < 0;
    }

    private int serveSocketsAndConnections()
    {
        int work = 0;
        // each list from a start that moves on every cycle, so that no socket or peer is always served last
        final int socketCount = sockets.size();
        final int firstSocket = socketRotation.first(socketCount);
        for (int turn = 0; turn < socketCount; turn++)
        {
            // a whole queue's worth: the more of a socket's messages each connection gets per cycle, the more of
            // them one write carries (a socket sending round robin to 200 peers got about one per write with 256)
            final RdsSocketImpl socket = sockets.get(Rotation.index(firstSocket, turn, socketCount));
            work += drainSocket(socket, config.socketQueueCapacity(), false);
        }
        // write before reading: what the application just queued leaves without waiting for this cycle's reads
        final int connectionCount = connections.size();
        final int firstConnection = connectionRotation.first(connectionCount);
        for (int turn = 0; turn < connectionCount; turn++)
        {
            work += connections.get(Rotation.index(firstConnection, turn, connectionCount)).doWork(nowNs);
        }
        for (int i = connectionCount; i < connections.size(); i++)
        {
            work += connections.get(i).doWork(nowNs); // created during this loop (a loopback's reverse): served too
        }
        return work;
    }

    private int endCycle()
    {
        int work = 0;
        if (congestion.hasCongestedSockets())
        {
            work += congestion.releaseDrainedPorts();
        }
        wokeSockets = wakeups.wakeAll();
        if (infoFile != null && nowNs - nextInfoSnapshotNs >= 0)
        {
            nextInfoSnapshotNs = nowNs + StackInfoFile.SNAPSHOT_INTERVAL_NS;
            infoFile.writeSnapshot(connections, sockets, epochClock.time());
        }
        if (driverHeartbeat != null && nowNs - nextHeartbeatNs >= 0)
        {
            nextHeartbeatNs = nowNs + HEARTBEAT_PERIOD_NS;
            driverHeartbeat.beat(epochClock.time());
        }
        return work;
    }

    /**
     * The thread about to idle: whether an application thread has handed over work (a command, a message) since
     * this duty cycle looked. Checked after the agent has published that it is parking, so that a hand-off
     * either sees it parked and wakes it, or is seen here.
     */
    @Override
    public boolean hasQueuedInput()
    {
        stopping(); // the thread is about to park
        if (closing || !commands.isEmpty())
        {
            return true;
        }
        for (int i = 0, n = sockets.size(); i < n; i++)
        {
            if (sockets.get(i).hasSendsForStack())
            {
                return true;
            }
        }
        return false;
    }

    /**
     * The thread about to idle: the latest time the next duty cycle must run if nothing wakes the agent, the
     * earliest of every connection's and transport's deadline, the next info file snapshot and a driver's next
     * heartbeat; {@code nowNs} while a socket's congested port waits to be released.
     */
    @Override
    public long idleDeadlineNs(final long nowNs)
    {
        if (congestion.hasCongestedSockets())
        {
            return nowNs;
        }
        long deadline = infoFile == null ? Transport.NO_DEADLINE : nextInfoSnapshotNs;
        if (driverHeartbeat != null)
        {
            deadline = Math.min(deadline, nextHeartbeatNs); // due with the snapshot: one wake-up serves both
        }
        for (int i = 0; i < connections.size() && deadline != nowNs; i++)
        {
            deadline = Math.min(deadline, connections.get(i).idleDeadlineNs(nowNs));
        }
        for (int i = 0, n = transports.size(); i < n && deadline != nowNs; i++)
        {
            deadline = Math.min(deadline, transports.get(i).idleDeadlineNs(nowNs));
        }
        return deadline;
    }

    /** Any thread, as the stack closes: the agent parks no more, so that it sees it must stop at once. */
    void beginClose()
    {
        closing = true;
    }

    /** Before the agent starts: the info file to publish snapshots in, at most every 100 ms; null for none. */
    void infoFile(final StackInfoFile file)
    {
        this.infoFile = file;
    }

    /**
     * Before the agent starts: work the stack's host adds to the duty cycle, run on {@code agentThread} only.
     *
     * @param work        the work, or null for none.
     * @param agentThread the stack's agent thread.
     */
    void extension(final AgentExtension work, final Thread agentThread)
    {
        this.extension = work;
        this.extensionThread = agentThread;
    }

    /** The agent thread stops running duty cycles for a while (parks, or stands aside): see {@link AgentExtension}. */
    void stopping()
    {
        if (extension != null)
        {
            extension.stopping();
        }
    }

    /** Before the agent starts: a driver's heartbeat, written every {@link #HEARTBEAT_PERIOD_NS}; null for none. */
    void driverHeartbeat(final DriverHeartbeat heartbeat)
    {
        this.driverHeartbeat = heartbeat;
    }

    private void execute(final StackCommand command)
    {
        command.execute(this);
    }

    @Override
    public void onClose()
    {
        for (final Connection connection : connections)
        {
            connection.close();
        }
        for (final Transport transport : transports)
        {
            transport.close();
        }
        StackCommand command;
        while ((command = commands.poll()) != null)
        {
            command.execute(this);
        }
        for (final RdsSocketImpl socket : new ArrayList<>(sockets))
        {
            unbind(socket);
        }
    }

    // ---------------------------------------------------------------- sockets

    /** Puts a bound socket into the agent's tables; again for one a message found first ({@link #boundFor}). */
    void bind(final RdsSocketImpl socket)
    {
        final int port = socket.localAddress().getPort();
        if (socket.endpoint().sockets.get(port) != socket)
        {
            sockets.add(socket);
            socket.endpoint().sockets.put(port, socket);
        }
        socket.endpoint().bindingEnds(port, socket);
    }

    @Override
    public RdsSocketImpl boundFor(final LocalEndpoint endpoint, final int port)
    {
        final RdsSocketImpl socket = endpoint.binding(port);
        if (socket == null || !socket.isOpen())
        {
            return null;
        }
        bind(socket); // its bind command is queued behind this duty cycle's look at the commands
        return socket;
    }

    /** Removes a closed socket: drops its queued and unacked messages and what it had not received. */
    void unbind(final RdsSocketImpl socket)
    {
        if (!sockets.remove(socket))
        {
            return;
        }
        final LocalEndpoint endpoint = socket.endpoint();
        final int port = socket.localAddress().getPort();
        drainSocket(socket, Integer.MAX_VALUE, true);
        for (final Connection connection : endpoint.connections)
        {
            counters.sendCancelled.getAndAdd(connection.cancel(socket, -1));
        }
        endpoint.sockets.remove(port, socket);
        endpoint.bindingEnds(port, socket);
        socket.closeSendRing();
        congestion.onUnbind(socket);
        socket.received.releaseAll();
        socket.wakeSenders();
        socket.received.waiters.wakeAll();
    }

    /**
     * Moves a socket's new messages into their connections' send queues: the send ring's committed records in
     * order, and each message of {@code outbound} once the ring is read to its mark ({@link Message#mark}).
     *
     * @param limit    most messages to move.
     * @param complete before a cancel or close, which must see every message whose send returned before it: waits
     *                 for the records claimed before now that their writers are still writing.
     */
    private int drainSocket(final RdsSocketImpl socket, final int limit, final boolean complete)
    {
        final SendRing ring = socket.mappedSendRing();
        if (ring == null)
        {
            return 0; // nothing sent yet: a claim or a spill maps the ring first
        }
        final long claimedBefore = complete ? ring.tail() : 0;
        int moved = 0;
        int fromQueue = 0;
        Message aside = socket.outbound.relaxedPeek();
        while (moved < limit)
        {
            final Message message;
            if (aside != null && aside.mark <= ring.readPosition())
            {
                message = socket.outbound.relaxedPoll();
                fromQueue++;
                aside = socket.outbound.relaxedPeek();
            }
            else if ((message = ring.next()) == null)
            {
                if (complete && !ring.isUnmapped() && ring.readPosition() < claimedBefore)
                {
                    Thread.yield(); // a writer between its claim and its commit: a copy, at most maxFrame bytes
                    continue;
                }
                break;
            }
            moved++;
            if (!socket.isOpen())
            {
                releaseSent(message);
                continue;
            }
            socket.agentState().connectionTo(message.destination.getAddress(), socket, this).enqueue(message);
            counters.sendQueued.incrementOrdered();
        }
        if (moved > 0)
        {
            ring.publishRead();
            socket.reclaimAbortedClaims();
        }
        if (fromQueue > 0)
        {
            socket.outboundTaken(fromQueue);
            wakeups.senders(socket);
        }
        return moved;
    }

    int cancel(final RdsSocketImpl socket, final InetSocketAddress destination)
    {
        drainSocket(socket, Integer.MAX_VALUE, true);
        final Connection connection = existingConnection(socket, destination.getAddress());
        final int dropped = connection == null ? 0 : connection.cancel(socket, destination.getPort());
        counters.sendCancelled.getAndAdd(dropped);
        return dropped;
    }

    /**
     * Hands a received payload to a socket, marking its port congested when its receive buffer overflows. A frame of a
     * transport's batch is appended to the run its socket has open in its receive ring for that sender, or opens one
     * (docs/receive-runs.md): the runs are queued at the batch's end, or when their socket's next frame does not join.
     * A driver's session takes a payload past the socket's queue when that is empty (one copy and one ring fewer per
     * message), and a batch's payloads after it in the same run, whatever their sender (each is a frame of its own for
     * the client).
     */
    @Override
    public void deliver(
        final RdsSocketImpl socket, final InetSocketAddress sender, final DirectBuffer buffer, final int offset,
        final int length, final boolean batched)
    {
        final SocketAgentState state = socket.agentState();
        final int frame = offset - RdsHeader.LENGTH;
        final int frameLength = RdsHeader.LENGTH + length;
        if (state.runFrames > 0)
        {
            if (batched && (state.pastRun != null ? state.pastRun.appendToPastRun(sender, buffer, offset, length) :
                sender == state.runSender && socket.received.appendToRun(buffer, frame, frameLength)))
            {
                state.runFrames++;
                return;
            }
            closeRun(socket, state); // the socket's earlier frames go first
        }
        // a test of the class, not a call: the sockets a selector or push delivery watches pay nothing for it
        final DriverSession.Entry session =
            socket.watcher() instanceof DriverSession.Entry ? (DriverSession.Entry)socket.watcher() : null;
        if (batched && (session != null ? session.openPastRun(sender, buffer, offset, length) :
            socket.received.openRun(sender, buffer, frame, frameLength)))
        {
            state.runSender = sender;
            state.runFrames = 1;
            state.pastRun = session;
            if (!state.runListed)
            {
                state.runListed = true;
                runs.add(socket);
            }
            return;
        }
        final long queued = session != null && session.openPastRun(sender, buffer, offset, length) ?
            socket.received.offerHeld(session.closePastRun(1)) :
            socket.received.offer(sender, buffer, offset, length, counters);
        delivered(socket, 1, queued);
    }

    @Override
    public void batchEnd()
    {
        for (int i = 0, n = runs.size(); i < n; i++)
        {
            final RdsSocketImpl socket = runs.get(i);
            final SocketAgentState state = socket.agentState();
            if (state.runFrames > 0)
            {
                closeRun(socket, state);
            }
            state.runListed = false;
        }
        runs.clear();
    }

    private void closeRun(final RdsSocketImpl socket, final SocketAgentState state)
    {
        final int frames = state.runFrames;
        final DriverSession.Entry past = state.pastRun;
        state.runFrames = 0;
        state.runSender = null;
        state.pastRun = null;
        delivered(socket, frames,
            past != null ? socket.received.offerHeld(past.closePastRun(frames)) : socket.received.closeRun(frames));
        if (frames > 1)
        {
            counters.recvRuns.incrementOrdered();
        }
    }

    /** {@code frames} payloads were queued to {@code socket} (in a run, or one), which now has {@code queued} bytes. */
    private void delivered(final RdsSocketImpl socket, final int frames, final long queued)
    {
        wakeups.receivers(socket);
        counters.recvDelivered.getAndAddOrdered(frames);
        congestion.onReceived(socket, queued);
    }

    /**
     * Recycles an acked or cancelled message, then frees its bytes from its socket's send buffer: in that
     * order, so a sender admitted by the freed bytes finds the message back in the pool and a socket never
     * needs more messages than its send buffer admits.
     */
    @Override
    public void releaseSent(final Message message)
    {
        final RdsSocketImpl socket = message.socket;
        final int length = message.payloadLength;
        releaseMessage(message);
        releaseBytes(socket, length);
    }

    @Override
    public void releaseAcked(final Message message)
    {
        final RdsSocketImpl socket = message.socket;
        final int length = message.payloadLength;
        releaseMessage(message);
        if (socket != null)
        {
            final SocketAgentState state = socket.agentState();
            if (!state.ackedPending)
            {
                state.ackedPending = true;
                acked.add(socket);
            }
            state.ackedBytes += length;
        }
    }

    @Override
    public void releaseAckedDone()
    {
        for (int i = 0, n = acked.size(); i < n; i++)
        {
            final RdsSocketImpl socket = acked.get(i);
            final SocketAgentState state = socket.agentState();
            releaseBytes(socket, state.ackedBytes);
            state.ackedBytes = 0;
            state.ackedPending = false;
        }
        acked.clear();
    }

    /** Frees a message's bytes from its socket's send buffer (the message stays where it is). */
    @Override
    public void releaseBytes(final Message message)
    {
        releaseBytes(message.socket, message.payloadLength);
    }

    @Override
    public void releaseAppendedBytes(final RdsSocketImpl socket, final long bytes)
    {
        releaseBytes(socket, bytes);
    }

    private void releaseBytes(final RdsSocketImpl socket, final long length)
    {
        if (socket != null)
        {
            socket.releaseSendBytes(length);
            wakeups.senders(socket);
        }
    }

    /** A send ring's record is reclaimed at once: before its bytes leave the send buffer, its room is back. */
    @Override
    public void releaseMessage(final Message message)
    {
        final SendRing ring = message.ring;
        pool.release(message);
        if (ring != null)
        {
            ring.reclaim();
        }
    }

    // ---------------------------------------------------------------- connections

    /**
     * @return the connection from a socket's address to a remote node on the socket's transport (loopback when
     *         the remote address is this stack's), created DOWN if new.
     */
    Connection connection(final LocalEndpoint endpoint, final InetAddress remote, final Transport socketTransport)
    {
        final Transport transport = endpoints.containsKey(remote) ? loopback : socketTransport;
        final ConnectionKey key = new ConnectionKey(endpoint.address, remote, transport);
        Connection connection = connectionsByKey.get(key);
        if (connection == null)
        {
            final CongestionMap peerMap = congestionMaps.computeIfAbsent(remote, newCongestionMap);
            connection = new Connection(this, endpoint, remote, transport, peerMap);
            connectionsByKey.put(key, connection);
            connections.add(connection);
            endpoint.connections.add(connection);
        }
        return connection;
    }

    /** For transports: path 0 of the connection for an address pair, or null if no socket is bound to {@code local}. */
    ConnPath connection(final InetAddress local, final InetAddress remote, final Transport transport)
    {
        final LocalEndpoint endpoint = endpoints.get(local);
        return endpoint == null ? null : connection(endpoint, remote, transport).path(0);
    }

    private Connection existingConnection(final RdsSocketImpl socket, final InetAddress remote)
    {
        final Transport transport = endpoints.containsKey(remote) ? loopback : socket.transport();
        return connectionsByKey.get(new ConnectionKey(socket.endpoint().address, remote, transport));
    }

    /** @return true if {@code transport} is the stack's loopback transport. */
    @Override
    public boolean isLoopback(final Transport transport)
    {
        return transport == loopback;
    }

    @Override
    public void onPeerUp(final Connection connection)
    {
        notifySockets(connection, Notification.Kind.PEER_UP);
    }

    @Override
    public void onPeerDown(final Connection connection)
    {
        notifySockets(connection, Notification.Kind.PEER_DOWN);
    }

    private void notifySockets(final Connection connection, final Notification.Kind kind)
    {
        if (connection.transport() == loopback)
        {
            return;
        }
        peerEvents.offer(kind == Notification.Kind.PEER_UP, connection.localAddress(), connection.remoteAddress());
        final InetSocketAddress peer = new InetSocketAddress(connection.remoteAddress(), 0);
        for (final RdsSocketImpl socket : connection.local.sockets.values())
        {
            socket.notifyListener(new Notification(kind, peer));
        }
    }

    /** Drops every connection's transport path, as if the network failed; they reconnect. For tests. */
    void dropConnections()
    {
        for (int i = 0; i < connections.size(); i++)
        {
            connections.get(i).drop("dropped on request");
        }
    }

    /** @return the stack's connections, for a read run on the agent ({@link StackMBean}); not to be kept. */
    List<Connection> connectionList()
    {
        return connections;
    }

    /** @return the stack's bound sockets, for a read run on the agent ({@link StackMBean}); not to be kept. */
    List<RdsSocketImpl> socketList()
    {
        return sockets;
    }

    List<RdsStack.ConnectionInfo> connectionInfos()
    {
        final List<RdsStack.ConnectionInfo> infos = new ArrayList<>(connections.size());
        for (final Connection c : connections)
        {
            infos.add(new RdsStack.ConnectionInfo(c.localAddress(), c.remoteAddress(), c.transport().name(),
                c.state().name(), c.nextTxSequence(), c.nextRxSequence(), c.queuedMessages()));
        }
        return infos;
    }

    // ---------------------------------------------------------------- congestion

    /** A peer sent its congestion map: store it, notify monitors of freed ports, wake blocked senders. */
    @Override
    public void onPeerCongestionMap(
        final InetAddress peer, final CongestionMap peerMap, final DirectBuffer buffer, final int offset)
    {
        congestion.onPeerMap(peer, peerMap, buffer, offset);
    }

    @Override
    public String toString()
    {
        return roleName + "{sockets=" + sockets.size() + ", connections=" + connections.size() + "}";
    }
}
