package org.rds4j.core;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.IdleStrategy;
import org.rds4j.RdsException;
import org.rds4j.RdsPeerListener;
import org.rds4j.RdsResult;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.Threading;
import org.rds4j.TransportType;
import org.rds4j.core.spi.Admission;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportContext;
import org.rds4j.core.spi.TransportFactory;
import org.rds4j.core.wire.CongestionMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;

import javax.management.ObjectName;

/**
 * The rds4j stack: transports found with {@link ServiceLoader} (or given in {@link StackOptions}), a loopback
 * transport, local endpoints with
 * their congestion maps, counters, and one {@link StackAgent} with the configured idle strategy.
 * <p>
 * Threads: an {@link Invoker} runs the agent's duty cycle on application threads, in every call that waits
 * and after a blocking send, and with {@link Threading#INVOKER} through {@link #invoke()}. With
 * {@link Threading#AGENT} the stack also has its own thread ({@code rds4j-agent-<name>}), which drives the
 * stack whenever no application thread is waiting in a call. Application threads send and receive through
 * per-socket queues and send control commands through one command queue, whoever runs the duty cycle.
 */
public final class CoreStack implements RdsStack
{
    private static final Logger LOG = LoggerFactory.getLogger(CoreStack.class);
    /** How long close waits for the agent thread to leave its loop, which it does at its next check. */
    private static final long AGENT_JOIN_MS = 10_000;

    private final RdsStackConfig config;
    /** The info file {@code rds info} reads, holding the counters; null when disabled or not creatable. */
    private final StackInfoFile infoFile;
    private final StackCounters counters;
    private final MessagePool pool;
    private final ConcurrentHashMap<InetAddress, LocalEndpoint> endpoints = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<InetAddress, CongestionMap> congestionMaps = new ConcurrentHashMap<>();
    private final Function<InetAddress, CongestionMap> newCongestionMap;
    private final Set<RdsSocketImpl> sockets = ConcurrentHashMap.newKeySet();
    private final List<Transport> transports;
    private final StackAgent agent;
    private final WakeSignal wakeSignal;
    /** AGENT mode: the thread that drives the stack while no application thread does; null in INVOKER mode. */
    private final Thread agentThread;
    /** Runs the duty cycle on whichever thread drives the stack. */
    private final Invoker invoker;
    private final AgentCalls calls;
    /** The stack in JMX: registered last, once the stack runs; unregistered first on close. */
    private final StackMBean mbean;
    private volatile boolean closed;

    private CoreStack(final RdsStackConfig config, final StackOptions options)
    {
        this.config = config;
        this.infoFile = StackInfoFile.open(config);
        this.counters = infoFile == null ? new StackCounters() : infoFile.newCounters();
        this.pool = new MessagePool(counters.poolAlloc);
        final TransportContext context = new Context();
        final List<Transport> found = new ArrayList<>();
        final Iterable<TransportFactory> factories = options.transports() != null ? options.transports() :
            ServiceLoader.load(TransportFactory.class, CoreStack.class.getClassLoader());
        for (final TransportFactory factory : factories)
        {
            found.add(factory.create(context));
        }
        final LoopbackTransport loopback = new LoopbackTransport(context);
        found.add(loopback);
        this.transports = Collections.unmodifiableList(found);
        this.newCongestionMap = options.congestionMaps();
        this.agent = new StackAgent(config, counters, pool, transports, loopback, endpoints, congestionMaps,
            newCongestionMap, options.nanoClock(), options.epochClock());
        agent.infoFile(infoFile);
        agent.driverHeartbeat(options.driverHeartbeat());
        this.wakeSignal = new WakeSignal(options.nanoClock());
        final IdleStrategy idle = options.idleStrategy() == null ?
            IdleStrategies.parse(config.idleStrategy(), wakeSignal) :
            IdleStrategies.wakeable(options.idleStrategy(), wakeSignal);
        // every strategy that sleeps looks for work handed over as it begins to; rds4j's own also parks until the
        // next timer deadline rather than a fixed 1 ms, so an idle stack sleeps
        wakeSignal.idleBounds(agent);
        if (idle instanceof ParkingBackoffIdleStrategy)
        {
            // rds4j's own strategy parks through the signal: let the first transport that can block on its
            // I/O do the waiting, so that arriving frames end the park at once
            transports.stream().map(Transport::idleWaiter).filter(w -> w != null).findFirst()
                .ifPresent(wakeSignal::idleWaiter);
        }
        final ErrorHandler errorHandler = throwable -> LOG.error("{}: unexpected error in the agent's duty cycle", config.name(), throwable);
        this.invoker = new Invoker(agent, idle, wakeSignal, errorHandler, config.threading() == Threading.AGENT,
            agent::stopping, options.agentTurns(), agent::borrowedCycle);
        if (config.threading() == Threading.INVOKER)
        {
            this.agentThread = null;
        }
        else
        {
            this.agentThread = new Thread(invoker::runAgent, agent.roleName());
            agentThread.setDaemon(true);
            agent.extension(options.agentExtension(), agentThread);
            wakeSignal.agentThread(agentThread);
            agentThread.start();
        }
        this.calls = new AgentCalls(this, invoker, counters.sendCallerCycles);
        this.mbean = StackMBean.register(this);
        LOG.debug("{} started ({}) with transports {}", config.name(), config.threading(),
            transports.stream().map(Transport::name).toList());
    }

    /**
     * Opens a stack with the configuration's idle strategy.
     *
     * @param config the configuration.
     * @return a running stack.
     */
    public static CoreStack open(final RdsStackConfig config)
    {
        return open(config, new StackOptions());
    }

    /**
     * Opens a stack whose agent idles with a given strategy (overriding {@link RdsStackConfig#idleStrategy()}).
     *
     * @param config       the configuration.
     * @param idleStrategy how the agent waits when it has nothing to do; it should park rather than spin.
     * @return a running stack.
     */
    public static CoreStack open(final RdsStackConfig config, final IdleStrategy idleStrategy)
    {
        return open(config, new StackOptions().idleStrategy(idleStrategy));
    }

    /**
     * Opens a stack with options beyond the configuration: clocks, an idle strategy, the transports.
     *
     * @param config  the configuration.
     * @param options the clocks, idle strategy and transports; read here only.
     * @return a running stack.
     */
    public static CoreStack open(final RdsStackConfig config, final StackOptions options)
    {
        return new CoreStack(config, options);
    }

    @Override
    public RdsSocket openSocket() throws IOException
    {
        if (closed)
        {
            throw new ClosedChannelException();
        }
        final RdsSocketImpl socket = new RdsSocketImpl(this);
        sockets.add(socket);
        return socket;
    }

    @Override
    public RdsSelector openSelector() throws IOException
    {
        if (closed)
        {
            throw new ClosedChannelException();
        }
        return new SelectorImpl(calls);
    }

    @Override
    public RdsStack setPeerListener(final Executor executor, final RdsPeerListener listener)
    {
        if (listener != null)
        {
            Objects.requireNonNull(executor, "executor");
        }
        agent.peerEvents.listener(executor, listener);
        return this;
    }

    @Override
    public RdsStackConfig config()
    {
        return config;
    }

    @Override
    public Map<String, Long> counters()
    {
        return counters.snapshot();
    }

    @Override
    public int invoke()
    {
        if (agentThread != null)
        {
            throw new IllegalStateException("stack " + config.name() + " runs its own agent thread (Threading.AGENT): " +
                "invoke() needs a stack opened with RdsStackConfig.builder().threading(Threading.INVOKER)");
        }
        return invoker.invoke();
    }

    @Override
    public List<ConnectionInfo> connections()
    {
        return closed ? List.of() : calls.call(StackAgent::connectionInfos);
    }

    /**
     * Drops the transport path of every connection as a network failure would; they reconnect and
     * retransmit. For fault-injection tests.
     */
    public void dropConnections()
    {
        calls.call(stackAgent ->
        {
            stackAgent.dropConnections();
            return null;
        });
    }

    /**
     * @param name a transport's {@link Transport#name()}.
     * @return that transport of this stack, or null; for tests and tools.
     */
    public Transport transport(final String name)
    {
        for (final Transport transport : transports)
        {
            if (transport.name().equals(name))
            {
                return transport;
            }
        }
        return null;
    }

    /** @return the path of this stack's info file (see {@link StackInfoReader}), or null if it has none. */
    public Path infoFile()
    {
        return infoFile == null ? null : infoFile.path();
    }

    /** @return the live counters, for tools and tests; {@link #counters()} gives a snapshot. */
    public StackCounters stackCounters()
    {
        return counters;
    }

    /**
     * @return the stack's JMX view, the MBean it registers while open (also for other monitoring bindings, such
     *         as rds4j-micrometer's); its attributes are read on demand.
     */
    public RdsStackMXBean mxBean()
    {
        return mbean;
    }

    /** @return the name the stack's MBean is registered under, or null if it is not (closed, or registration failed). */
    ObjectName objectName()
    {
        return mbean.objectName();
    }

    /** @return the agent, whose state a thread holding the duty cycle may use ({@link AgentCalls#tryHold}). */
    StackAgent agent()
    {
        return agent;
    }

    /** @return how application threads wait for the agent (blocking calls, calls run on the agent). */
    AgentCalls calls()
    {
        return calls;
    }

    /** @return whether {@link #close()} has begun. */
    boolean isClosed()
    {
        return closed;
    }

    MessagePool pool()
    {
        return pool;
    }

    /** Picks the transport a socket binding {@code address} uses; {@code EADDRNOTAVAIL} if none can. */
    Transport selectTransport(final TransportType type, final InetAddress address) throws RdsException
    {
        Transport tcp = null;
        String reason = null;
        for (final Transport transport : transports)
        {
            if (transport.type() == null)
            {
                continue;
            }
            if (!transport.canServe(address))
            {
                if (transport.type() == type)
                {
                    reason = transport.unavailableReason(address);
                }
                continue;
            }
            if (transport.type() == type || (type == TransportType.AUTO && transport.type() == TransportType.IB))
            {
                return transport;
            }
            if (transport.type() == TransportType.TCP)
            {
                tcp = transport;
            }
        }
        if (type == TransportType.AUTO && tcp != null)
        {
            return tcp;
        }
        throw new RdsException(RdsResult.EADDRNOTAVAIL, "no " + type.name().toLowerCase() +
            " transport can serve " + address.getHostAddress() + (reason == null ? "" : ": " + reason));
    }

    LocalEndpoint endpoint(final InetAddress address)
    {
        return endpoints.computeIfAbsent(address, a ->
        {
            final LocalEndpoint endpoint = new LocalEndpoint(a, newCongestionMap.apply(a));
            congestionMaps.put(a, endpoint.congestionMap);
            return endpoint;
        });
    }

    /** Any thread: the congestion map of a local or remote address, or null if none is known. */
    CongestionMap congestionMap(final InetAddress address)
    {
        return congestionMaps.get(address);
    }

    void send(final StackCommand command)
    {
        agent.send(command);
        wakeAgent();
    }

    /**
     * Any thread: work was handed to the stack. Wakes the thread leading the duty cycle if it is parked, so that
     * it sees the work at once, and in AGENT mode an agent thread that stands aside while no one leads.
     */
    void wakeAgent()
    {
        wakeSignal.wake();
        invoker.handOver();
    }

    void onSocketClosed(final RdsSocketImpl socket)
    {
        sockets.remove(socket);
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        mbean.unregister();
        for (final RdsSocketImpl socket : sockets.toArray(new RdsSocketImpl[0]))
        {
            // a stack's close does not wait for acks (SO_LINGER): the application can await each socket's drain
            socket.closeNow();
        }
        agent.beginClose();
        wakeSignal.wake();
        // the agent's onClose on this thread, after a duty cycle another thread may be running
        invoker.close();
        if (agentThread != null && agentThread != Thread.currentThread())
        {
            joinAgentThread();
        }
        if (infoFile != null)
        {
            infoFile.close();
        }
        LOG.debug("{} closed", config.name());
    }

    private void joinAgentThread()
    {
        try
        {
            agentThread.join(AGENT_JOIN_MS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        if (agentThread.isAlive())
        {
            LOG.warn("{}: the agent thread had not stopped {} ms after close", config.name(), AGENT_JOIN_MS);
        }
    }

    @Override
    public String toString()
    {
        return "CoreStack[" + config.name() + "]";
    }

    private final class Context implements TransportContext
    {
        private final PeerAdmission admission = new PeerAdmission(config, counters);

        @Override
        public RdsStackConfig config()
        {
            return config;
        }

        @Override
        public StackCounters counters()
        {
            return counters;
        }

        @Override
        public ConnPath connection(final InetAddress local, final InetAddress remote, final Transport transport)
        {
            final ConnPath connection = agent.connection(local, remote, transport);
            if (connection != null && !agent.isLoopback(transport))
            {
                // the loopback transport's pairs are this stack's own sockets: not peers
                admission.onConnection(local, remote);
            }
            return connection;
        }

        @Override
        public Admission admitIncoming(final InetAddress local, final InetAddress remote, final long nowNs)
        {
            return admission.admitIncoming(local, remote, nowNs);
        }

        @Override
        public boolean admitOutgoing(final InetAddress local, final InetAddress remote)
        {
            return admission.admitOutgoing(local, remote);
        }

        @Override
        public void wakeAgent()
        {
            CoreStack.this.wakeAgent();
        }
    }
}
