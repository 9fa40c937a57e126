package org.rds4j.transport.tcp;

import com.sun.jna.Native;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How many bytes written to a TCP socket its peer has not yet acked: {@code ioctl(SIOCOUTQ)}, which for a
 * connected socket is the send queue from the first unacked byte ({@code write_seq - snd_una}). Written minus
 * this is what the peer's host has received, the kernel's rule for a message delivered over {@code rds_tcp}.
 * <p>
 * Java does not expose a channel's descriptor, so {@link #descriptorOf} finds it once: among this process's
 * descriptors that {@code /proc/self/fd} shows as sockets, the one whose {@code getsockname}/{@code getpeername}
 * are the channel's addresses (a dual-stack socket shows IPv4 addresses as {@code ::ffff:a.b.c.d}). It reads no
 * socket table, so its cost grows with this process's descriptors only. Linux only. {@link #unacked}
 * allocates nothing. The descriptor is valid while the channel is open; the owner must stop calling
 * {@link #unacked} when it closes the channel.
 */
final class TcpUnackedBytes
{
    private static final long SIOCOUTQ = 0x5411; // TIOCOUTQ, as <linux/sockios.h> defines it
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;
    private static final int SOCKADDR_BYTES = 128; // sizeof(struct sockaddr_storage)

    private final int fd;
    private final UnsafeBuffer out = new UnsafeBuffer(BufferUtil.allocateDirectAligned(8, 8));

    private TcpUnackedBytes(final int fd)
    {
        this.fd = fd;
    }

    /**
     * @param channel a connected TCP channel of this process.
     * @return its unacked-bytes reader.
     * @throws IOException if no descriptor of this process is that socket, or the native calls cannot be made
     *                     (not Linux).
     */
    static TcpUnackedBytes of(final SocketChannel channel) throws IOException
    {
        final int fd = descriptorOf(channel);
        final TcpUnackedBytes result = new TcpUnackedBytes(fd);
        if (result.unacked() < 0)
        {
            throw new IOException("ioctl(SIOCOUTQ) failed on descriptor " + fd + ": errno " + Native.getLastError());
        }
        return result;
    }

    /**
     * @param channel a connected TCP channel of this process.
     * @return its descriptor, valid while the channel is open.
     * @throws IOException if no descriptor of this process is that socket, or the native calls cannot be made
     *                     (not Linux).
     */
    static int descriptorOf(final SocketChannel channel) throws IOException
    {
        final InetSocketAddress local = (InetSocketAddress)channel.getLocalAddress();
        final InetSocketAddress remote = (InetSocketAddress)channel.getRemoteAddress();
        if (local == null || remote == null)
        {
            throw new IOException("the channel is not connected");
        }
        try
        {
            return findDescriptor(local, remote);
        }
        catch (final UnsatisfiedLinkError | NoClassDefFoundError ex)
        {
            throw new IOException("cannot call libc through JNA: " + ex, ex);
        }
    }

    /** @return bytes written and not yet acked by the peer, or -1 if the call failed. */
    int unacked()
    {
        if (LibC.ioctl(fd, SIOCOUTQ, out.addressOffset()) != 0)
        {
            return -1;
        }
        return out.getInt(0);
    }

    private static int findDescriptor(final InetSocketAddress local, final InetSocketAddress remote) throws IOException
    {
        final UnsafeBuffer address = new UnsafeBuffer(BufferUtil.allocateDirectAligned(SOCKADDR_BYTES + 8, 8));
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd")))
        {
            for (final Path entry : fds)
            {
                final int fd;
                try
                {
                    if (!Files.readSymbolicLink(entry).toString().startsWith("socket:["))
                    {
                        continue;
                    }
                    fd = Integer.parseInt(entry.getFileName().toString());
                }
                catch (final IOException | NumberFormatException ex)
                {
                    continue; // closed meanwhile, or not a descriptor
                }
                if (is(fd, true, local, address) && is(fd, false, remote, address))
                {
                    return fd;
                }
            }
        }
        throw new IOException("no descriptor of this process is the socket " + local + " -> " + remote);
    }

    /** @return true if the socket's local ({@code ownEnd}) or peer address is {@code expected}. */
    private static boolean is(final int fd, final boolean ownEnd, final InetSocketAddress expected, final UnsafeBuffer address)
    {
        address.setMemory(0, SOCKADDR_BYTES + 8, (byte)0);
        address.putInt(SOCKADDR_BYTES, SOCKADDR_BYTES);
        final long sockaddr = address.addressOffset();
        final int rc = ownEnd ? LibC.getsockname(fd, sockaddr, sockaddr + SOCKADDR_BYTES) :
            LibC.getpeername(fd, sockaddr, sockaddr + SOCKADDR_BYTES);
        if (rc != 0 || (address.getShort(2, ByteOrder.BIG_ENDIAN) & 0xFFFF) != expected.getPort())
        {
            return false;
        }
        final byte[] want = expected.getAddress().getAddress();
        final int family = address.getShort(0, ByteOrder.nativeOrder());
        if (family == AF_INET && want.length == 4)
        {
            return matches(address, 4, want, 0, 4);
        }
        if (family == AF_INET6 && want.length == 16)
        {
            return matches(address, 8, want, 0, 16);
        }
        if (family == AF_INET6 && want.length == 4)
        {
            // an IPv4 peer of a dual-stack socket: ::ffff:a.b.c.d
            final byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte)0xff, (byte)0xff};
            return matches(address, 8, mapped, 0, 12) && matches(address, 20, want, 0, 4);
        }
        return false;
    }

    private static boolean matches(final UnsafeBuffer buffer, final int offset, final byte[] bytes, final int from, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            if (buffer.getByte(offset + i) != bytes[from + i])
            {
                return false;
            }
        }
        return true;
    }
}
