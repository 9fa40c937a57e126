package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rds echo --bind IP:PORT [-v]}: binds one socket and sends every message it receives back to its
 * sender, byte for byte, until the process is killed.
 */
@Command(
    name = "echo",
    mixinStandardHelpOptions = true,
    description = {
        "Binds one socket and sends every message it receives back to its sender, until killed.",
        "Try it with a second node: rds demo, or any rds4j program that sends to the bound address."})
public final class EchoCommand implements Callable<Integer>
{
    /** How long a reply may wait for send-buffer room or an uncongested sender before it is dropped. */
    static final Duration REPLY_TIMEOUT = Duration.ofSeconds(5);

    @Spec
    private CommandSpec spec;

    @Mixin
    private StackOptions stackOptions;

    @Option(
        names = "--bind",
        required = true,
        paramLabel = "IP:PORT",
        converter = IpPortConverter.class,
        description = "Local address and port to bind, e.g. 127.0.0.1:4000.")
    private InetSocketAddress bind;

    @Option(names = {"-v", "--verbose"}, description = "Print one line per message: its sender and length.")
    private boolean verbose;

    /** Creates the command; picocli sets its options. */
    public EchoCommand()
    {
    }

    @Override
    public Integer call() throws IOException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final RdsStack stack = RdsStack.open(stackOptions.config("echo"));
        // Ctrl-C / kill: closing the stack closes the socket, which ends serve()
        Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "rds-echo-close"));
        try
        {
            final RdsSocket socket = stack.openSocket();
            socket.bind(bind);
            out.println("echo: bound to " + IpPortConverter.format(socket.localAddress()) + " (tcp port " +
                TcpConfig.of(stack.config()).tcpPort() + ", transport " +
                stack.config().transport().name().toLowerCase(Locale.ROOT) + "); kill to stop");
            out.flush();
            final long echoed = serve(socket, verbose ? out : null);
            out.println("echo: stopped after " + echoed + " messages");
            out.flush();
            return 0;
        }
        finally
        {
            stack.close();
        }
    }

    /**
     * The echo loop: receives (blocking) and sends each message back to its sender, until the socket is
     * closed or the calling thread is interrupted.
     *
     * @param socket a bound socket; it is put in blocking mode and its {@link RdsOptions#SO_SNDTIMEO} is set to
     *               {@link #REPLY_TIMEOUT} so that one stuck peer cannot stop the echo for good.
     * @param log    where to print one line per message (sender, length) and failed replies; {@code null} for
     *               nothing.
     * @return the number of messages echoed.
     * @throws IOException on a failure other than the socket being closed.
     */
    public static long serve(final RdsSocket socket, final PrintWriter log) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(RdsSocket.MAX_MESSAGE_SIZE);
        long echoed = 0;
        try
        {
            socket.configureBlocking(true);
            socket.setOption(RdsOptions.SO_SNDTIMEO, REPLY_TIMEOUT);
            while (socket.isOpen() && !Thread.currentThread().isInterrupted())
            {
                buffer.clear();
                final InetSocketAddress sender = socket.receive(buffer);
                if (sender == null)
                {
                    continue; // a receive timeout, an interrupt (checked above) or the socket closing (checked above)
                }
                buffer.flip();
                final int length = buffer.remaining();
                if (log != null)
                {
                    log.println("from " + IpPortConverter.format(sender) + ", " + length + " bytes");
                    log.flush();
                }
                final int result = socket.send(buffer, sender);
                if (result < 0)
                {
                    if (log != null)
                    {
                        log.println("reply to " + IpPortConverter.format(sender) + " dropped: " + RdsResult.name(result));
                        log.flush();
                    }
                    if (result == RdsResult.EINTR)
                    {
                        break;
                    }
                }
                else
                {
                    echoed++;
                }
            }
        }
        catch (final IOException e)
        {
            if (socket.isOpen())
            {
                throw e;
            }
            // closed under us: the normal way to stop
        }
        return echoed;
    }
}
