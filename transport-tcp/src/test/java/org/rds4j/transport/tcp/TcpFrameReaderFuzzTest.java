package org.rds4j.transport.tcp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.rds4j.core.wire.RdsHeader;
import org.rds4j.transport.tcp.HeaderRules.Rule;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes {@link TcpFrameReader}, the decoder every byte from the network goes through: an arbitrary stream, cut
 * into chunks of varied sizes (as TCP reads cut it), fed to a reader with a small first buffer of varied size.
 * The oracle is {@link HeaderRules}, which reads the header fields from the raw bytes and owes nothing to
 * {@link RdsHeader#validate}, the code under test. Walking the whole stream at once, it says where the first
 * header that breaks a rule is, if any; the reader must then hand out exactly the stream's frames before it
 * (same bytes, same count, in order), and refuse that header with the verdict of a rule it breaks, taking
 * nothing more; with no such header, it must hand out every complete frame and hold the incomplete tail. It
 * never throws and never holds more than one largest frame (48 B + 1 MiB). Its buffer is borrowed from a
 * {@link TcpBufferPool} whose smallest class is the varied first size: the reader holds exactly what it borrowed,
 * and nothing once it is between frames.
 * <p>
 * Regression mode (every {@code mvn verify}) runs the inputs in
 * {@code src/test/resources/org/rds4j/transport/tcp/TcpFrameReaderFuzzTestInputs/frames/}; fuzzing mode:
 * {@code JAZZER_FUZZ=1}, see docs/protocol.md, "Fuzzing".
 */
class TcpFrameReaderFuzzTest
{
    private static final int MAX_FRAME = HeaderRules.HEADER_BYTES + HeaderRules.MAX_PAYLOAD;

    /**
     * @param input byte 0 picks the reader's first buffer size (48 + 16 * b0 bytes), byte 1 how the stream is cut
     *              (0: in one piece; else chunk {@code i} is {@code 1 + (b1 * (i + 1) * 7919) % 700} bytes); the
     *              rest is the stream. Plain bytes, so hand-made corpus files are a two-byte prefix and frames.
     */
    @FuzzTest(maxDuration = "60s")
    void frames(final byte[] input)
    {
        final int initialCapacity = HeaderRules.HEADER_BYTES + 16 * (input.length > 0 ? input[0] & 0xFF : 0);
        final int cut = input.length > 1 ? input[1] & 0xFF : 0;
        final byte[] stream = input.length > 2 ? Arrays.copyOfRange(input, 2, input.length) : new byte[0];

        final TcpBufferPool pool = new TcpBufferPool(initialCapacity, 4L * MAX_FRAME, null);
        final TcpFrameReader reader = new TcpFrameReader(pool);
        final Expected expected = Expected.decode(stream);
        final int[] handedOut = {0};
        final TcpFrameReader.FrameHandler handler = (buffer, offset, frameLength) ->
        {
            final int index = handedOut[0]++;
            assertTrue(index < expected.frameCount, "no frame beyond the stream's frames before a refused header");
            final int start = expected.frameStarts[index];
            assertEquals(expected.frameStarts[index + 1] - start, frameLength, "frame " + index + ": its length");
            assertTrue(offset >= 0 && offset + frameLength <= buffer.capacity(), "inside the buffer");
            for (int i = 0; i < frameLength; i++)
            {
                if (buffer.getByte(offset + i) != stream[start + i])
                {
                    throw new AssertionError("frame " + index + " differs from the stream at byte " + i);
                }
            }
            return true;
        };

        int position = 0;
        int chunk = 0;
        while (position < stream.length)
        {
            final int size = cut == 0 ? stream.length : Math.min(stream.length - position, 1 + (cut * ++chunk * 7919) % 700);
            reader.offer(ByteBuffer.wrap(stream, position, size), handler);
            position += size;
            assertTrue(reader.capacity() <= MAX_FRAME, "never more than one largest frame: " + reader.capacity());
            assertTrue(reader.buffered() <= reader.capacity());
            if (reader.invalidVerdict() != RdsHeader.VALID)
            {
                // stopped: anything more is refused
                final int before = handedOut[0];
                assertEquals(0, reader.offer(ByteBuffer.wrap(new byte[HeaderRules.HEADER_BYTES]), handler));
                assertEquals(before, handedOut[0]);
                break;
            }
        }
        assertEquals(expected.frameCount, handedOut[0], "every complete frame up to the first header that breaks a rule");
        assertEquals(reader.capacity(), pool.lentBytes(), "the reader holds what it borrowed, and nothing more");
        if (expected.refused.isEmpty())
        {
            assertEquals(RdsHeader.VALID, reader.invalidVerdict(), "no header breaks a rule, so none is refused: " +
                RdsHeader.describeValidation(reader.invalidVerdict()));
            assertEquals(stream.length - expected.frameStarts[expected.frameCount], reader.buffered(),
                "the incomplete tail is held");
            if (reader.buffered() == 0)
            {
                assertEquals(0, reader.capacity(), "between frames the buffer is back in the pool");
            }
        }
        else
        {
            final int verdict = reader.invalidVerdict();
            assertTrue(expected.refused.stream().anyMatch(rule -> rule.verdict == verdict), "the header at " +
                expected.frameStarts[expected.frameCount] + " breaks " + expected.refused + ", so it is refused for one" +
                " of them, not: " + RdsHeader.describeValidation(verdict));
        }
        reader.release();
        assertEquals(0, pool.lentBytes(), "released, the reader holds nothing");
    }

    /** What the reader must do with the stream, worked out by {@link HeaderRules} over all of it at once. */
    private static final class Expected
    {
        /** Where each frame handed out starts, then where the rest (a refused header, or the tail) starts. */
        final int[] frameStarts;
        final int frameCount;
        /** The rules the first refused header breaks; empty if no whole header breaks one. */
        final EnumSet<Rule> refused;

        private Expected(final int[] frameStarts, final int frameCount, final EnumSet<Rule> refused)
        {
            this.frameStarts = frameStarts;
            this.frameCount = frameCount;
            this.refused = refused;
        }

        static Expected decode(final byte[] stream)
        {
            final int[] starts = new int[stream.length / HeaderRules.HEADER_BYTES + 2];
            int count = 0;
            int offset = 0;
            EnumSet<Rule> refused = EnumSet.noneOf(Rule.class);
            while (stream.length - offset >= HeaderRules.HEADER_BYTES)
            {
                refused = HeaderRules.broken(stream, offset);
                if (!refused.isEmpty())
                {
                    break;
                }
                final long frameLength = HeaderRules.HEADER_BYTES + HeaderRules.payloadLength(stream, offset);
                if (stream.length - offset < frameLength)
                {
                    break;
                }
                starts[count++] = offset;
                offset += (int)frameLength;
            }
            starts[count] = offset;
            return new Expected(starts, count, refused);
        }
    }
}
