package org.rds4j.transport.tcp;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * How many bytes written to a TCP socket its peer has not yet acked: {@code ioctl(SIOCOUTQ)}, which for a
 * connected socket is the send queue from the first unacked byte ({@code write_seq - snd_una}). Written minus
 * this is what the peer's host has received, the kernel's rule for a message delivered over {@code rds_tcp}.
 * <p>
 * Java does not expose a channel's descriptor, so {@link #of} finds it once through {@code /proc}: the socket's
 * inode from {@code /proc/self/net/tcp} (or {@code tcp6}, where a dual-stack socket shows IPv4 addresses as
 * {@code ::ffff:a.b.c.d}), then the descriptor linked to {@code socket:[inode]} in {@code /proc/self/fd}.
 * Linux only. {@link #unacked} allocates nothing. The descriptor is valid while the channel is open; the
 * owner must stop calling {@link #unacked} when it closes the channel.
 */
final class TcpUnackedBytes
{
    private static final long SIOCOUTQ = 0x5411; // TIOCOUTQ, as <linux/sockios.h> defines it
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private final int fd;
    private final ByteBuffer out = BufferUtil.allocateDirectAligned(8, 8);
    private final UnsafeBuffer outView = new UnsafeBuffer(out);
    private final long outAddress = outView.addressOffset();

    private TcpUnackedBytes(final int fd)
    {
        this.fd = fd;
    }

    /**
     * @param channel a connected TCP channel of this process.
     * @return its unacked-bytes reader.
     * @throws IOException if {@code /proc} does not list the socket, or the native call cannot be made (not Linux).
     */
    static TcpUnackedBytes of(final SocketChannel channel) throws IOException
    {
        final InetSocketAddress local = (InetSocketAddress)channel.getLocalAddress();
        final InetSocketAddress remote = (InetSocketAddress)channel.getRemoteAddress();
        if (local == null || remote == null)
        {
            throw new IOException("the channel is not connected");
        }
        long inode = findInode(Path.of("/proc/self/net/tcp"), local, remote, false);
        if (inode < 0)
        {
            inode = findInode(Path.of("/proc/self/net/tcp6"), local, remote, true);
        }
        if (inode < 0)
        {
            throw new IOException("no socket " + local + " -> " + remote + " in /proc/self/net/tcp or tcp6");
        }
        final int fd = findDescriptor(inode);
        final TcpUnackedBytes result = new TcpUnackedBytes(fd);
        try
        {
            if (result.unacked() < 0)
            {
                throw new IOException("ioctl(SIOCOUTQ) failed on descriptor " + fd + ": errno " + Native.getLastError());
            }
        }
        catch (final UnsatisfiedLinkError | NoClassDefFoundError ex)
        {
            throw new IOException("cannot call ioctl through JNA: " + ex, ex);
        }
        return result;
    }

    /** @return bytes written and not yet acked by the peer, or -1 if the call failed. */
    int unacked()
    {
        if (LibC.ioctl(fd, SIOCOUTQ, outAddress) != 0)
        {
            return -1;
        }
        return outView.getInt(0);
    }

    /**
     * @return the inode of the socket with these addresses in a {@code /proc/net/tcp}-format file, or -1.
     */
    static long findInode(final Path table, final InetSocketAddress local, final InetSocketAddress remote,
        final boolean ipv6Table) throws IOException
    {
        if (!Files.isReadable(table))
        {
            return -1;
        }
        final String localKey = procAddress(local, ipv6Table);
        final String remoteKey = procAddress(remote, ipv6Table);
        if (localKey == null || remoteKey == null)
        {
            return -1;
        }
        final List<String> lines = Files.readAllLines(table);
        for (int i = 1; i < lines.size(); i++)
        {
            final String[] fields = lines.get(i).trim().split("\\s+");
            if (fields.length > 9 && fields[1].equalsIgnoreCase(localKey) && fields[2].equalsIgnoreCase(remoteKey))
            {
                return Long.parseLong(fields[9]);
            }
        }
        return -1;
    }

    /**
     * An address as {@code /proc/net/tcp} prints it: the address as 32-bit words in host byte order, each in
     * hex, then {@code :} and the port in hex.
     *
     * @return the text, or null if the address cannot appear in that table.
     */
    static String procAddress(final InetSocketAddress address, final boolean ipv6Table)
    {
        final InetAddress ip = address.getAddress();
        byte[] bytes = ip.getAddress();
        if (ipv6Table && ip instanceof Inet4Address)
        {
            final byte[] mapped = new byte[16];
            mapped[10] = (byte)0xff;
            mapped[11] = (byte)0xff;
            System.arraycopy(bytes, 0, mapped, 12, 4);
            bytes = mapped;
        }
        else if (ipv6Table != (bytes.length == 16))
        {
            return null;
        }
        final StringBuilder text = new StringBuilder(bytes.length * 2 + 5);
        for (int word = 0; word < bytes.length; word += 4)
        {
            for (int i = 0; i < 4; i++)
            {
                final int b = bytes[word + (LITTLE_ENDIAN ? 3 - i : i)];
                text.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
            }
        }
        return text.append(':').append(String.format("%04X", address.getPort())).toString();
    }

    private static int findDescriptor(final long inode) throws IOException
    {
        final String target = "socket:[" + inode + "]";
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd")))
        {
            for (final Path fd : fds)
            {
                try
                {
                    if (target.equals(Files.readSymbolicLink(fd).toString()))
                    {
                        return Integer.parseInt(fd.getFileName().toString());
                    }
                }
                catch (final IOException ex)
                {
                    // closed meanwhile: not ours
                }
            }
        }
        throw new IOException("no descriptor of this process links to " + target);
    }

    /** The one libc call; variadic in C, called with fixed integer arguments, which the Linux ABIs pass alike. */
    private static final class LibC
    {
        static
        {
            Native.register(LibC.class, NativeLibrary.getInstance("c"));
        }

        static native int ioctl(int fd, long request, long argp);
    }
}
