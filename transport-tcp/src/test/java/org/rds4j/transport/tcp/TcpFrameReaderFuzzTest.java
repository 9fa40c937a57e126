package org.rds4j.transport.tcp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes {@link TcpFrameReader}, the decoder every byte from the network goes through: an arbitrary stream, cut
 * into chunks of varied sizes (as TCP reads cut it), fed to a reader with a small first buffer of varied size.
 * Invariants: it never throws; it never holds more than one largest frame; every frame it hands out passed
 * {@link RdsHeader#validate} and has exactly its announced length; the frames handed out are exactly the
 * stream's frames up to the first invalid header, where it stops for good (checked against a simple reference
 * decoder over the whole stream).
 * <p>
 * Regression mode (every {@code mvn verify}) runs the inputs in
 * {@code src/test/resources/org/rds4j/transport/tcp/TcpFrameReaderFuzzTestInputs/frames/}; fuzzing mode:
 * {@code JAZZER_FUZZ=1}, see docs/protocol.md, "Fuzzing".
 */
class TcpFrameReaderFuzzTest
{
    /**
     * @param input byte 0 picks the reader's first buffer size (48 + 16 * b0 bytes), byte 1 how the stream is cut
     *              (0: in one piece; else chunk {@code i} is {@code 1 + (b1 * (i + 1) * 7919) % 700} bytes); the
     *              rest is the stream. Plain bytes, so hand-made corpus files are a two-byte prefix and frames.
     */
    @FuzzTest(maxDuration = "60s")
    void frames(final byte[] input)
    {
        final int initialCapacity = RdsHeader.LENGTH + 16 * (input.length > 0 ? input[0] & 0xFF : 0);
        final int cut = input.length > 1 ? input[1] & 0xFF : 0;
        final byte[] stream = input.length > 2 ? Arrays.copyOfRange(input, 2, input.length) : new byte[0];

        final TcpFrameReader reader = new TcpFrameReader(initialCapacity);
        final Expected expected = Expected.decode(stream);
        final int[] handedOut = {0};
        final long[] bytesHandedOut = {0};
        final TcpFrameReader.FrameHandler handler = (buffer, offset, frameLength) ->
        {
            assertEquals(RdsHeader.VALID, RdsHeader.validate(buffer, offset), "a frame handed out passed validation");
            assertEquals(RdsHeader.LENGTH + RdsHeader.length(buffer, offset), frameLength, "exactly its declared length");
            assertTrue(offset >= 0 && offset + frameLength <= buffer.capacity(), "inside the buffer");
            final int index = handedOut[0]++;
            assertTrue(index < expected.frameCount, "no frame beyond the stream's valid frames");
            assertEquals(expected.frameStarts[index], bytesHandedOut[0], "frames in stream order, none skipped");
            for (int i = 0; i < frameLength; i++)
            {
                if (buffer.getByte(offset + i) != stream[expected.frameStarts[index] + i])
                {
                    throw new AssertionError("frame " + index + " differs from the stream at byte " + i);
                }
            }
            bytesHandedOut[0] += frameLength;
            return true;
        };

        int position = 0;
        int chunk = 0;
        while (position < stream.length)
        {
            final int size = cut == 0 ? stream.length : Math.min(stream.length - position, 1 + (cut * ++chunk * 7919) % 700);
            reader.offer(ByteBuffer.wrap(stream, position, size), handler);
            position += size;
            assertTrue(reader.capacity() <= TcpFrameReader.MAX_FRAME, "never more than one largest frame: " + reader.capacity());
            assertTrue(reader.buffered() <= reader.capacity());
            if (reader.invalidVerdict() != RdsHeader.VALID)
            {
                // stopped: anything more is refused
                final int before = handedOut[0];
                assertEquals(0, reader.offer(ByteBuffer.wrap(new byte[RdsHeader.LENGTH]), handler));
                assertEquals(before, handedOut[0]);
                break;
            }
        }
        assertEquals(expected.frameCount, handedOut[0], "every complete valid frame before the first invalid header");
        assertEquals(expected.invalidVerdict, reader.invalidVerdict(), "stops at the first invalid header, with its verdict");
        if (expected.invalidVerdict == RdsHeader.VALID)
        {
            assertEquals(stream.length - bytesHandedOut[0], reader.buffered(), "the incomplete tail is held");
        }
    }

    /** The reference: walks the whole stream at once. */
    private static final class Expected
    {
        final int[] frameStarts;
        final int frameCount;
        final int invalidVerdict;

        private Expected(final int[] frameStarts, final int frameCount, final int invalidVerdict)
        {
            this.frameStarts = frameStarts;
            this.frameCount = frameCount;
            this.invalidVerdict = invalidVerdict;
        }

        static Expected decode(final byte[] stream)
        {
            final UnsafeBuffer view = new UnsafeBuffer(stream);
            final int[] starts = new int[stream.length / RdsHeader.LENGTH + 1];
            int count = 0;
            int offset = 0;
            int verdict = RdsHeader.VALID;
            while (stream.length - offset >= RdsHeader.LENGTH)
            {
                verdict = RdsHeader.validate(view, offset);
                if (verdict != RdsHeader.VALID)
                {
                    break;
                }
                final long frameLength = RdsHeader.LENGTH + RdsHeader.length(view, offset);
                if (stream.length - offset < frameLength)
                {
                    break;
                }
                starts[count++] = offset;
                offset += (int)frameLength;
            }
            return new Expected(starts, count, verdict);
        }
    }
}
