package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A transport path for connection-path tests: each {@link #transmit} writes at most {@link #budget} bytes of the
 * frames it is given to an in-memory wire, which {@link #frames()} parses back.
 */
final class FakeTransportPath implements TransportPath
{
    /** A frame as written: its header fields. */
    record Frame(long sequence, long ack, int length, int sport, int dport, int flags, int generation)
    {
    }

    private final ConnectionPath connection;
    private final ByteBuffer[] given = new ByteBuffer[16];
    private final ByteArrayOutputStream wire = new ByteArrayOutputStream();
    /** Bytes the next transmit may write. */
    int budget = Integer.MAX_VALUE;
    boolean peerIsKernel;
    boolean canReportTransportAcks;
    boolean reportingTransportAcks;
    boolean closed;
    int drained;
    /** Frames that arrived and wait unread: the next {@link #drainReceived} hands them to the connection. */
    final List<UnsafeBuffer> unread = new ArrayList<>();

    FakeTransportPath(final ConnectionPath connection)
    {
        this.connection = connection;
    }

    @Override
    public int transmit()
    {
        final int count = connection.fillTransmit(given, given.length);
        int room = budget;
        for (int i = 0; i < count && room > 0; i++)
        {
            final ByteBuffer frame = given[i];
            final int n = Math.min(room, frame.remaining());
            final byte[] bytes = new byte[n];
            frame.get(bytes);
            wire.write(bytes, 0, n);
            room -= n;
        }
        return connection.onTransmitted(given, count);
    }

    /** @return every complete frame written so far, in order; the wire is emptied of them. */
    List<Frame> frames()
    {
        final byte[] bytes = wire.toByteArray();
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final List<Frame> frames = new ArrayList<>();
        int offset = 0;
        while (offset + RdsHeader.LENGTH <= bytes.length &&
            offset + RdsHeader.LENGTH + RdsHeader.length(buffer, offset) <= bytes.length)
        {
            frames.add(new Frame(RdsHeader.sequence(buffer, offset), RdsHeader.ack(buffer, offset),
                (int)RdsHeader.length(buffer, offset), RdsHeader.sport(buffer, offset), RdsHeader.dport(buffer, offset),
                RdsHeader.flags(buffer, offset), RdsHeader.generation(buffer, offset)));
            offset += RdsHeader.LENGTH + (int)RdsHeader.length(buffer, offset);
        }
        wire.reset();
        wire.write(bytes, offset, bytes.length - offset);
        return frames;
    }

    @Override
    public boolean peerIsKernel()
    {
        return peerIsKernel;
    }

    @Override
    public boolean reportTransportAcks(final boolean on)
    {
        reportingTransportAcks = on && canReportTransportAcks;
        return canReportTransportAcks;
    }

    @Override
    public void drainReceived()
    {
        drained++;
        while (!unread.isEmpty())
        {
            connection.onFrame(unread.remove(0), 0);
        }
    }

    @Override
    public void close()
    {
        closed = true;
    }
}
