package org.rds4j.faults;

import org.rds4j.RdsStackConfig;
import org.rds4j.TransportType;
import org.rds4j.core.DriverServer;
import org.rds4j.transport.tcp.TcpConfig;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Path;

/**
 * A driver ({@link DriverServer}) of a fault-injection run, as a child process: the one TCP stack of its address,
 * which {@link FaultNode}s started with {@code --driver DIR} attach to. Prints {@code READY} once the driver serves,
 * and runs until killed or until its stdin ends, then closes the driver (exit status 0; 1 on bad arguments).
 */
public final class DriverNode
{
    private DriverNode()
    {
    }

    /**
     * @param args {@code --bind IP --dir DIR [--tcp-port N]}; the address only names the driver's stack, whose
     *             sockets bind the addresses its clients give.
     */
    public static void main(final String[] args) throws IOException, InterruptedException
    {
        InetAddress bind = null;
        Path directory = null;
        int tcpPort = TcpConfig.DEFAULT_TCP_PORT;
        try
        {
            for (int i = 0; i < args.length; i += 2)
            {
                if (i + 1 >= args.length)
                {
                    throw new IllegalArgumentException("no value for " + args[i]);
                }
                final String value = args[i + 1];
                switch (args[i])
                {
                    case "--bind" -> bind = InetAddress.getByName(value);
                    case "--dir" -> directory = Path.of(value);
                    case "--tcp-port" -> tcpPort = Integer.parseInt(value);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (bind == null || directory == null)
            {
                throw new IllegalArgumentException("need --bind IP and --dir DIR");
            }
        }
        catch (final IllegalArgumentException | IOException ex)
        {
            System.err.println("DriverNode: " + ex.getMessage());
            System.exit(1);
            return;
        }
        final RdsStackConfig config = RdsStackConfig.builder()
            .name("driver-" + bind.getHostAddress())
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build())
            .transport(TransportType.TCP)
            .infoFile(false)
            .build();
        try (DriverServer driver = DriverServer.start(config, directory, false))
        {
            System.out.println("READY");
            System.out.flush();
            final InputStream in = System.in;
            while (in.read() >= 0)
            {
                // nothing is read from stdin but its end
            }
        }
    }
}
