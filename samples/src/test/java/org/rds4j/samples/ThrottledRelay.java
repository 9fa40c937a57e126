package org.rds4j.samples;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay that passes one direction at a fixed rate: a slow link for RDS over TCP without netem. It accepts
 * on {@code listen} and connects each accepted connection onwards to {@code to} from {@code from} (so that the
 * far stack sees the near node's address), pacing the bytes towards {@code to} and passing the answers at
 * once. Tests only.
 */
final class ThrottledRelay implements AutoCloseable
{
    private static final int CHUNK = 2048;

    private final ServerSocket server;
    private final InetAddress from;
    private final InetSocketAddress to;
    private final long bytesPerSecond;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    /**
     * Starts relaying.
     *
     * @param listen         where the near node connects.
     * @param from           the local address of the onward connections.
     * @param to             where they go.
     * @param bytesPerSecond the rate towards {@code to}.
     * @throws IOException if {@code listen} cannot be bound.
     */
    ThrottledRelay(final InetSocketAddress listen, final InetAddress from, final InetSocketAddress to, final long bytesPerSecond)
        throws IOException
    {
        this.from = from;
        this.to = to;
        this.bytesPerSecond = bytesPerSecond;
        server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(listen);
        daemon(this::accept, "relay-accept");
    }

    private void accept()
    {
        try
        {
            while (true)
            {
                final Socket near = server.accept();
                sockets.add(near);
                final Socket far = new Socket();
                sockets.add(far);
                far.bind(new InetSocketAddress(from, 0));
                far.connect(to);
                near.setTcpNoDelay(true);
                far.setTcpNoDelay(true);
                daemon(() -> pump(near, far, bytesPerSecond), "relay-slow");
                daemon(() -> pump(far, near, 0), "relay-back");
            }
        }
        catch (final IOException e)
        {
            // closed
        }
    }

    /** Copies {@code in} to {@code out}, at most {@code rate} bytes per second from the start (0: unpaced). */
    private static void pump(final Socket in, final Socket out, final long rate)
    {
        final byte[] buffer = new byte[CHUNK];
        final long start = System.nanoTime();
        long bytes = 0;
        try (InputStream input = in.getInputStream(); OutputStream output = out.getOutputStream())
        {
            int n;
            while ((n = input.read(buffer)) >= 0)
            {
                if (rate > 0)
                {
                    final long due = start + bytes * 1_000_000_000L / rate;
                    long wait;
                    while ((wait = due - System.nanoTime()) > 0)
                    {
                        LockSupport.parkNanos(wait);
                    }
                }
                output.write(buffer, 0, n);
                bytes += n;
            }
        }
        catch (final IOException e)
        {
            // either side closed
        }
    }

    private static void daemon(final Runnable body, final String name)
    {
        final Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException
    {
        server.close();
        for (final Socket socket : sockets)
        {
            socket.close();
        }
    }
}
