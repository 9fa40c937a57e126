package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.rds4j.core.test.Await;

import java.net.InetAddress;
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
    @Test
    void addressesAsProcNetTcpPrintsThem() throws Exception
    {
        final InetSocketAddress address = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 16385);
        assertEquals("0100007f:4001", TcpUnackedBytes.procAddress(address, false).toLowerCase());
        assertEquals("0000000000000000ffff00000100007f:4001", TcpUnackedBytes.procAddress(address, true).toLowerCase());
        final InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("::1"), 1);
        assertEquals(null, TcpUnackedBytes.procAddress(v6, false));
        assertEquals("00000000000000000000000001000000:0001", TcpUnackedBytes.procAddress(v6, true).toLowerCase());
    }

    /** Bytes written count as unacked until the peer's host acks them, whether or not its application reads. */
    @Test
    void unackedFallsToZeroOnceThePeersHostHasTheBytes() throws Exception
    {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             SocketChannel client = SocketChannel.open(server.getLocalAddress());
             SocketChannel accepted = server.accept())
        {
            final TcpUnackedBytes unacked = TcpUnackedBytes.of(client);
            assertEquals(0, unacked.unacked());
            final ByteBuffer bytes = ByteBuffer.allocate(10_000);
            assertEquals(10_000, client.write(bytes));
            Await.until(Duration.ofSeconds(5), () -> unacked.unacked() == 0, () -> "unacked " + unacked.unacked());
            assertTrue(accepted.isConnected());
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
