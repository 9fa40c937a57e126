package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.TransportType;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.spi.TransportContext;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * Carries frames between two addresses of the same stack without a network, as the kernel's
 * {@code rds_loop_transport}: each frame is handed to the reverse connection at once and acked at once. The frames of
 * one transmit are one batch ({@link ConnectionPath#onBatchFrame}), read where the sender's stack holds them, so a
 * socket's frames of a batch may be queued as one run. Used automatically when a destination address belongs to this
 * stack; sockets cannot select it.
 */
final class LoopbackTransport implements Transport
{
    private static final int FRAMES_PER_TRANSMIT = 64;

    private final TransportContext context;
    private final ByteBuffer[] frames = new ByteBuffer[FRAMES_PER_TRANSMIT];
    /** One view a frame of a transmit: the stack reads a batch's frames until its end, each through its own view. */
    private final UnsafeBuffer[] views = new UnsafeBuffer[FRAMES_PER_TRANSMIT];

    /** @param context the stack, where the reverse connection of each loop path is found. */
    LoopbackTransport(final TransportContext context)
    {
        this.context = context;
        for (int i = 0; i < views.length; i++)
        {
            views[i] = new UnsafeBuffer(0, 0);
        }
    }

    @Override
    public String name()
    {
        return "loop";
    }

    /** @return null: not selectable by sockets. */
    @Override
    public TransportType type()
    {
        return null;
    }

    @Override
    public boolean canServe(final InetAddress local)
    {
        return false;
    }

    @Override
    public void addLocalAddress(final InetAddress local)
    {
    }

    /** Both ends are this stack: one generation, nothing to tell. */
    @Override
    public boolean startsWithHandshake()
    {
        return false;
    }

    @Override
    public boolean checksumsHeaders()
    {
        return false;
    }

    @Override
    public void connect(final ConnectionPath connection)
    {
        connection.onConnected(new LoopPath((ConnPath)connection));
    }

    /** Nothing to break: a loop path cannot fail. */
    @Override
    public void abortAll()
    {
    }

    @Override
    public int doWork(final long nowNs)
    {
        return 0;
    }

    @Override
    public long idleDeadlineNs(final long nowNs)
    {
        return NO_DEADLINE; // frames go across within the sending duty cycle
    }

    @Override
    public void close()
    {
    }

    private final class LoopPath implements TransportPath
    {
        private final ConnPath connection;
        private ConnPath reverse;

        LoopPath(final ConnPath connection)
        {
            this.connection = connection;
        }

        @Override
        public int transmit()
        {
            if (reverse == null)
            {
                reverse = (ConnPath)context.connection(connection.remoteAddress(), connection.localAddress(), LoopbackTransport.this);
            }
            final int count = connection.fillTransmit(frames, FRAMES_PER_TRANSMIT);
            long lastSequence = 0;
            try
            {
                for (int i = 0; i < count; i++)
                {
                    final ByteBuffer frame = frames[i];
                    final UnsafeBuffer view = views[i];
                    view.wrap(frame);
                    final int offset = frame.position();
                    lastSequence = Math.max(lastSequence, RdsHeader.sequence(view, offset));
                    reverse.onBatchFrame(view, offset);
                    frame.position(frame.limit());
                }
            }
            finally
            {
                reverse.onBatchEnd(); // before the frames are acked, which frees them
            }
            final int done = connection.onTransmitted(frames, count);
            if (lastSequence != 0)
            {
                connection.onPeerAck(lastSequence);
                reverse.acks().markAllAcked();
            }
            return done;
        }

        @Override
        public void close()
        {
        }
    }
}
