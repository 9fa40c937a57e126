package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.rds4j.core.test.Await;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What TCP acked, read from outside the JDK, and the record of frames it maps to sequences. */
class TcpUnackedBytesTest
{
    /** Bytes written count as unacked until the peer's host acks them, whether or not its application reads. */
    @Test
    void unackedFallsToZeroOnceThePeersHostHasTheBytes() throws Exception
    {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             SocketChannel client = SocketChannel.open(server.getLocalAddress());
             SocketChannel accepted = server.accept())
        {
            // other sockets of this process, one with the same local address, must not be taken for it
            final SocketChannel other = SocketChannel.open(server.getLocalAddress());
            final SocketChannel otherAccepted = server.accept();
            other.write(ByteBuffer.allocate(1000));
            final TcpUnackedBytes unacked = TcpUnackedBytes.of(client);
            final TcpUnackedBytes reverse = TcpUnackedBytes.of(accepted);
            assertEquals(0, unacked.unacked());
            final ByteBuffer bytes = ByteBuffer.allocate(10_000);
            assertEquals(10_000, client.write(bytes));
            Await.until(Duration.ofSeconds(5), () -> unacked.unacked() == 0, () -> "unacked " + unacked.unacked());
            assertEquals(0, reverse.unacked(), "the accepted end wrote nothing");
            assertTrue(accepted.isConnected());
            other.close();
            otherAccepted.close();
        }
    }

    @Test
    void framesLeaveTheRecordOnceTheirLastByteIsAcked()
    {
        final TcpAckedFrames frames = new TcpAckedFrames();
        for (int i = 1; i <= 200; i++)
        {
            frames.onWritten(i * 100L, i); // more than the first capacity: it grows
        }
        assertEquals(0, frames.ackedUpTo(99), "the first frame is not whole yet");
        assertEquals(1, frames.ackedUpTo(100));
        assertEquals(0, frames.ackedUpTo(150));
        assertEquals(70, frames.ackedUpTo(7050));
        assertEquals(130, frames.size());
        frames.onWritten(20_100, 201);
        assertEquals(201, frames.ackedUpTo(1_000_000));
        assertEquals(0, frames.size());
    }
}
