package org.rds4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TcpSendRing}: which memory it hands out, when a region becomes free, and that {@code sendfile}, through
 * libc or the JDK, sends exactly a region's bytes, stops without an error at a full socket and fails at a reset one.
 */
class TcpSendRingTest
{
    private static final int CAPACITY = 256 * 1024;
    private static final int KIB = 1024;
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private final TcpSendRing ring = TcpSendRing.open(CAPACITY);

    @AfterEach
    void tearDown()
    {
        ring.close();
    }

    /** Claims, fills {@code bytes} and commits; checks where the claim began. */
    private void stage(final int expectedOffset, final int bytes)
    {
        final ByteBuffer claimed = ring.claim(1, bytes);
        assertNotNull(claimed, "a claim of " + bytes);
        assertEquals(expectedOffset, claimed.position(), "where the claim begins");
        claimed.position(claimed.position() + bytes);
        ring.commit();
        assertEquals(expectedOffset, claimed.position(), "a commit frames the region from its start");
        assertEquals(expectedOffset + bytes, claimed.limit());
    }

    @Test
    void aRegionIsFreeOnlyOnceAFrameEndingAfterItIsRead()
    {
        stage(0, 100 * KIB);
        stage(100 * KIB, 128 * KIB);
        assertTrue(ring.awaitsFrameEnd());
        // an ack of everything proves nothing while no frame has ended after the regions
        ring.release(Long.MAX_VALUE - 1);
        assertEquals(28 * KIB, ring.claim(16 * KIB, 128 * KIB).remaining(), "only the end of the memory is free");
        assertNull(ring.claim(32 * KIB, 128 * KIB), "the start of the memory is not free");

        ring.onFrameEnded(5);
        assertFalse(ring.awaitsFrameEnd());
        ring.release(4);
        assertNull(ring.claim(32 * KIB, 128 * KIB), "frame 5 is not read yet");
        ring.release(5);
        final ByteBuffer claimed = ring.claim(32 * KIB, 128 * KIB);
        assertEquals(0, claimed.position(), "the claim skips the 28 KiB left at the end and wraps");
        assertEquals(128 * KIB, claimed.remaining());
    }

    @Test
    void aFrameEndingReleasesOnlyTheRegionsCommittedBeforeIt()
    {
        stage(0, 100 * KIB);
        ring.onFrameEnded(7);
        stage(100 * KIB, 100 * KIB);
        ring.release(7);
        // the first region is free, the second is not: 56 KiB at the end, then the first 100 KiB after wrapping
        assertEquals(56 * KIB, ring.claim(16 * KIB, 128 * KIB).remaining());
        final ByteBuffer wrapped = ring.claim(64 * KIB, 128 * KIB);
        assertEquals(0, wrapped.position());
        assertEquals(100 * KIB, wrapped.remaining(), "up to the unread second region");
        ring.onFrameEnded(8);
        ring.release(8);
        assertEquals(128 * KIB, ring.claim(64 * KIB, 128 * KIB).remaining());
    }

    @Test
    void aClaimNotCommittedIsClaimedAgain()
    {
        final ByteBuffer first = ring.claim(1, 4 * KIB);
        first.position(first.position() + 3 * KIB);
        final ByteBuffer again = ring.claim(1, 4 * KIB);
        assertEquals(0, again.position());
        assertEquals(4 * KIB, again.limit());
    }

    @Test
    void aFullRegionTableRefusesClaims()
    {
        for (int i = 0; i < 256; i++)
        {
            stage(i * 100, 100);
        }
        assertNull(ring.claim(1, 100), "256 regions wait for acks");
        ring.onFrameEnded(1);
        ring.release(1);
        stage(25_600, 100);
    }

    @Test
    void aRingLeavesNoFileBehindAndADirectoryThatCannotHoldOneGivesNone(@TempDir final Path directory)
        throws Exception
    {
        final TcpSendRing other = TcpSendRing.open(directory, CAPACITY, true);
        try (Stream<Path> files = Files.list(directory))
        {
            assertEquals(0, files.count(), "the file is deleted once mapped");
        }
        assertEquals(CAPACITY, other.claim(1, CAPACITY).remaining(), "and the memory is there");
        other.close();
        assertNull(TcpSendRing.open(directory.resolve("missing"), CAPACITY, true), "no directory: no ring, no exception");
    }

    @ParameterizedTest(name = "through libc: {0}")
    @ValueSource(booleans = {true, false})
    void sendfileSendsExactlyTheRegion(final boolean viaLibC) throws Exception
    {
        final TcpSendRing under = viaLibC ? ring : TcpSendRing.open(TcpSendRing.DIRECTORY, CAPACITY, false);
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept())
        {
            final ByteBuffer before = under.claim(1, 1000); // sent before: the region under test starts elsewhere
            before.position(1000);
            under.commit();
            final byte[] expected = pattern(50_000);
            final ByteBuffer claimed = under.claim(1, 64 * KIB);
            claimed.put(expected);
            under.commit();
            assertEquals(1000, claimed.position());
            long sent = 0;
            while (claimed.hasRemaining())
            {
                sent += under.send(client);
            }
            assertEquals(expected.length, sent);
            assertEquals(viaLibC, under.sendsViaLibC(), "which way it sent");
            assertArrayEquals(expected, read(accepted, expected.length));
        }
        finally
        {
            if (under != ring)
            {
                under.close();
            }
        }
    }

    /** A non-blocking socket with no room takes part of a region, then nothing, and no error; the rest goes later. */
    @Test
    void aFullSocketTakesPartOfARegionThenNothingAndTheRestLater() throws Exception
    {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept())
        {
            client.setOption(StandardSocketOptions.SO_SNDBUF, 16 * KIB);
            accepted.setOption(StandardSocketOptions.SO_RCVBUF, 16 * KIB);
            client.configureBlocking(false);
            final byte[] expected = pattern(CAPACITY);
            final ByteBuffer claimed = ring.claim(1, CAPACITY);
            claimed.put(expected);
            ring.commit();
            long sent = 0;
            long got;
            while ((got = ring.send(client)) > 0)
            {
                sent += got;
            }
            assertEquals(0, got, "a full socket takes nothing, without an error");
            assertTrue(sent > 0 && sent < CAPACITY, "the socket took part of the region: " + sent);
            assertEquals(sent, claimed.position(), "the region's position is past what was sent");
            assertTrue(ring.sendsViaLibC());
            final ByteBuffer received = ByteBuffer.allocate(CAPACITY);
            while (received.hasRemaining())
            {
                accepted.read(received);
                ring.send(client);
            }
            assertFalse(claimed.hasRemaining());
            assertArrayEquals(expected, received.array());
        }
    }

    /** A send to a socket its peer reset fails with the errno, as a write would. */
    @Test
    void aSendToAResetSocketFails() throws Exception
    {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress()))
        {
            try (SocketChannel accepted = server.accept())
            {
                final ByteBuffer first = ring.claim(1, 100);
                first.position(100);
                ring.commit();
                assertEquals(100, ring.send(client), "the descriptors are found while connected");
                assertTrue(ring.sendsViaLibC());
                assertEquals(100, read(accepted, 100).length);
                accepted.setOption(StandardSocketOptions.SO_LINGER, 0); // close sends a reset
            }
            final ByteBuffer claimed = ring.claim(1, 64 * KIB);
            claimed.position(64 * KIB);
            ring.commit();
            final IOException failure = assertThrows(IOException.class, () ->
            {
                while (true)
                {
                    ring.send(client);
                }
            });
            assertTrue(failure.getMessage().contains("errno"), failure.getMessage());
        }
    }

    private static byte[] pattern(final int length)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(i * 7 + 3);
        }
        return bytes;
    }

    private static byte[] read(final SocketChannel channel, final int length) throws IOException
    {
        final ByteBuffer received = ByteBuffer.allocate(length);
        while (received.hasRemaining())
        {
            channel.read(received);
        }
        return received.array();
    }
}
