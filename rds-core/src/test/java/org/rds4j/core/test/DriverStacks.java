package org.rds4j.core.test;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.CoreStack;
import org.rds4j.core.DriverServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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

    @Override
    public RdsStack open(final RdsStackConfig config)
    {
        return track(RdsStack.open(config.toBuilder().driverDirectory(start(config).directory().toString()).build()));
    }

    /**
     * @param config the driver's stack's configuration.
     * @return a running driver on the network, closed by {@link #close()}.
     */
    public DriverServer start(final RdsStackConfig config)
    {
        try
        {
            final DriverServer driver = DriverServer.start(config, network.options(),
                root.resolve(config.name() + "-" + drivers.size()), false);
            drivers.add(driver);
            return driver;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public CoreStack openGated(final String name, final AgentGate gate)
    {
        throw new UnsupportedOperationException("a driver's stack is not gated");
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
