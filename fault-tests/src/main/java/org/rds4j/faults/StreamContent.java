package org.rds4j.faults;

import java.nio.ByteBuffer;

/**
 * The deterministic stream one node sends to another: message {@code index} of the stream from node
 * {@code sender} to node {@code receiver} has a pseudo-random size and pseudo-random bytes that depend only
 * on (seed, sender, receiver, index), so the receiver can rebuild and check every message, and a test can
 * compare the sender's and the receiver's SHA-256 over the stream.
 * <p>
 * A data message is {@code [index: 8 bytes, >= 0][bytes]}; the end-of-stream marker is {@code [-1][count of
 * data messages sent]} (16 bytes).
 */
public final class StreamContent
{
    /** Bytes of the index every data message starts with: the smallest data message. */
    public static final int INDEX_BYTES = 8;
    /** The index of the end-of-stream marker. */
    public static final long END_OF_STREAM = -1;
    /** Size of the end-of-stream marker. */
    public static final int END_OF_STREAM_BYTES = 16;

    private final long seed;
    private final int maxSize;

    /**
     * @param seed    mixed into every size and byte.
     * @param maxSize largest message, at least {@link #INDEX_BYTES}.
     */
    public StreamContent(final long seed, final int maxSize)
    {
        if (maxSize < INDEX_BYTES)
        {
            throw new IllegalArgumentException("maxSize < " + INDEX_BYTES + ": " + maxSize);
        }
        this.seed = seed;
        this.maxSize = maxSize;
    }

    /**
     * Writes message {@code index} of the stream (sender to receiver) into {@code buffer}, cleared first.
     *
     * @return the buffer, flipped: position 0, limit the message size.
     */
    public ByteBuffer fill(final ByteBuffer buffer, final int sender, final int receiver, final long index)
    {
        long state = mix(seed ^ mix(((long)sender << 32) ^ receiver) ^ mix(index + 0x5DEECE66DL));
        final int size = INDEX_BYTES + (int)Long.remainderUnsigned(state, maxSize - INDEX_BYTES + 1);
        buffer.clear();
        buffer.putLong(index);
        while (buffer.position() + 8 <= size)
        {
            state = next(state);
            buffer.putLong(state);
        }
        state = next(state);
        while (buffer.position() < size)
        {
            buffer.put((byte)state);
            state >>>= 8;
        }
        return buffer.flip();
    }

    /** Writes the end-of-stream marker announcing {@code count} data messages into {@code buffer}. */
    public static ByteBuffer endOfStream(final ByteBuffer buffer, final long count)
    {
        buffer.clear();
        return buffer.putLong(END_OF_STREAM).putLong(count).flip();
    }

    private static long next(final long state)
    {
        return mix(state + 0x9E3779B97F4A7C15L);
    }

    /** SplitMix64's finaliser. */
    private static long mix(final long value)
    {
        long z = value;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
