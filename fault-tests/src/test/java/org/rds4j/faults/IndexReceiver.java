package org.rds4j.faults;

import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.transport.tcp.TcpConfig;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * A child-process receiver for {@link PeerRestartTest}: binds {@code --bind}:{@code --port} on a stack using
 * {@code --tcp-port}, prints {@code READY}, then one line {@code R <index>} per message received (the index is
 * the message's first 8 bytes), until killed. Tests only.
 */
public final class IndexReceiver
{
    private IndexReceiver()
    {
    }

    /**
     * @param args {@code --bind IP --port N --tcp-port N}.
     */
    public static void main(final String[] args) throws Exception
    {
        InetAddress bind = null;
        int port = 0;
        int tcpPort = 0;
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--bind" -> bind = InetAddress.getByName(args[i + 1]);
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--tcp-port" -> tcpPort = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        final PrintStream out = System.out;
        try (RdsStack stack = RdsStack.open(RdsStackConfig.builder().name("receiver")
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build()).infoFile(false).build());
             RdsSocket socket = stack.openSocket())
        {
            socket.bind(new InetSocketAddress(bind, port));
            out.println("READY");
            out.flush();
            final ByteBuffer message = ByteBuffer.allocate(64 * 1024);
            while (true)
            {
                message.clear();
                socket.receive(message);
                out.println("R " + message.getLong(0));
                out.flush();
            }
        }
    }
}
