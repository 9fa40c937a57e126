package org.rds4j.transport.tcp;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link TcpFrameReader}'s memory: its buffer comes from a {@link TcpBufferPool} while it holds bytes, grows only
 * once a header announcing a larger frame has passed validation, to the class that holds that one frame, and goes
 * back to the pool once the stream is between frames.
 */
class TcpFrameReaderTest
{
    private static final int SMALLEST = 64 * 1024;

    private final TcpBufferPool pool = new TcpBufferPool(SMALLEST, 8L * 1024 * 1024, null);
    private final TcpFrameReader reader = new TcpFrameReader(pool);
    private int frames;
    private final TcpFrameReader.FrameHandler count = (buffer, offset, length) ->
    {
        frames++;
        return true;
    };

    private static byte[] frame(final int payload)
    {
        final byte[] header = FakePeer.header(1, 0, payload, 4000, 5000, 0, 0, 0);
        return FakePeer.concat(header, new byte[payload]);
    }

    @Test
    void aHeaderIsValidatedBeforeTheBufferGrowsForItsFrame()
    {
        final byte[] big = frame(200 * 1024);
        // 47 bytes: no whole header yet, so nothing is known about the frame and nothing grows
        reader.offer(ByteBuffer.wrap(big, 0, RdsHeader.LENGTH - 1), count);
        assertEquals(SMALLEST, reader.capacity());
        assertEquals(1, pool.allocations());
        // the 48th byte: the header is valid, and the buffer grows at once to hold its frame
        reader.offer(ByteBuffer.wrap(big, RdsHeader.LENGTH - 1, 1), count);
        assertEquals(256 * 1024, reader.capacity(), "the class holding 48 B + 200 KiB");
        assertEquals(2, pool.allocations());
        assertEquals(256 * 1024, pool.lentBytes(), "the smaller buffer went back");
        reader.offer(ByteBuffer.wrap(big, RdsHeader.LENGTH, big.length - RdsHeader.LENGTH), count);
        assertEquals(1, frames);
        assertEquals(0, reader.capacity(), "between frames the reader holds no buffer");
        assertEquals(0, pool.lentBytes());
        assertEquals(SMALLEST + 256 * 1024, pool.idleBytes());
        assertEquals(256 * 1024, reader.largestCapacity());
    }

    /** The stack refers to a parse's frames until their end is told (receive runs): it is told before they move. */
    @Test
    void theEndOfAParsesFramesIsToldOnceBeforeTheyMoveAndAlsoWhenAHandlerThrows()
    {
        final List<String> calls = new ArrayList<>();
        final byte[] stream = FakePeer.concat(FakePeer.concat(frame(10), frame(20)), Arrays.copyOf(frame(30), 50));
        final TcpFrameReader.FrameHandler handler = new TcpFrameReader.FrameHandler()
        {
            @Override
            public boolean onFrame(final DirectBuffer buffer, final int offset, final int frameLength)
            {
                calls.add("frame " + frameLength);
                if (frameLength == RdsHeader.LENGTH + 30)
                {
                    throw new IllegalStateException("the handler fails");
                }
                return true;
            }

            @Override
            public void onFramesEnd()
            {
                calls.add("end, " + reader.buffered() + " bytes held as read");
            }
        };
        reader.offer(ByteBuffer.wrap(stream), handler);
        assertEquals(List.of("frame 58", "frame 68", "end, 176 bytes held as read"), calls);
        assertEquals(50, reader.buffered(), "the frame begun, moved to the start");

        calls.clear();
        final ByteBuffer rest = ByteBuffer.wrap(frame(30), 50, RdsHeader.LENGTH + 30 - 50);
        assertThrows(IllegalStateException.class, () -> reader.offer(rest, handler));
        assertEquals(List.of("frame 78", "end, 78 bytes held as read"), calls);
    }

    @Test
    void aLengthAboveOneMebibyteIsRefusedWithoutGrowing()
    {
        final byte[] hostile = FakePeer.header(1, 0, (1 << 20) + 1, 4000, 5000, 0, 0, 0);
        final byte[] stream = Arrays.copyOf(hostile, 4096);
        reader.offer(ByteBuffer.wrap(stream), count);
        assertNotEquals(RdsHeader.VALID, reader.invalidVerdict());
        assertEquals(SMALLEST, reader.capacity(), "the first buffer, never grown");
        assertEquals(1, pool.allocations());
        assertEquals(SMALLEST, reader.largestCapacity());
        reader.release();
        assertEquals(0, pool.lentBytes());
    }

    @Test
    void theLargestFrameTakesTheLastClassAndAReadAfterItStartsSmallAgain()
    {
        final byte[] largest = frame(RdsHeader.MAX_PAYLOAD);
        reader.offer(ByteBuffer.wrap(largest), count);
        assertEquals(1, frames);
        assertEquals(TcpFrameReader.MAX_FRAME, reader.largestCapacity(), "one largest frame, not 2 MiB");
        assertEquals(0, pool.lentBytes());
        reader.offer(ByteBuffer.wrap(frame(10), 0, 30), count);
        assertEquals(SMALLEST, reader.capacity(), "a read starts with the smallest class");
        assertEquals(2, pool.allocations(), "from the pool: the first buffer came back after the large frame grew");
    }

    @Test
    void aLargerBufferAskedForKeepsTheFrameBegunAndALargerOneHeldIsKept()
    {
        final byte[] two = FakePeer.concat(frame(1000), frame(1000));
        // a frame and 20 bytes of the next are in: the reader holds a buffer of the smallest class
        reader.offer(ByteBuffer.wrap(two, 0, 1048 + 20), count);
        assertEquals(1, frames);
        assertEquals(SMALLEST, reader.capacity());
        // the owner asks for 256 KiB (its connection streams): the buffer grows, with the 20 bytes held
        final ByteBuffer larger = reader.buffer(256 * 1024);
        assertEquals(256 * 1024, larger.capacity());
        assertEquals(20, larger.position());
        assertEquals(256 * 1024, pool.lentBytes(), "the smaller buffer went back");
        // asking for less keeps what is held
        assertEquals(256 * 1024, reader.buffer(0).capacity());
        larger.put(two, 1048 + 20, 1048 - 20);
        // the second frame parses whole (its header's first 20 bytes crossed the growth), and the buffer goes back
        assertEquals(1, reader.parse(count));
        assertEquals(2, frames);
        assertEquals(RdsHeader.VALID, reader.invalidVerdict());
        assertEquals(0, reader.capacity());
        assertEquals(SMALLEST + 256 * 1024, pool.idleBytes());
    }
}
