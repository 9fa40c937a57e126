package org.rds4j.transport.tcp;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.core.StackCounters;
import org.rds4j.core.spi.ConnectionPath;
import org.rds4j.core.spi.TransportPath;
import org.rds4j.core.wire.RdsHeader;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@link TcpPath}'s appended frames, at the level of the path: what reaches the socket is the frames appended and
 * nothing else. The connection behind the path is a stub that has nothing of its own to send and whose peer has
 * read everything (so the send ring's regions are free as soon as they are sent); the socket's other end is read
 * by the test. On 127.0.0.1, an ephemeral port.
 */
class TcpPathAppendTest
{
    /** The send ring: small, so that a few frames bring its tail near the end of its memory. */
    private static final int RING = 256 * 1024;
    /** Larger than the least the ring claims (16 KiB), so that a claim at the memory's end can be too small. */
    private static final int PAYLOAD = 40 * 1024 - RdsHeader.LENGTH;

    private ServerSocketChannel listener;
    private SocketChannel sending;
    private SocketChannel receiving;
    private Selector selector;
    private TcpPath path;

    @AfterEach
    void tearDown() throws IOException
    {
        if (path != null)
        {
            path.close();
        }
        for (final Closeable c : new Closeable[] {selector, sending, receiving, listener})
        {
            if (c != null)
            {
                c.close();
            }
        }
    }

    @Test
    void aClaimTooSmallForTheFrameSendsNothing() throws Exception
    {
        open();
        final ByteBuffer payload = ByteBuffer.allocateDirect(PAYLOAD);
        final int frame = RdsHeader.LENGTH + PAYLOAD;
        // six frames of 40 KiB end at 240 KiB: 16 KiB are left at the end of the memory, a claim the seventh
        // frame does not fit in, so it is refused and must leave nothing behind to send
        int appended = 0;
        for (long sequence = 1; sequence <= 7; sequence++)
        {
            fill(payload, (byte)sequence);
            if (path.append(sequence, 0, 0, 100, 200, payload, PAYLOAD) < 0)
            {
                break;
            }
            appended++;
            path.flushAppended();
            drain(frame, sequence);
        }
        assertEquals(6, appended, "the seventh frame finds 16 KiB at the memory's end");
        assertEquals(0, path.transmit(), "nothing of the connection's to send");
        receiving.configureBlocking(false);
        final ByteBuffer extra = ByteBuffer.allocate(frame);
        assertEquals(0, receiving.read(extra), "no byte after the six frames"); // loopback: a write is read at once
    }

    private static void fill(final ByteBuffer payload, final byte value)
    {
        payload.clear();
        while (payload.hasRemaining())
        {
            payload.put(value);
        }
        payload.flip();
    }

    /** Reads one whole frame from the socket's other end and checks its sequence and every payload byte. */
    private void drain(final int frame, final long sequence) throws IOException
    {
        final ByteBuffer in = ByteBuffer.allocate(frame);
        while (in.hasRemaining())
        {
            assertTrue(receiving.read(in) >= 0, "the socket closed");
        }
        in.flip();
        assertEquals(sequence, in.getLong(0), "the frame's sequence"); // h_sequence, big-endian, first
        for (int i = RdsHeader.LENGTH; i < frame; i++)
        {
            assertEquals((byte)sequence, in.get(i), "payload byte " + i + " of frame " + sequence);
        }
    }

    private void open() throws IOException
    {
        listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        sending = SocketChannel.open(listener.getLocalAddress());
        receiving = listener.accept();
        sending.configureBlocking(false);
        selector = Selector.open();
        final StackCounters counters = new StackCounters();
        path = new TcpPath(new ReadEverything(), sending, counters, counters.newTransportCounter("sndbuf_full"),
            counters.newTransportCounter("zero_copy"), new TcpBufferPool(4096, 8L * 1024 * 1024, null), RING);
        path.attach(sending.register(selector, SelectionKey.OP_READ));
    }

    /** A connection with nothing of its own to send, whose peer has read every frame. */
    private static final class ReadEverything implements ConnectionPath
    {
        @Override
        public InetAddress localAddress()
        {
            return InetAddress.getLoopbackAddress();
        }

        @Override
        public InetAddress remoteAddress()
        {
            return InetAddress.getLoopbackAddress();
        }

        @Override
        public boolean isConnecting()
        {
            return false;
        }

        @Override
        public boolean isUp()
        {
            return true;
        }

        @Override
        public void onConnected(final TransportPath path)
        {
        }

        @Override
        public void onConnectFailed(final String reason)
        {
        }

        @Override
        public void onPathDown(final TransportPath failed, final String reason)
        {
            throw new AssertionError("path down: " + reason);
        }

        @Override
        public void onPeerMisbehaved(final TransportPath failed, final String reason)
        {
            throw new AssertionError("peer misbehaved: " + reason);
        }

        @Override
        public void connectIfDown()
        {
        }

        @Override
        public void drop(final String reason)
        {
            throw new AssertionError("dropped: " + reason);
        }

        @Override
        public void onPeerConnectedAgain()
        {
        }

        @Override
        public void onFrame(final DirectBuffer buffer, final int offset)
        {
        }

        @Override
        public void onBatchFrame(final DirectBuffer buffer, final int offset)
        {
        }

        @Override
        public void onBatchEnd()
        {
        }

        @Override
        public int fillTransmit(final ByteBuffer[] frames, final int max)
        {
            return 0;
        }

        @Override
        public int onTransmitted(final ByteBuffer[] frames, final int count)
        {
            return count;
        }

        @Override
        public void onPeerAck(final long ack)
        {
        }

        @Override
        public void requestControlFrame()
        {
        }

        @Override
        public long ackSequence()
        {
            return 0;
        }

        @Override
        public long sequenceReadOnPath()
        {
            return Long.MAX_VALUE;
        }

        @Override
        public void onAppendedFlushed(final long lastSequence)
        {
        }
    }
}
