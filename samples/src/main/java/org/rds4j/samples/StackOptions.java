package org.rds4j.samples;

import java.util.Iterator;
import java.util.List;
import java.util.Locale;

import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * The stack options every {@code rds} command takes, as a picocli mixin ({@code @Mixin StackOptions}):
 * {@code --tcp-port}, {@code --transport} and {@code --driver}. {@link #config(String)} turns them into an
 * {@link RdsStackConfig}; an option not given leaves the setting to its system property, environment variable
 * or default ({@code rds4j.tcp.port}, {@code RDS4J_TCP_PORT}; {@code rds4j.transport}, {@code RDS4J_TRANSPORT}).
 */
public final class StackOptions
{
    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(
        names = "--tcp-port",
        paramLabel = "PORT",
        description = "TCP port RDS over TCP listens on and connects to; every node must use the same. " +
            "Default: rds4j.tcp.port, else RDS4J_TCP_PORT, else " + TcpConfig.DEFAULT_TCP_PORT + ".")
    private Integer tcpPort;

    @Option(
        names = "--transport",
        paramLabel = "tcp|ib|auto",
        converter = TransportConverter.class,
        completionCandidates = TransportNames.class,
        description = "Transport of the sockets: ${COMPLETION-CANDIDATES}. " +
            "Default: rds4j.transport, else RDS4J_TRANSPORT, else auto.")
    private TransportType transport;

    @Option(
        names = "--driver",
        paramLabel = "DIR",
        arity = "0..1",
        fallbackValue = "",
        description = "Attach to the driver (rds driver) in DIR instead of running a stack in this process; " +
            "with no DIR, the default driver directory. Default: rds4j.driver.dir, else RDS4J_DRIVER_DIR, else none.")
    private String driver;

    /** Creates the options with their defaults; picocli sets them from the command line. */
    public StackOptions()
    {
    }

    /** @return the value of {@code --tcp-port}, or null if not given. */
    public Integer tcpPort()
    {
        return tcpPort;
    }

    /** @return the value of {@code --transport}, or null if not given. */
    public TransportType transport()
    {
        return transport;
    }

    /**
     * A builder holding these options, for a command that sets more.
     *
     * @param name the stack's name (thread names, logs).
     * @return a builder with the name, and the TCP port and the transport if given.
     * @throws ParameterException when {@code --tcp-port} is out of range.
     */
    public RdsStackConfig.Builder configBuilder(final String name)
    {
        final RdsStackConfig.Builder builder = RdsStackConfig.builder().name(name);
        if (driver != null)
        {
            builder.driverDirectory(driver.isEmpty() ? RdsStackConfig.defaultDriverDirectory() : driver);
        }
        if (transport != null)
        {
            builder.transport(transport);
        }
        if (tcpPort == null)
        {
            return builder;
        }
        if (tcpPort < 1 || tcpPort > 65535)
        {
            final String message = "Invalid value for option '--tcp-port': " + tcpPort + " is not in 1..65535";
            if (mixee != null)
            {
                throw new ParameterException(mixee.commandLine(), message);
            }
            throw new IllegalArgumentException(message);
        }
        return builder.transportConfig(TcpConfig.builder().tcpPort(tcpPort).build());
    }

    /**
     * @param name the stack's name (thread names, logs).
     * @return the configuration of a stack opened with these options.
     * @throws ParameterException when {@code --tcp-port} is out of range.
     */
    public RdsStackConfig config(final String name)
    {
        return configBuilder(name).build();
    }

    /** Converts {@code tcp}, {@code ib} or {@code auto}, in any case, to a {@link TransportType}. */
    public static final class TransportConverter implements ITypeConverter<TransportType>
    {
        @Override
        public TransportType convert(final String value)
        {
            for (final TransportType type : TransportType.values())
            {
                if (type.name().equalsIgnoreCase(value.trim()))
                {
                    return type;
                }
            }
            throw new TypeConversionException("'" + value + "' is not a transport: expected " + String.join(", ", new TransportNames()));
        }
    }

    /** The transport names as typed on the command line: {@code tcp, ib, auto}. */
    static final class TransportNames implements Iterable<String>
    {
        @Override
        public Iterator<String> iterator()
        {
            return List.of(TransportType.TCP, TransportType.IB, TransportType.AUTO).stream()
                .map(t -> t.name().toLowerCase(Locale.ROOT))
                .iterator();
        }
    }
}
