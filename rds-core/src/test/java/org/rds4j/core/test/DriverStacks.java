package org.rds4j.core.test;

import org.agrona.concurrent.IdleStrategy;
import org.rds4j.RdsPeerListener;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.StackOptions;
import org.rds4j.core.DriverServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.stream.Stream;

/**
 * Stacks attached to drivers: each {@link #open} starts a driver whose stack is on one {@link MemoryNetwork}, in a
 * directory of its own, and returns a stack attached to it, so that a test of the socket contract runs through the
 * driver's boundary unchanged. Tests only.
 */
public final class DriverStacks extends StackFixture
{
    private final MemoryNetwork network = new MemoryNetwork();
    private final List<DriverServer> drivers = new ArrayList<>();
    private final Path root;

    /** Drivers under a new temporary directory, deleted at {@link #close()}. */
    public DriverStacks()
    {
        try
        {
            root = Files.createTempDirectory("rds4j-drivers");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public RdsStackConfig config(final String name)
    {
        return RdsStackConfig.builder().name(name).infoFile(false).build();
    }

    /** A stack attached to a driver of its own: closing it stops the driver too, as closing a stack ends the node. */
    @Override
    public RdsStack open(final RdsStackConfig config)
    {
        return attach(config, start(config));
    }

    /**
     * @param driver a running driver.
     * @param name   the client stack's name ({@link #config}).
     * @return a client stack attached to {@code driver}, which the caller closes.
     */
    public RdsStack attach(final DriverServer driver, final String name)
    {
        return RdsStack.open(config(name).toBuilder().driverDirectory(driver.directory().toString()).build());
    }

    private RdsStack attach(final RdsStackConfig config, final DriverServer driver)
    {
        return track(new Node(RdsStack.open(config.toBuilder().driverDirectory(driver.directory().toString()).build()),
            driver));
    }

    /**
     * @param config the driver's stack's configuration.
     * @return a running driver on the network, closed by {@link #close()}.
     */
    public DriverServer start(final RdsStackConfig config)
    {
        return start(config, network.options());
    }

    /**
     * @param config the driver's stack's configuration.
     * @param idle   how the driver's agent idles (a test's own: one that sleeps until woken, say).
     * @return a running driver on the network, closed by {@link #close()}.
     */
    public DriverServer start(final RdsStackConfig config, final IdleStrategy idle)
    {
        return start(config, network.options().idleStrategy(idle));
    }

    private DriverServer start(final RdsStackConfig config, final StackOptions options)
    {
        try
        {
            final DriverServer driver = DriverServer.start(config, options,
                root.resolve(config.name() + "-" + drivers.size()), false);
            drivers.add(driver);
            return driver;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Before each request of a {@link PingPong}: the driver's agent parked, 50 ms more (its parks then last tens of
     * milliseconds, so only a wake-up or its 100 ms timers end them), and the agent parked and the conductor asleep
     * again. A state, not a time only: with both cores kept busy the agent's idle yields outlasted a 50 ms pause.
     *
     * @param driver a running driver.
     * @return the pause.
     */
    public static PingPong.Pause asleep(final DriverServer driver)
    {
        final String name = driver.stack().config().name();
        final Thread agent = Await.thread("rds4j-agent-" + name);
        final Thread conductor = Await.thread("rds4j-driver-" + name);
        return PingPong.Pause.until(() -> Await.idling(agent), () -> "the driver's agent parked")
            .then(PingPong.Pause.nanos(i -> 50_000_000L))
            .then(PingPong.Pause.until(() -> Await.idling(agent) && Await.idling(conductor),
                () -> "the driver's agent parked and its conductor asleep"));
    }

    /** A client stack and its driver, as one node. */
    private static final class Node implements RdsStack
    {
        private final RdsStack client;
        private final DriverServer driver;

        Node(final RdsStack client, final DriverServer driver)
        {
            this.client = client;
            this.driver = driver;
        }

        @Override
        public RdsSocket openSocket() throws IOException
        {
            return client.openSocket();
        }

        @Override
        public RdsSelector openSelector() throws IOException
        {
            return client.openSelector();
        }

        @Override
        public RdsStack setPeerListener(final Executor executor, final RdsPeerListener listener)
        {
            client.setPeerListener(executor, listener);
            return this;
        }

        @Override
        public RdsStackConfig config()
        {
            return client.config();
        }

        @Override
        public Map<String, Long> counters()
        {
            return client.counters();
        }

        @Override
        public List<ConnectionInfo> connections()
        {
            return client.connections();
        }

        @Override
        public int invoke()
        {
            return client.invoke();
        }

        @Override
        public void close()
        {
            client.close();
            driver.close();
        }

        @Override
        public String toString()
        {
            return client.toString();
        }
    }

    /** A stack attached to a driver whose stack's agent idles through the gate. */
    @Override
    public RdsStack openGated(final String name, final AgentGate gate)
    {
        final RdsStackConfig config = config(name);
        return attach(config, startGated(config, gate));
    }

    /**
     * @param config the driver's stack's configuration.
     * @param gate   holds the driver's agent when the test asks (its heartbeat then stands still); released by
     *               {@link #close()}.
     * @return a running driver on the network whose agent idles through the gate.
     */
    public DriverServer startGated(final RdsStackConfig config, final AgentGate gate)
    {
        return start(config, trackGate(gate));
    }

    @Override
    protected void closed()
    {
        for (int i = drivers.size() - 1; i >= 0; i--)
        {
            drivers.get(i).close();
        }
        drivers.clear();
        try (Stream<Path> files = Files.walk(root))
        {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
