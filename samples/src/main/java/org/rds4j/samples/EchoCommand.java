package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSelectionKey;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rds echo --bind IP:PORT [--bind IP:PORT ...] [-v]}: binds one socket per address and sends every message
 * they receive back to its sender, byte for byte, until the process is killed. One thread serves every socket,
 * waiting on all of them in an {@link RdsSelector}.
 */
@Command(
    name = "echo",
    mixinStandardHelpOptions = true,
    description = {
        "Binds one socket per --bind and sends every message they receive back to its sender, until killed.",
        "One thread serves all of them through a selector.",
        "Try it with a second node: rds demo, or any rds4j program that sends to a bound address."})
public final class EchoCommand implements Callable<Integer>
{
    /** How long a reply may wait for send-buffer room or an uncongested sender before it is dropped. */
    static final Duration REPLY_TIMEOUT = Duration.ofSeconds(5);
    /** Messages echoed from one socket before the loop looks at the others. */
    private static final int BATCH = 64;

    @Spec
    private CommandSpec spec;

    @Mixin
    private StackOptions stackOptions;

    @Option(
        names = "--bind",
        required = true,
        paramLabel = "IP:PORT",
        converter = IpPortConverter.class,
        description = "Local address and port to bind, e.g. 127.0.0.1:4000; repeat it to serve several sockets.")
    private List<InetSocketAddress> binds;

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
        // Ctrl-C / kill: closing the stack closes the sockets, which ends serve()
        Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "rds-echo-close"));
        try
        {
            final List<RdsSocket> sockets = new ArrayList<>();
            for (final InetSocketAddress bind : binds)
            {
                sockets.add(stack.openSocket().bind(bind));
            }
            out.println("echo: bound to " + sockets.stream().map(s -> IpPortConverter.format(s.localAddress()))
                .collect(Collectors.joining(", ")) + " (tcp port " + TcpConfig.of(stack.config()).tcpPort() +
                ", transport " + stack.config().transport().name().toLowerCase(Locale.ROOT) + "); kill to stop");
            out.flush();
            final long echoed = serve(stack, sockets, verbose ? out : null);
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
     * The echo loop: waits on every socket in one selector, and sends each message a socket receives back to its
     * sender, until every socket is closed or the calling thread is interrupted.
     *
     * @param stack   the sockets' stack.
     * @param sockets bound sockets; each is put in blocking mode with its {@link RdsOptions#SO_SNDTIMEO} set to
     *                {@link #REPLY_TIMEOUT}, so that a reply waits for room but one stuck peer cannot stop the echo
     *                for good. Messages are taken with {@code poll}, which never waits.
     * @param log     where to print one line per message (sender, length) and failed replies; {@code null} for
     *                nothing.
     * @return the number of messages echoed.
     * @throws IOException on a failure other than a socket being closed.
     */
    public static long serve(final RdsStack stack, final List<RdsSocket> sockets, final PrintWriter log)
        throws IOException
    {
        final Replier[] repliers = new Replier[sockets.size()];
        try (RdsSelector selector = stack.openSelector())
        {
            int open = 0;
            for (final RdsSocket socket : sockets)
            {
                try
                {
                    socket.configureBlocking(true);
                    socket.setOption(RdsOptions.SO_SNDTIMEO, REPLY_TIMEOUT);
                    repliers[open] = new Replier(socket, log);
                    selector.register(socket, RdsSelector.OP_READ, repliers[open]);
                    open++;
                }
                catch (final ClosedChannelException closed)
                {
                    // closed before it was served: nothing to echo
                }
            }
            while (open > 0 && !Thread.currentThread().isInterrupted())
            {
                selector.select();
                for (final RdsSelectionKey key : selector.selectedKeys())
                {
                    if (key.isError())
                    {
                        open--;
                        continue;
                    }
                    final Replier replier = (Replier)key.attachment();
                    try
                    {
                        key.socket().poll(replier, BATCH);
                    }
                    catch (final ClosedChannelException closed)
                    {
                        // the next select reports it
                    }
                    catch (final UncheckedIOException e)
                    {
                        throw e.getCause();
                    }
                }
                selector.selectedKeys().clear();
            }
        }
        long echoed = 0;
        for (final Replier replier : repliers)
        {
            echoed += replier == null ? 0 : replier.echoed;
        }
        return echoed;
    }

    /** Sends each message of its socket back to its sender. */
    private static final class Replier implements RdsMessageHandler
    {
        private final RdsSocket socket;
        private final PrintWriter log;
        private long echoed;

        Replier(final RdsSocket socket, final PrintWriter log)
        {
            this.socket = socket;
            this.log = log;
        }

        @Override
        public void onMessage(final InetSocketAddress sender, final ByteBuffer payload)
        {
            final int length = payload.remaining();
            if (log != null)
            {
                log.println("from " + IpPortConverter.format(sender) + ", " + length + " bytes");
                log.flush();
            }
            final int result;
            try
            {
                result = socket.send(payload, sender);
            }
            catch (final IOException e)
            {
                if (socket.isOpen())
                {
                    throw new UncheckedIOException(e);
                }
                return; // closed under us: the normal way to stop
            }
            if (result >= 0)
            {
                echoed++;
            }
            else if (log != null)
            {
                log.println("reply to " + IpPortConverter.format(sender) + " dropped: " + RdsResult.name(result));
                log.flush();
            }
        }
    }
}
