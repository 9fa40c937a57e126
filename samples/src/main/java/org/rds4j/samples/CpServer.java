package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.rds4j.RdsNotificationListener;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;

/**
 * The server side of {@code rds cp} ({@link CpCommand} has the protocol): receives files on one socket into a
 * directory, any number of transfers at once (keyed by sender and transfer id), on the calling thread.
 * <p>
 * It drains the socket as fast as it can write the file, so that rds4j's congestion control (the socket's
 * {@code SO_RCVBUF}) only slows clients down when the disk is slower than the network. A transfer that
 * receives nothing for {@link #IDLE_LIMIT} is dropped with its temporary file.
 */
final class CpServer
{
    /** A transfer silent for this long is abandoned (its client is gone). */
    static final Duration IDLE_LIMIT = Duration.ofSeconds(60);
    /** How long a reply may wait for send-buffer room or an uncongested client; then it is dropped. */
    static final Duration REPLY_TIMEOUT = Duration.ofSeconds(5);
    /** Transfers in progress at most; more are refused. */
    static final int MAX_TRANSFERS = 64;
    /** Refused transfer ids remembered, so that their END gets no second ERROR. */
    private static final int REMEMBERED_REFUSALS = 1024;

    private final Path root;
    private final Path realRoot;
    private final PrintWriter log;
    private final Map<Long, Transfer> transfers = new HashMap<>();
    private final Map<Long, Boolean> refused = new LinkedHashMap<>(16, 0.75f, false)
    {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<Long, Boolean> eldest)
        {
            return size() > REMEMBERED_REFUSALS;
        }
    };
    private final ByteBuffer reply = ByteBuffer.allocate(CpProtocol.MAX_MESSAGE);
    private final Set<InetAddress> downPeers = ConcurrentHashMap.newKeySet();
    private long received;
    private long failed;

    /**
     * @param root the served directory; it must exist.
     * @param log  where one line per finished transfer goes.
     * @throws IOException if the directory's real path cannot be found.
     */
    CpServer(final Path root, final PrintWriter log) throws IOException
    {
        this.root = root.toAbsolutePath().normalize();
        this.realRoot = root.toRealPath();
        this.log = log;
    }

    /** @return files received and put in place. */
    long received()
    {
        return received;
    }

    /** @return transfers refused or failed. */
    long failed()
    {
        return failed;
    }

    /**
     * Serves until the socket closes, the thread is interrupted, or, with {@code once}, the first transfer has
     * ended (put in place or failed). Temporary files of unfinished transfers are deleted on the way out.
     *
     * @param socket a bound socket; its timeouts and notification listener are set here.
     * @param once   return after the first transfer that ends, once its reply has been acknowledged (or its
     *               client has gone, or {@link #REPLY_TIMEOUT} passed).
     * @throws IOException on a socket failure other than its closing.
     */
    void serve(final RdsSocket socket, final boolean once) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(CpProtocol.MAX_MESSAGE + 1); // +1: a longer message shows
        try
        {
            socket.configureBlocking(true);
            socket.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(1));
            socket.setOption(RdsOptions.SO_SNDTIMEO, REPLY_TIMEOUT);
            socket.setNotificationListener(new RdsNotificationListener()
            {
                @Override
                public void onPeerDown(final InetAddress peer)
                {
                    downPeers.add(peer);
                }

                @Override
                public void onPeerUp(final InetAddress peer)
                {
                    downPeers.remove(peer);
                }
            });
            while (socket.isOpen() && !Thread.currentThread().isInterrupted() && !(once && received + failed > 0))
            {
                buffer.clear();
                final InetSocketAddress sender = socket.receive(buffer);
                if (sender != null)
                {
                    buffer.flip();
                    final CpProtocol.Message message = CpProtocol.decode(buffer);
                    if (message != null)
                    {
                        handle(socket, sender, message);
                    }
                }
                expireIdle();
            }
            if (once)
            {
                awaitReplies(socket);
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
        finally
        {
            for (final Transfer transfer : new ArrayList<>(transfers.values()))
            {
                transfer.discard();
            }
            transfers.clear();
            log.flush();
        }
    }

    private void handle(final RdsSocket socket, final InetSocketAddress sender, final CpProtocol.Message message)
        throws IOException
    {
        final Transfer transfer = transfers.get(message.id());
        if (transfer != null && !transfer.sender.equals(sender))
        {
            return; // another client's id: not ours to touch
        }
        switch (message.type())
        {
            case CpProtocol.START:
                if (transfer != null)
                {
                    fail(socket, transfer, "duplicate START");
                }
                else
                {
                    start(socket, sender, message);
                }
                break;
            case CpProtocol.DATA:
                if (transfer != null)
                {
                    data(socket, transfer, message);
                }
                break; // data of a refused, failed or expired transfer is dropped
            case CpProtocol.END:
                if (transfer != null)
                {
                    end(socket, transfer, message);
                }
                else if (refused.remove(message.id()) == null)
                {
                    send(socket, sender, CpProtocol.error(reply, message.id(), "unknown transfer (expired, or the server restarted)"));
                }
                break;
            default:
                break; // replies are not for a server
        }
    }

    private void start(final RdsSocket socket, final InetSocketAddress sender, final CpProtocol.Message message)
        throws IOException
    {
        final String path = message.text();
        final String reason;
        if (message.number() < 0)
        {
            reason = "negative size " + message.number();
        }
        else if (transfers.size() >= MAX_TRANSFERS)
        {
            reason = "busy: " + MAX_TRANSFERS + " transfers in progress";
        }
        else
        {
            reason = open(sender, message);
        }
        if (reason != null)
        {
            refuse(socket, sender, message.id(), path, reason);
        }
    }

    /** @return {@code null} once the transfer is open, else why not. */
    private String open(final InetSocketAddress sender, final CpProtocol.Message message)
    {
        final Path target;
        try
        {
            target = CpProtocol.resolveTarget(root, message.text());
            CpProtocol.createParents(realRoot, target);
        }
        catch (final CpProtocol.RefusedPathException e)
        {
            return e.getMessage();
        }
        catch (final IOException e)
        {
            return "cannot create the target's directory: " + e;
        }
        final Path temp = target.resolveSibling("." + target.getFileName() + "." + Long.toHexString(message.id()) + ".rdscp-tmp");
        try
        {
            final FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            transfers.put(message.id(), new Transfer(message.id(), sender, message.text(), target, temp, channel, message.number()));
            return null;
        }
        catch (final IOException e)
        {
            return "cannot create " + temp.getFileName() + ": " + e;
        }
    }

    private void data(final RdsSocket socket, final Transfer transfer, final CpProtocol.Message message) throws IOException
    {
        final ByteBuffer data = message.data();
        final int length = data.remaining();
        if (message.number() != transfer.written)
        {
            fail(socket, transfer, "DATA at offset " + message.number() + ", expected " + transfer.written);
            return;
        }
        if (transfer.written + length > transfer.size)
        {
            fail(socket, transfer, "more than the announced " + transfer.size + " bytes");
            return;
        }
        transfer.digest.update(data.duplicate());
        try
        {
            while (data.hasRemaining())
            {
                transfer.channel.write(data);
            }
        }
        catch (final IOException e)
        {
            fail(socket, transfer, "write failed: " + e);
            return;
        }
        transfer.written += length;
        transfer.touch();
    }

    private void end(final RdsSocket socket, final Transfer transfer, final CpProtocol.Message message) throws IOException
    {
        if (transfer.written != transfer.size)
        {
            fail(socket, transfer, "END after " + transfer.written + " of " + transfer.size + " bytes");
            return;
        }
        final byte[] digest = transfer.digest.digest();
        if (!MessageDigest.isEqual(digest, message.digest()))
        {
            fail(socket, transfer, "SHA-256 mismatch: received " + CpProtocol.hex(digest) + ", sender has " +
                CpProtocol.hex(message.digest()));
            return;
        }
        try
        {
            transfer.channel.force(true);
            transfer.channel.close();
            Files.move(transfer.temp, transfer.target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException e)
        {
            fail(socket, transfer, "cannot put the file in place: " + e);
            return;
        }
        transfers.remove(transfer.id);
        received++;
        log.println("cp: received " + transfer.path + " (" + transfer.size + " bytes, sha256 " + CpProtocol.hex(digest) +
            ") from " + IpPortConverter.format(transfer.sender));
        log.flush();
        send(socket, transfer.sender, CpProtocol.ok(reply, transfer.id, transfer.size, digest));
    }

    private void refuse(final RdsSocket socket, final InetSocketAddress sender, final long id, final String path,
        final String reason) throws IOException
    {
        refused.put(id, Boolean.TRUE);
        failed++;
        log.println("cp: refused " + path + " from " + IpPortConverter.format(sender) + ": " + reason);
        log.flush();
        send(socket, sender, CpProtocol.error(reply, id, reason));
    }

    private void fail(final RdsSocket socket, final Transfer transfer, final String reason) throws IOException
    {
        transfer.discard();
        transfers.remove(transfer.id);
        refuse(socket, transfer.sender, transfer.id, transfer.path, reason);
    }

    private void send(final RdsSocket socket, final InetSocketAddress to, final ByteBuffer message) throws IOException
    {
        final int result = socket.send(message, to);
        if (result < 0)
        {
            log.println("cp: reply to " + IpPortConverter.format(to) + " dropped: " + RdsResult.name(result));
            log.flush();
        }
    }

    private void expireIdle()
    {
        if (transfers.isEmpty())
        {
            return;
        }
        final long now = System.nanoTime();
        for (final Transfer transfer : new ArrayList<>(transfers.values()))
        {
            if (now - transfer.lastActivityNs > IDLE_LIMIT.toNanos())
            {
                transfer.discard();
                transfers.remove(transfer.id);
                refused.put(transfer.id, Boolean.TRUE);
                failed++;
                log.println("cp: abandoned " + transfer.path + " from " + IpPortConverter.format(transfer.sender) +
                    ": nothing received for " + IDLE_LIMIT.toSeconds() + " s");
                log.flush();
            }
        }
    }

    /** Waits until the replies are acknowledged, their clients' connections are down, or the reply timeout. */
    private void awaitReplies(final RdsSocket socket) throws IOException
    {
        final long deadline = System.nanoTime() + REPLY_TIMEOUT.toNanos();
        while (socket.sendQueuedBytes() > 0 && System.nanoTime() - deadline < 0)
        {
            socket.poll((sender, payload) -> { }, 64); // also delivers the peer-down notifications
            if (!downPeers.isEmpty())
            {
                return; // the client has closed: nobody left to reply to
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** One file being received. */
    private final class Transfer
    {
        final long id;
        final InetSocketAddress sender;
        final String path;
        final Path target;
        final Path temp;
        final FileChannel channel;
        final long size;
        final MessageDigest digest = CpProtocol.sha256();
        long written;
        long lastActivityNs = System.nanoTime();

        Transfer(final long id, final InetSocketAddress sender, final String path, final Path target, final Path temp,
            final FileChannel channel, final long size)
        {
            this.id = id;
            this.sender = sender;
            this.path = path;
            this.target = target;
            this.temp = temp;
            this.channel = channel;
            this.size = size;
        }

        void touch()
        {
            lastActivityNs = System.nanoTime();
        }

        void discard()
        {
            try
            {
                channel.close();
            }
            catch (final IOException e)
            {
                // deleting is what matters
            }
            try
            {
                Files.deleteIfExists(temp);
            }
            catch (final IOException e)
            {
                log.println("cp: cannot delete " + temp + ": " + e);
            }
        }
    }
}
