package org.rds4j.transport.ib;

import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.core.spi.Admission;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.TransportCounters;
import org.rds4j.core.spi.Addresses;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportContext;
import org.rds4j.transport.ib.verbs.AbiCheck;
import org.rds4j.transport.ib.verbs.CmEventChannel;
import org.rds4j.transport.ib.verbs.CmId;
import org.rds4j.transport.ib.verbs.FdPoller;
import org.rds4j.transport.ib.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * RDS over InfiniBand (any RDMA device rdma_cm can use: IB, RoCE, Soft-RoCE): one RC queue pair per RDS
 * connection, set up with rdma_cm on port 18634 with the kernel's {@code rds_ib_connect_private} as private
 * data; messages cut into 4 KiB fragments each carrying a header copy; credit flow control; every header
 * checksummed. See {@code docs/transport-ib.md}.
 * <p>
 * ConnectionPath rules: the node with the lower address reconnects after a drop; a higher node with messages to
 * send connects too. Crossed connects (both sides' requests in flight) are resolved by address: the request
 * from the lower address wins; the higher side drops its own attempt, and the lower side rejects the higher's
 * request. A request for a connection that is already up means the peer lost it: the request is rejected and
 * the stale path dropped (the peer's next attempt succeeds). Before any of that, a request must pass the
 * stack's admission rules ({@code allowedPeers}, {@code peerConnectRate}, {@code maxPeers}), as on TCP.
 * <p>
 * Threads: all verbs and rdma_cm work of connections runs on the stack's agent thread in {@link #doWork}; a bind
 * runs {@link #canServe}'s probe and {@link #addLocalAddress}'s listener on the binding thread. One more thread,
 * {@code rds4j-ib-events-<stack>}, started at the first bind to an RDMA address, blocks in {@code poll(2)} on
 * the rdma_cm event channel and the completion channels of armed CQs and wakes the agent when one is readable;
 * it never touches a verbs object. After activity the agent busy-polls a path's CQ for the spin time
 * ({@code rds4j.ib.pollSpinMicros}, default 200 µs), then arms it and leaves the waiting to that thread, so an
 * idle stack burns no CPU.
 * <p>
 * If libibverbs or librdmacm cannot be loaded, or the ABI check fails, the transport still exists but serves
 * no address: {@link #canServe} is false and binding with {@link TransportType#IB} fails with
 * {@code EADDRNOTAVAIL} and the reason.
 */
public final class IbTransport implements Transport
{
    private static final Logger LOG = LoggerFactory.getLogger(IbTransport.class);
    private static final int RESOLVE_TIMEOUT_MS = 2000;
    private static final int LISTEN_BACKLOG = 128;
    private static final int MAX_WATCHED = 1024;

    final TransportContext context;
    final TransportCounters counters;
    final int sendSlots;
    final int receiveSlots;
    /** This transport's counters; null while IB is unavailable, so that a stack without it lists none. */
    final IbCounters ibCounters;
    /** Scratch header for applying the ack carried in private data (agent thread). */
    private final RdsStackConfig config;
    private final long spinNs;
    /** The rdma_cm port listened on and connected to. */
    private final int port;
    private final String unavailable;
    private final CmEventChannel channel;
    private final CmEventChannel probeChannel;
    private final Map<InetAddress, Boolean> servable = new ConcurrentHashMap<>();
    private final Map<InetAddress, CmId> listeners = new ConcurrentHashMap<>();
    private final Map<Long, InetAddress> listenerAddresses = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Map<Long, IbPath> pathsById = new HashMap<>();
    private final Map<ConnectionPath, IbPath> pathsByConnection = new IdentityHashMap<>();
    private final List<IbPath> paths = new ArrayList<>();
    private final List<IbPath> retired = new ArrayList<>();
    private final IbPrivateData privateData = new IbPrivateData();
    private final IbPrivateData.Decoded decoded = new IbPrivateData.Decoded();
    private final FdPoller poller;
    private final Thread eventThread;
    private volatile int[] watched = new int[0];
    private volatile long watchedGeneration;
    private volatile long seenGeneration;
    private volatile boolean eventsPending;
    private volatile boolean running;
    private volatile boolean started;
    private int nextTag = 1;
    private long nowNs;

    IbTransport(final TransportContext context)
    {
        this.context = context;
        this.config = context.config();
        this.counters = context.counters();
        final IbConfig ibConfig = IbConfig.of(config);
        this.sendSlots = ibConfig.ibSendRing();
        this.receiveSlots = ibConfig.ibReceiveRing();
        this.spinNs = ibConfig.ibPollSpin().toNanos();
        this.port = ibConfig.ibPort();
        String why = null;
        CmEventChannel main = null;
        CmEventChannel probe = null;
        FdPoller fdPoller = null;
        if (ibConfig.ibDisable())
        {
            why = "the IB transport is disabled (rds4j.ib.disable=true)";
        }
        else
        {
            try
            {
                AbiCheck.verify();
                main = new CmEventChannel();
                probe = new CmEventChannel();
                fdPoller = new FdPoller(MAX_WATCHED);
            }
            catch (final UnsatisfiedLinkError | NoClassDefFoundError ex)
            {
                why = "libibverbs/librdmacm cannot be loaded (install rdma-core: libibverbs1, librdmacm1, " +
                    "ibverbs-providers): " + ex.getMessage();
            }
            catch (final VerbsException ex)
            {
                why = ex.errno() == 19 || ex.errno() == 2 ?
                    "no RDMA device on this machine (" + ex.getMessage() + "; /dev/infiniband/rdma_cm missing? " +
                        "modprobe rdma_ucm and a device driver, e.g. rdma_rxe)" :
                    "RDMA set-up failed: " + ex.getMessage();
                closeQuietly(main);
                closeQuietly(probe);
                main = null;
                probe = null;
            }
            catch (final RuntimeException ex)
            {
                why = (ex.getMessage() != null && ex.getMessage().contains("ABI") ? "" : "RDMA set-up failed: ") +
                    ex.getMessage();
                closeQuietly(main);
                closeQuietly(probe);
                main = null;
                probe = null;
            }
        }
        this.unavailable = why;
        this.channel = main;
        this.probeChannel = probe;
        this.poller = fdPoller;
        this.ibCounters = why == null ? new IbCounters(counters) : null;
        this.eventThread = main == null ? null : new Thread(this::runEvents, "rds4j-ib-events-" + config.name());
        if (why != null)
        {
            LOG.debug("IB transport unavailable: {}", why);
        }
    }

    private static void closeQuietly(final AutoCloseable closeable)
    {
        if (closeable != null)
        {
            try
            {
                closeable.close();
            }
            catch (final Exception ex)
            {
                LOG.debug("close failed", ex);
            }
        }
    }

    @Override
    public String name()
    {
        return "ib";
    }

    @Override
    public TransportType type()
    {
        return TransportType.IB;
    }

    /**
     * True if the address belongs to an RDMA device: a temporary rdma_cm id bound to it gets a device context.
     * The id is destroyed at once; the answer is cached per address.
     */
    @Override
    public boolean canServe(final InetAddress local)
    {
        if (unavailable != null || !(local instanceof Inet4Address))
        {
            return false;
        }
        return servable.computeIfAbsent(local, this::probe);
    }

    private synchronized boolean probe(final InetAddress local)
    {
        CmId id = null;
        try
        {
            id = CmId.create(probeChannel);
            id.bind(new InetSocketAddress(local, 0));
            return id.verbs() != 0;
        }
        catch (final RuntimeException ex)
        {
            return false;
        }
        finally
        {
            if (id != null)
            {
                id.close();
            }
        }
    }

    @Override
    public String unavailableReason(final InetAddress local)
    {
        if (unavailable != null)
        {
            return unavailable;
        }
        if (!(local instanceof Inet4Address))
        {
            return "rds4j's IB transport is IPv4 only";
        }
        return "no RDMA device has the address " + local.getHostAddress();
    }

    @Override
    public void addLocalAddress(final InetAddress local) throws RdsException
    {
        if (listeners.containsKey(local))
        {
            return;
        }
        if (!canServe(local))
        {
            throw new RdsException(RdsResult.EADDRNOTAVAIL, "cannot serve " + local.getHostAddress() +
                " over IB: " + unavailableReason(local));
        }
        synchronized (listeners)
        {
            if (listeners.containsKey(local))
            {
                return;
            }
            final InetSocketAddress address = new InetSocketAddress(local, port);
            CmId id = null;
            try
            {
                id = CmId.create(channel);
                id.bind(address);
                id.listen(LISTEN_BACKLOG);
            }
            catch (final VerbsException ex)
            {
                if (id != null)
                {
                    id.close();
                }
                final boolean inUse = ex.errno() == 98; // EADDRINUSE
                throw new RdsException(inUse ? RdsResult.EADDRINUSE : RdsResult.EADDRNOTAVAIL,
                    "cannot listen on " + address + " for RDS over IB (rdma_cm)" +
                        (inUse ? " (kernel rds_rdma loaded in this namespace?)" : "") + ": " + ex.getMessage());
            }
            listenerAddresses.put(id.id(), local);
            listeners.put(local, id);
            startEvents();
            LOG.debug("listening on {} (rdma_cm)", address);
        }
    }

    private synchronized void startEvents()
    {
        if (!started)
        {
            started = true;
            running = true;
            watched = new int[] {channel.fd()};
            eventThread.setDaemon(true);
            eventThread.start();
        }
    }

    @Override
    public boolean checksumsHeaders()
    {
        return true;
    }

    /**
     * Test hook: breaks every established path as a fault would (the QP is disconnected, moving it to the error
     * state, and destroyed); both sides see the connection drop, reconnect and retransmit. Thread safe; takes
     * effect on the agent's next duty cycle.
     */
    @Override
    public void abortAll()
    {
        tasks.add(() ->
        {
            int aborted = 0;
            for (final IbPath path : new ArrayList<>(paths))
            {
                if (path.isEstablished())
                {
                    path.fail("aborted (test hook)");
                    aborted++;
                }
            }
            LOG.info("test hook: aborted {} of {} paths", aborted, paths.size() + aborted);
        });
        context.wakeAgent();
    }

    // ------------------------------------------------------------------ connecting

    @Override
    public void connect(final ConnectionPath connection)
    {
        final InetAddress local = connection.localAddress();
        final InetAddress remote = connection.remoteAddress();
        if (!context.admitOutgoing(local, remote))
        {
            connection.onConnectFailed("peer outside allowedPeers");
            return;
        }
        if (pathsByConnection.containsKey(connection))
        {
            return; // a request from the peer is being accepted: it completes this connect
        }
        CmId id = null;
        try
        {
            id = CmId.create(channel);
            final IbPath path = new IbPath(this, connection, id, true, nextTag(), nowNs + config.connectTimeout().toNanos());
            id.resolveAddress(new InetSocketAddress(local, 0), new InetSocketAddress(remote, port), RESOLVE_TIMEOUT_MS);
            add(path);
        }
        catch (final RuntimeException ex)
        {
            if (id != null)
            {
                id.close();
            }
            connection.onConnectFailed(ex.toString());
        }
    }

    private int nextTag()
    {
        final int tag = nextTag++;
        if (nextTag == 0)
        {
            nextTag = 1;
        }
        return tag;
    }

    private void add(final IbPath path)
    {
        paths.add(path);
        pathsById.put(path.id.id(), path);
        pathsByConnection.put(path.connection, path);
    }

    /** A path that never came up failed (rejected, unreachable, timed out, bad private data). */
    void onAttemptFailed(final IbPath path, final String reason)
    {
        if (path.connection.isConnecting() && !pathsByConnection.containsKey(path.connection))
        {
            path.connection.onConnectFailed(reason);
        }
        LOG.debug("{} attempt failed: {}", path.connection, reason);
    }

    /** A path closed: it leaves the maps at once; its CQ leaves the event thread's set, and is freed later. */
    void retire(final IbPath path)
    {
        pathsById.remove(path.id.id());
        if (pathsByConnection.get(path.connection) == path)
        {
            pathsByConnection.remove(path.connection);
        }
        paths.remove(path);
        if (path.cq != null)
        {
            retired.add(path);
            publishWatched();
            path.retiredGeneration = watchedGeneration;
        }
        else
        {
            path.free();
        }
    }

    private void publishWatched()
    {
        int count = 1;
        for (int i = 0; i < paths.size(); i++)
        {
            if (paths.get(i).cq != null)
            {
                count++;
            }
        }
        final int[] fds = new int[Math.min(count, MAX_WATCHED)];
        fds[0] = channel.fd();
        int at = 1;
        for (int i = 0; i < paths.size() && at < fds.length; i++)
        {
            if (paths.get(i).cq != null)
            {
                fds[at++] = paths.get(i).cq.channelFd();
            }
        }
        watched = fds;
        watchedGeneration++;
        if (poller != null)
        {
            poller.wake();
        }
    }

    // ------------------------------------------------------------------ the agent's work

    @Override
    public int doWork(final long nowNs)
    {
        this.nowNs = nowNs;
        if (!started)
        {
            return 0;
        }
        int work = 0;
        Runnable task;
        while ((task = tasks.poll()) != null)
        {
            task.run();
            work++;
        }
        if (eventsPending)
        {
            work += onEvents(nowNs);
        }
        for (int i = 0; i < paths.size(); i++)
        {
            work += paths.get(i).poll(nowNs, spinNs);
        }
        if (!paths.isEmpty())
        {
            work += expireAttempts(nowNs);
        }
        if (!retired.isEmpty())
        {
            freeRetired();
        }
        return work;
    }

    /**
     * An established path is polled until its completion queue is armed (after the poll spin); from then its
     * completion event, like every rdma_cm event, comes through the event thread, which wakes the agent. A
     * path still connecting needs the agent by its connect deadline.
     */
    @Override
    public long idleDeadlineNs(final long nowNs)
    {
        if (!tasks.isEmpty() || eventsPending || !retired.isEmpty())
        {
            return nowNs;
        }
        long deadline = NO_DEADLINE;
        for (int i = 0; i < paths.size(); i++)
        {
            final IbPath path = paths.get(i);
            if (path.isEstablished())
            {
                if (!path.armed)
                {
                    return nowNs;
                }
            }
            else
            {
                deadline = Math.min(deadline, path.deadlineNs);
            }
        }
        return deadline;
    }

    private int onEvents(final long nowNs)
    {
        int work = handleCmEvents();
        for (int i = 0; i < paths.size(); i++)
        {
            paths.get(i).onChannelReadable(nowNs);
        }
        eventsPending = false;
        LockSupport.unpark(eventThread);
        return work + 1;
    }

    private void freeRetired()
    {
        final long seen = seenGeneration;
        for (int i = retired.size() - 1; i >= 0; i--)
        {
            final IbPath path = retired.get(i);
            if (path.retiredGeneration <= seen)
            {
                retired.remove(i);
                path.free();
            }
        }
    }

    private int expireAttempts(final long nowNs)
    {
        int expired = 0;
        for (int i = paths.size() - 1; i >= 0; i--)
        {
            final IbPath path = paths.get(i);
            if (!path.isEstablished() && nowNs - path.deadlineNs >= 0)
            {
                path.fail(path.active ? "connect timed out" : "the peer did not complete the connection");
                expired++;
            }
        }
        return expired;
    }

    private int handleCmEvents()
    {
        int handled = 0;
        CmEventChannel.CmEvent event;
        while ((event = channel.next(0)) != null)
        {
            handled++;
            final int type = event.type();
            final int status = event.status();
            final long id = event.id();
            final long listenId = event.listenId();
            final int dataLength = event.privateDataLength();
            if (dataLength > 0)
            {
                IbPrivateData.decode(event.privateData(), dataLength, decoded);
            }
            else
            {
                decoded.error = "no private data";
            }
            event.ack(); // before anything may destroy its id
            if (type == RDMA_CM_EVENT_CONNECT_REQUEST)
            {
                onConnectRequest(id, listenId);
                continue;
            }
            final IbPath path = pathsById.get(id);
            if (path == null)
            {
                LOG.debug("rdma_cm event {} for an id no longer in use", CmEventChannel.CmEvent.name(type));
                continue;
            }
            onPathEvent(path, type, status);
        }
        return handled;
    }

    private void onPathEvent(final IbPath path, final int type, final int status)
    {
        try
        {
            switch (type)
            {
                case RDMA_CM_EVENT_ADDR_RESOLVED:
                    path.state = IbPath.State.RESOLVING_ROUTE;
                    path.id.resolveRoute(RESOLVE_TIMEOUT_MS);
                    break;
                case RDMA_CM_EVENT_ROUTE_RESOLVED:
                    path.setUp();
                    publishWatched();
                    privateData.encode(path.connection.localAddress(), path.connection.remoteAddress(),
                        IbPrivateData.VERSION_4_1, path.connection.ackSequence(), path.initialCredits());
                    path.state = IbPath.State.CONNECTING;
                    path.id.connect(privateData.bytes, IbPrivateData.LENGTH, IbPath.RETRY_COUNT, IbPath.RNR_RETRY_COUNT);
                    break;
                case RDMA_CM_EVENT_ESTABLISHED:
                    if (path.active)
                    {
                        if (decoded.error != null)
                        {
                            path.fail("the peer's accept: " + decoded.error);
                            return;
                        }
                        copy(decoded, path.peer);
                    }
                    path.onEstablished(nowNs);
                    break;
                case RDMA_CM_EVENT_DISCONNECTED:
                    path.fail("disconnected by the peer (rdma_cm)");
                    break;
                case RDMA_CM_EVENT_REJECTED:
                    path.fail("rejected by the peer (status " + status + ")");
                    break;
                case RDMA_CM_EVENT_ADDR_ERROR:
                case RDMA_CM_EVENT_ROUTE_ERROR:
                case RDMA_CM_EVENT_UNREACHABLE:
                case RDMA_CM_EVENT_CONNECT_ERROR:
                case RDMA_CM_EVENT_DEVICE_REMOVAL:
                    path.fail(CmEventChannel.CmEvent.name(type) + " (status " + status + ")");
                    break;
                default:
                    LOG.debug("{}: rdma_cm event {} ignored", path, CmEventChannel.CmEvent.name(type));
                    break;
            }
        }
        catch (final RuntimeException ex)
        {
            LOG.debug("{}: {}", path, ex.toString());
            path.fail(ex.toString());
        }
    }

    private static void copy(final IbPrivateData.Decoded from, final IbPrivateData.Decoded to)
    {
        to.source = from.source;
        to.destination = from.destination;
        to.version = from.version;
        to.ackSequence = from.ackSequence;
        to.credit = from.credit;
        to.error = from.error;
    }

    private void onConnectRequest(final long rawId, final long listenId)
    {
        final CmId id = CmId.ofRequestId(rawId);
        final InetAddress local = listenerAddresses.get(listenId);
        if (decoded.error != null || local == null)
        {
            reject(id, decoded.error != null ? decoded.error : "not a listener of this stack");
            return;
        }
        final InetAddress remote = decoded.source;
        if (!decoded.destination.equals(local) || remote.equals(local))
        {
            reject(id, "addressed to " + decoded.destination.getHostAddress() + " from " + remote.getHostAddress());
            return;
        }
        final Admission admission = context.admitIncoming(local, remote, nowNs);
        if (admission != Admission.ADMITTED)
        {
            reject(id, "refused by the stack's admission rules: " + admission);
            return;
        }
        final ConnectionPath connection = context.connection(local, remote, this);
        if (connection == null)
        {
            counters.connRefused().incrementOrdered();
            reject(id, "no socket bound to " + local.getHostAddress());
            return;
        }
        final IbPath existing = pathsByConnection.get(connection);
        if (connection.isUp() || existing != null && existing.isEstablished())
        {
            // Ours is stale. Unlike TCP, the newcomer is rejected too, as by the kernel's rds_ib: the peer's
            // next attempt finds the connection down. TCP must take it because a kernel TCP peer may already
            // have sent on it and counts what TCP acked as delivered; an rdma_cm request carries no data.
            counters.connRefused().incrementOrdered();
            reject(id, "connection already up");
            connection.onPeerConnectedAgain();
            return;
        }
        if (existing != null)
        {
            if (existing.active)
            {
                ibCounters.connectRaced.incrementOrdered();
            }
            if (existing.active && Addresses.compare(remote, local) > 0)
            {
                counters.connRefused().incrementOrdered();
                reject(id, "crossed connect: the lower address's request wins");
                return;
            }
            // crossed connect from the lower address, or the peer retrying: that request wins
            pathsByConnection.remove(connection);
            existing.close();
        }
        final IbPath path = new IbPath(this, connection, id, false, nextTag(), nowNs + config.connectTimeout().toNanos());
        copy(decoded, path.peer);
        try
        {
            path.setUp();
            add(path);
            publishWatched();
            privateData.encode(local, remote, IbPrivateData.negotiate(decoded.version), connection.ackSequence(),
                path.initialCredits());
            id.accept(privateData.bytes, IbPrivateData.LENGTH, IbPath.RETRY_COUNT, IbPath.RNR_RETRY_COUNT);
        }
        catch (final RuntimeException ex)
        {
            LOG.debug("accepting {} failed: {}", remote.getHostAddress(), ex.toString());
            if (pathsById.containsKey(id.id()))
            {
                path.close();
            }
            else
            {
                id.close(); // the QP first: nothing may land in the rings once they are freed
                path.free();
            }
        }
    }

    private void reject(final CmId id, final String reason)
    {
        LOG.debug("rejecting an rdma_cm connect request: {}", reason);
        try
        {
            id.reject(IbPrivateData.REJECT, IbPrivateData.REJECT.length);
        }
        catch (final RuntimeException ex)
        {
            LOG.debug("rdma_reject", ex);
        }
        id.close();
    }

    // ------------------------------------------------------------------ the event thread

    /**
     * The event thread: waits in poll(2) for the rdma_cm channel and the completion channels, then wakes the
     * agent and waits until the agent has consumed what made them readable. It never calls verbs.
     */
    private void runEvents()
    {
        while (running)
        {
            final long generation = watchedGeneration;
            final int[] fds = watched;
            seenGeneration = generation;
            final long ready = poller.poll(fds, fds.length, 1000);
            if (!running)
            {
                break;
            }
            if (ready != 0)
            {
                eventsPending = true;
                context.wakeAgent();
                final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
                while (eventsPending && running && System.nanoTime() - deadline < 0)
                {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
        }
    }

    @Override
    public void close()
    {
        running = false;
        if (poller != null)
        {
            poller.wake();
        }
        if (eventThread != null && started)
        {
            try
            {
                eventThread.join(2000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        for (final IbPath path : new ArrayList<>(paths))
        {
            path.close();
        }
        seenGeneration = Long.MAX_VALUE;
        freeRetired();
        for (final CmId id : listeners.values())
        {
            id.close();
        }
        listeners.clear();
        if (channel != null)
        {
            // acknowledge whatever is left so the channel can go
            CmEventChannel.CmEvent event;
            while ((event = channel.next(0)) != null)
            {
                event.ack();
            }
        }
        closeQuietly(channel);
        closeQuietly(probeChannel);
        closeQuietly(poller);
    }
}
