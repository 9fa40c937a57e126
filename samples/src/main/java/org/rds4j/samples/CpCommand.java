package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.transport.tcp.TcpConfig;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code rds cp SRC IP:PORT:PATH} copies a file of any size to a server, and {@code rds cp --serve DIR --bind
 * IP:PORT [--once]} is that server. Both take the stack options ({@code --tcp-port}, {@code --transport}).
 *
 * <h2>Client</h2>
 * Binds one socket to {@code -I LOCAL_IP} (default 127.0.0.1) on an ephemeral port and sends the file to the
 * server's socket {@code IP:PORT}, to be written at {@code PATH}, relative to the server's directory. An
 * empty {@code PATH}, or one ending with {@code /}, gets {@code SRC}'s file name appended. Exit status 0 only
 * when the server replied OK with the size and SHA-256 the client computed itself; 1 on any failure (refused,
 * digest mismatch, timeout); 2 for a usage error. A progress bar (percent, bytes, MB/s, ETA) goes to stderr
 * when the process is interactive ({@link System#console()} is not {@code null}, the best a JVM can tell) or
 * with {@code --progress}; {@code --quiet} turns it and the final line off.
 *
 * <h2>Server</h2>
 * Binds {@code --bind IP:PORT} and receives files into {@code DIR} until killed, several clients at once;
 * with {@code --once} it exits after the first transfer that ends, with status 0 if that file was put in
 * place and 1 if it was refused or failed. One line per finished transfer goes to stdout.
 *
 * <h2>Protocol</h2>
 * Messages are rds4j datagrams between the client's socket and the server's; their byte layout is in
 * {@link CpProtocol}. Every message carries a random 64-bit transfer id chosen by the client.
 * <ol>
 * <li>The client sends {@code START(id, size, path)}, then {@code DATA(id, offset, bytes)} chunks of 64 KiB in
 *     file order, then {@code END(id, sha256)} with the SHA-256 of the whole file, without waiting in between.</li>
 * <li>On START the server checks the path: relative, not empty, not ending with {@code /}, no {@code ..}
 *     element, no NUL, and not leaving the directory through a symbolic link; it creates missing parent
 *     directories and opens a temporary file {@code .NAME.<id>.rdscp-tmp} next to the target. A refused START
 *     gets {@code ERROR(id, reason)} at once, and the transfer's later DATA and END are dropped silently.</li>
 * <li>On DATA the server checks the offset is the number of bytes written so far and the size is not exceeded,
 *     writes the bytes and feeds them to its own SHA-256.</li>
 * <li>On END the server checks it has {@code size} bytes and that its digest equals the client's, syncs the
 *     temporary file and renames it over the target atomically, then replies {@code OK(id, size, sha256)}
 *     with the digest it computed. Any failure deletes the temporary file and replies
 *     {@code ERROR(id, reason)}; nothing is ever written at the target path but a complete, verified file.</li>
 * <li>The client checks the reply: OK with its own size and digest is success, anything else failure. While
 *     it sends, it polls for an early ERROR and stops sending when one arrives.</li>
 * </ol>
 * There are no acknowledgements or retransmissions in the protocol: rds4j delivers reliably, in order and
 * exactly once per node pair, so the server sees DATA in file order. Flow control is rds4j's: the client's
 * sends block (up to {@code --timeout}, as {@code SO_SNDTIMEO}) while its send buffer is full or the
 * server's port is congested, which happens when the server's socket holds more than its {@code SO_RCVBUF}
 * of undelivered bytes; the server drains its socket on one thread and writes straight to the file. A
 * transfer the server hears nothing of for {@link CpServer#IDLE_LIMIT} is abandoned and its temporary file
 * deleted.
 * <p>
 * rds4j detects a restarted peer by the generation number in each connection's handshake: a long-running server
 * forgets the sequence and acks of an earlier client process at the same address when a new one connects, and
 * nothing meant for the earlier process reaches the new one. If the server restarts during a transfer, what the client had sent to the old server
 * process is dropped, not delivered to the new one ({@code send_flushed_peer_restart}); the new server drops
 * the rest of the DATA of a transfer it never started and answers END with ERROR (unknown transfer), or the
 * client's wait for a reply times out: exit status 1. Should a message ever be lost or reordered all the same,
 * the server's offset check or the two digest checks turn it into an ERROR and exit status 1, never into a
 * wrong file at the target path.
 */
@Command(
    name = "cp",
    mixinStandardHelpOptions = true,
    customSynopsis = {
        "rds cp [-q] [--progress] [-I=LOCAL_IP] [--timeout=SECONDS] [STACK]",
        "       SRC IP:PORT:PATH",
        "   or: rds cp --serve=DIR --bind=IP:PORT [--once] [STACK]",
        "STACK: [--tcp-port=PORT] [--transport=tcp|ib|auto]"},
    description = {
        "Copies SRC to the 'rds cp --serve' server at IP:PORT, as PATH under its directory, verified with SHA-256; "
            + "or, with --serve, is that server: receives files into DIR until killed (--once: one file).",
        "Exit status 0 on a verified copy (server: --once and the file was received), 1 on failure, 2 for a usage error."})
public final class CpCommand implements Callable<Integer>
{
    /** Exit status of a failed copy. */
    static final int EXIT_FAILED = 1;

    @Spec
    private CommandSpec spec;

    @Mixin
    private StackOptions stackOptions;

    @Parameters(index = "0", arity = "0..1", paramLabel = "SRC", description = "Client: the file to send.")
    private Path source;

    @Parameters(index = "1", arity = "0..1", paramLabel = "IP:PORT:PATH",
        description = "Client: the server's socket and the target path relative to its directory "
            + "(empty or ending with / appends SRC's name), e.g. 127.0.0.2:4000:backups/a.bin.")
    private String destination;

    @Option(names = "--serve", paramLabel = "DIR", description = "Server: receive files into this directory.")
    private Path serveDirectory;

    @Option(names = "--bind", paramLabel = "IP:PORT", converter = IpPortConverter.class,
        description = "Server: the address and port to receive on, e.g. 127.0.0.2:4000.")
    private InetSocketAddress bind;

    @Option(names = "--once", description = "Server: exit after the first transfer ends (status 0 if the file was received).")
    private boolean once;

    @Option(names = {"-I", "--interface"}, paramLabel = "LOCAL_IP", defaultValue = "127.0.0.1",
        converter = IpConverter.class,
        description = "Client: local address to bind (on an ephemeral port). Default: ${DEFAULT-VALUE}.")
    private InetAddress local;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "30", converter = DurationConverter.class,
        description = "Client: how long a send may wait for room, and how long to wait for the server's reply, in "
            + "seconds or with a unit (500ms, 2m). Default: ${DEFAULT-VALUE} s.")
    private Duration timeout;

    @Option(names = "--progress", description = "Client: show the progress bar on stderr even when not interactive.")
    private boolean progress;

    @Option(names = {"-q", "--quiet"}, description = "Client: no progress bar and no summary line; errors only.")
    private boolean quiet;

    /** Creates the command; picocli sets its options. */
    public CpCommand()
    {
    }

    @Override
    public Integer call() throws IOException
    {
        return serveDirectory != null ? serve() : copy();
    }

    // ---------------------------------------------------------------------------------------------- server

    private int serve() throws IOException
    {
        if (source != null || destination != null)
        {
            throw usage("--serve takes no SRC or IP:PORT:PATH");
        }
        if (bind == null)
        {
            throw usage("--serve needs --bind IP:PORT");
        }
        if (bind.getPort() < 2)
        {
            throw usage("--bind port must be 2..65535 (RDS reserves 0 and 1): " + bind.getPort());
        }
        for (final String clientOption : new String[] {"-I", "--timeout", "--progress", "--quiet"})
        {
            if (spec.commandLine().getParseResult().hasMatchedOption(clientOption))
            {
                throw usage(clientOption + " is a client option; not with --serve");
            }
        }
        if (!Files.isDirectory(serveDirectory))
        {
            throw usage("--serve " + serveDirectory + ": not a directory");
        }
        final PrintWriter out = spec.commandLine().getOut();
        final CpServer server = new CpServer(serveDirectory, out);
        final RdsStack stack = RdsStack.open(stackOptions.config("cp-serve"));
        final CountDownLatch stopped = new CountDownLatch(1);
        // kill / Ctrl-C: closing the stack closes the socket, which ends serve(), which deletes temporary files
        final Thread hook = new Thread(() ->
        {
            stack.close();
            try
            {
                stopped.await(2, TimeUnit.SECONDS);
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
        }, "rds-cp-serve-close");
        Runtime.getRuntime().addShutdownHook(hook);
        try
        {
            final RdsSocket socket = stack.openSocket();
            socket.bind(bind);
            out.println("cp: serving " + serveDirectory + " at " + IpPortConverter.format(socket.localAddress()) +
                " (tcp port " + TcpConfig.of(stack.config()).tcpPort() + ")" +
                (once ? "; exits after one file" : "; kill to stop"));
            out.flush();
            server.serve(socket, once);
            return !once || server.received() > 0 ? 0 : EXIT_FAILED;
        }
        finally
        {
            stopped.countDown();
            stack.close();
            try
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (final IllegalStateException e)
            {
                // the JVM is shutting down: the hook is running
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- client

    private int copy() throws IOException
    {
        if (source == null || destination == null)
        {
            throw usage("expected SRC IP:PORT:PATH (or --serve DIR --bind IP:PORT)");
        }
        for (final String serverOption : new String[] {"--bind", "--once"})
        {
            if (spec.commandLine().getParseResult().hasMatchedOption(serverOption))
            {
                throw usage(serverOption + " is a server option; it needs --serve DIR");
            }
        }
        if (timeout.compareTo(Duration.ofMillis(1)) < 0)
        {
            throw usage("--timeout must be at least 1ms: " + DurationConverter.format(timeout));
        }
        final Destination target;
        try
        {
            target = Destination.parse(destination);
        }
        catch (final TypeConversionException e)
        {
            throw usage("IP:PORT:PATH: " + e.getMessage());
        }
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (!Files.isRegularFile(source))
        {
            err.println("rds cp: " + source + ": not a regular file");
            err.flush();
            return EXIT_FAILED;
        }
        final long size = Files.size(source);
        final String path = target.path().isEmpty() || target.path().endsWith("/")
            ? target.path() + source.getFileName()
            : target.path();
        final boolean showProgress = !quiet && (progress || System.console() != null);

        try (RdsStack stack = RdsStack.open(stackOptions.config("cp"));
            RdsSocket socket = stack.openSocket())
        {
            socket.setOption(RdsOptions.SO_SNDTIMEO, timeout);
            socket.bind(new InetSocketAddress(local, 0));
            final long startNs = System.nanoTime();
            final Outcome outcome = send(socket, target.node(), path, size, new ProgressBar(err, size, showProgress));
            final String failure = outcome.failure() != null
                ? outcome.failure()
                : verifyReply(outcome.reply(), outcome.id(), size, outcome.digest());
            final String where = IpPortConverter.format(target.node()) + ":" + path;
            if (failure != null)
            {
                err.println("rds cp: " + source + " -> " + where + ": " + failure);
                err.flush();
                return EXIT_FAILED;
            }
            if (!quiet)
            {
                final double seconds = Math.max(System.nanoTime() - startNs, 1) / 1e9;
                out.println(String.format(Locale.ROOT, "cp: %s -> %s: %d bytes in %.3f s (%.1f MB/s), sha256 %s",
                    source, where, size, seconds, size / seconds / 1e6, CpProtocol.hex(outcome.digest())));
                out.flush();
            }
            return 0;
        }
    }

    /**
     * What the client's send ended with.
     *
     * @param id      the transfer id.
     * @param digest  the SHA-256 of what was sent, {@code null} if the send stopped early.
     * @param reply   the server's reply, {@code null} if none came.
     * @param failure why the client stopped before the reply could be checked, or {@code null}.
     */
    record Outcome(long id, byte[] digest, CpProtocol.Message reply, String failure)
    {
    }

    private Outcome send(final RdsSocket socket, final InetSocketAddress server, final String path, final long size,
        final ProgressBar bar) throws IOException
    {
        final long id = new SecureRandom().nextLong();
        final ReplyCollector replies = new ReplyCollector(server, id);
        final ByteBuffer buffer = ByteBuffer.allocate(CpProtocol.MAX_MESSAGE);
        final MessageDigest digest = CpProtocol.sha256();
        String failure = sendFailure(socket.send(CpProtocol.start(buffer, id, size, path), server), server);
        long offset = 0;
        if (failure == null)
        {
            try (FileChannel channel = FileChannel.open(source, StandardOpenOption.READ))
            {
                bar.update(0);
                while (offset < size && failure == null)
                {
                    socket.poll(replies, 16);
                    if (replies.reply != null)
                    {
                        break; // an early answer: the server refused or failed the transfer
                    }
                    final int length = (int)Math.min(CpProtocol.CHUNK, size - offset);
                    CpProtocol.dataHeader(buffer, id, offset).limit(CpProtocol.DATA_HEADER + length);
                    while (buffer.hasRemaining())
                    {
                        if (channel.read(buffer, offset + buffer.position() - CpProtocol.DATA_HEADER) < 0)
                        {
                            return new Outcome(id, null, null, source + " shrank while being sent");
                        }
                    }
                    buffer.flip();
                    digest.update(buffer.duplicate().position(CpProtocol.DATA_HEADER));
                    failure = sendFailure(socket.send(buffer, server), server);
                    if (failure == null)
                    {
                        offset += length;
                        bar.update(offset);
                    }
                }
            }
        }
        final byte[] sha256 = offset == size && replies.reply == null && failure == null ? digest.digest() : null;
        if (sha256 != null)
        {
            failure = sendFailure(socket.send(CpProtocol.end(buffer, id, sha256), server), server);
        }
        if (failure == null && replies.reply == null)
        {
            awaitReply(socket, replies, buffer);
        }
        bar.finish(offset);
        return new Outcome(id, sha256, replies.reply, failure);
    }

    private void awaitReply(final RdsSocket socket, final ReplyCollector replies, final ByteBuffer buffer) throws IOException
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        long left;
        while (replies.reply == null && (left = deadline - System.nanoTime()) > 0 && !Thread.currentThread().isInterrupted())
        {
            socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofNanos(left));
            buffer.clear();
            final InetSocketAddress from = socket.receive(buffer);
            if (from != null)
            {
                replies.onMessage(from, buffer.flip());
            }
        }
    }

    private String sendFailure(final int result, final InetSocketAddress server)
    {
        if (result >= 0)
        {
            return null;
        }
        if (result == RdsResult.ETIMEDOUT)
        {
            return "no room to send for " + DurationConverter.format(timeout) + ": the server at " + IpPortConverter.format(server) +
                " does not take data (not running, unreachable, or not draining)";
        }
        return "send failed: " + RdsResult.name(result);
    }

    /**
     * Checks the server's reply against what the client sent.
     *
     * @param reply  the reply, or {@code null} if none came in time.
     * @param id     the transfer id.
     * @param size   the bytes sent.
     * @param digest the SHA-256 of the bytes sent, or {@code null} if the client did not finish sending.
     * @return {@code null} if the reply is OK with the same size and digest, else what is wrong.
     */
    static String verifyReply(final CpProtocol.Message reply, final long id, final long size, final byte[] digest)
    {
        if (reply == null)
        {
            return "no reply from the server in time";
        }
        if (reply.id() != id)
        {
            return "reply for another transfer";
        }
        if (reply.type() == CpProtocol.ERROR)
        {
            return "refused by the server: " + reply.text();
        }
        if (reply.type() != CpProtocol.OK)
        {
            return "unexpected reply type " + reply.type();
        }
        if (digest == null)
        {
            return "the server replied OK before the whole file was sent";
        }
        if (reply.number() != size)
        {
            return "the server wrote " + reply.number() + " bytes, " + size + " were sent";
        }
        if (!MessageDigest.isEqual(digest, reply.digest()))
        {
            return "SHA-256 mismatch: sent " + CpProtocol.hex(digest) + ", the server has " + CpProtocol.hex(reply.digest());
        }
        return null;
    }

    private ParameterException usage(final String message)
    {
        return new ParameterException(spec.commandLine(), message);
    }

    /** Keeps the first OK or ERROR of one transfer from the server; everything else is ignored. */
    private static final class ReplyCollector implements org.rds4j.RdsMessageHandler
    {
        private final InetSocketAddress server;
        private final long id;
        CpProtocol.Message reply;

        ReplyCollector(final InetSocketAddress server, final long id)
        {
            this.server = server;
            this.id = id;
        }

        @Override
        public void onMessage(final InetSocketAddress sender, final ByteBuffer payload)
        {
            if (reply != null || !server.equals(sender))
            {
                return;
            }
            final CpProtocol.Message message = CpProtocol.decode(payload);
            if (message != null && message.id() == id && (message.type() == CpProtocol.OK || message.type() == CpProtocol.ERROR))
            {
                reply = message; // decode copies what OK and ERROR carry: valid after the callback
            }
        }
    }

    /**
     * The client's {@code IP:PORT:PATH}.
     *
     * @param node the server's socket.
     * @param path the target path as given, possibly empty.
     */
    record Destination(InetSocketAddress node, String path)
    {
        /**
         * @param text {@code IPv4:PORT:PATH} or {@code [IPv6]:PORT:PATH}; PATH may contain colons.
         * @return the destination.
         * @throws TypeConversionException when the text is not of that form or the port is 0 or 1.
         */
        static Destination parse(final String text)
        {
            final int afterHost;
            if (text.startsWith("["))
            {
                final int close = text.indexOf(']');
                afterHost = close < 0 ? -1 : close + 1;
            }
            else
            {
                afterHost = text.indexOf(':');
            }
            final int pathColon = afterHost < 0 || afterHost >= text.length() ? -1 : text.indexOf(':', afterHost + 1);
            if (afterHost < 0 || pathColon < 0 || text.charAt(afterHost) != ':')
            {
                throw new TypeConversionException("'" + text + "': expected IP:PORT:PATH, e.g. 127.0.0.2:4000:a.bin");
            }
            final InetSocketAddress node = IpPortConverter.parse(text.substring(0, pathColon));
            if (node.getPort() < 2)
            {
                throw new TypeConversionException("'" + text + "': port must be 2..65535 (RDS reserves 0 and 1)");
            }
            return new Destination(node, text.substring(pathColon + 1));
        }
    }
}
