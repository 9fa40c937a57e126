package org.rds4j.transport.tcp;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;

/**
 * The stream framing of RDS over TCP: bytes in, complete frames (48-byte header then {@code len} payload bytes)
 * out. Every header is checked with {@link RdsHeader#validate} as soon as its 48 bytes are here, before its
 * payload is awaited, so a hostile {@code len} is refused instead of allocated; the first invalid header
 * stops the reader for good ({@link #invalidVerdict()}).
 * <p>
 * Memory: one direct buffer, borrowed from a {@link TcpBufferPool} only while it holds bytes: a read takes one of
 * the class its owner asks for (the pool's smallest, or a larger one while the connection streams), and a parse
 * that leaves nothing (the stream is between frames) gives it back. Beyond what the owner asks, it is grown (to the
 * next class that holds the announced frame, at least doubling) only for a frame whose header passed validation,
 * so never beyond one largest frame ({@link #MAX_FRAME} = 48 + 1 MiB) whatever the input; a grown buffer goes back
 * to the pool like any other once the frame is handed out. Frames are handed out in place (no
 * copy). Not thread safe: the agent thread owns it.
 */
final class TcpFrameReader
{
    /** The largest frame: a header and a 1 MiB payload. */
    static final int MAX_FRAME = RdsHeader.LENGTH + RdsHeader.MAX_PAYLOAD;
    /** The read buffer a read starts with: the transport pool's smallest class, one duty cycle's read. */
    static final int DEFAULT_INITIAL_CAPACITY = TcpBufferPool.DEFAULT_SMALLEST_CLASS;

    /** Receives the complete, validated frames. */
    @FunctionalInterface
    interface FrameHandler
    {
        /**
         * @param buffer      holds the frame; valid only during the call.
         * @param offset      of the header's first byte.
         * @param frameLength header plus payload bytes.
         * @return true to go on parsing; false to stop (the rest stays buffered: the owner is closing).
         */
        boolean onFrame(DirectBuffer buffer, int offset, int frameLength);

        /**
         * The frames handed to {@link #onFrame} since the last call stay where they were until this returns: the parse
         * is about to move what follows them. Called also when a handler threw.
         */
        default void onFramesEnd()
        {
        }
    }

    private static final ByteBuffer NONE = ByteBuffer.allocateDirect(0);

    private final TcpBufferPool pool;
    /**
     * Bytes held from index 0 to the position; the rest is room for the next read. {@link #NONE} (no capacity, not
     * written) while nothing is held and nothing borrowed.
     */
    private ByteBuffer buffer = NONE;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private int invalidVerdict = RdsHeader.VALID;
    /** The largest buffer this reader has held. */
    private int largestCapacity;

    /** @param pool lends the read buffer; its smallest class is the buffer a read starts with. */
    TcpFrameReader(final TcpBufferPool pool)
    {
        this.pool = pool;
    }

    /**
     * Where the next bytes go (a channel read): fill from its position, then call {@link #parse}. Borrows a buffer
     * of at least {@code minCapacity} from the pool if none is held, and grows a smaller one held (its bytes, at
     * most one frame begun, are copied); a larger one is kept until it is given back between frames. After a parse
     * that found no invalid header it always has room, as it is grown to hold the whole frame being received.
     *
     * @param minCapacity bytes the buffer should hold, at most {@link #MAX_FRAME}; 0 for the pool's smallest class.
     * @return the read buffer, in write mode.
     */
    ByteBuffer buffer(final int minCapacity)
    {
        if (buffer == NONE)
        {
            use(pool.acquire(minCapacity));
        }
        else if (buffer.capacity() < minCapacity)
        {
            grow(minCapacity);
        }
        return buffer;
    }

    private void use(final ByteBuffer borrowed)
    {
        buffer = borrowed;
        view.wrap(borrowed);
        largestCapacity = Math.max(largestCapacity, borrowed.capacity());
    }

    /** Gives the buffer back to the pool if it holds nothing (a read that brought no byte). */
    void releaseIfEmpty()
    {
        if (buffer != NONE && buffer.position() == 0)
        {
            release();
        }
    }

    /** Gives the buffer back to the pool whatever it holds: the owner is closed and reads no more. */
    void release()
    {
        if (buffer != NONE)
        {
            final ByteBuffer returned = buffer;
            buffer = NONE;
            view.wrap(0, 0);
            pool.release(returned);
        }
    }

    /**
     * Hands every complete frame held to {@code handler}, then keeps the rest (an incomplete frame) at the start
     * of the buffer, growing the buffer if that frame's validated header announces more than it can hold.
     *
     * @param handler receives the frames.
     * @return frames handed out.
     */
    int parse(final FrameHandler handler)
    {
        if (invalidVerdict != RdsHeader.VALID)
        {
            return 0;
        }
        final int end = buffer.position();
        int offset = 0;
        int count = 0;
        try
        {
            while (end - offset >= RdsHeader.LENGTH)
            {
                final int verdict = RdsHeader.validate(view, offset);
                if (verdict != RdsHeader.VALID)
                {
                    invalidVerdict = verdict;
                    break;
                }
                final int frameLength = RdsHeader.LENGTH + (int)RdsHeader.length(view, offset);
                if (end - offset < frameLength)
                {
                    break;
                }
                count++;
                final boolean more = handler.onFrame(view, offset, frameLength);
                offset += frameLength;
                if (!more)
                {
                    break;
                }
            }
        }
        finally
        {
            if (count > 0)
            {
                handler.onFramesEnd(); // also if a handler threw: nothing may refer to the frames once they move
            }
        }
        if (offset > 0)
        {
            buffer.limit(end).position(offset);
            buffer.compact();
        }
        final int held = buffer.position();
        if (invalidVerdict == RdsHeader.VALID && held >= RdsHeader.LENGTH)
        {
            // validated above (or on an earlier parse): len <= 1 MiB
            final int needed = RdsHeader.LENGTH + (int)RdsHeader.length(view, 0);
            if (needed > buffer.capacity())
            {
                grow(needed);
            }
        }
        else if (held == 0 && invalidVerdict == RdsHeader.VALID)
        {
            release(); // between frames: nothing to keep
        }
        return count;
    }

    /**
     * Feeds bytes from {@code source} until it is empty or an invalid header is found: copies what fits,
     * parses, repeats. The channel-free form of {@link #buffer(int)} plus {@link #parse}.
     *
     * @param source  the bytes; its position advances past what was taken.
     * @param handler receives the frames.
     * @return frames handed out.
     */
    int offer(final ByteBuffer source, final FrameHandler handler)
    {
        int count = 0;
        while (source.hasRemaining() && invalidVerdict == RdsHeader.VALID)
        {
            final ByteBuffer buffer = buffer(0);
            final int chunk = Math.min(source.remaining(), buffer.remaining());
            if (chunk == 0)
            {
                break; // only after a handler stopped parsing with a whole frame still held
            }
            final ByteBuffer slice = source.slice(source.position(), chunk);
            buffer.put(slice);
            source.position(source.position() + chunk);
            count += parse(handler);
        }
        return count;
    }

    private void grow(final int needed)
    {
        final ByteBuffer bigger = pool.acquire(Math.min(MAX_FRAME, Math.max(needed, buffer.capacity() * 2)));
        buffer.flip();
        bigger.put(buffer);
        pool.release(buffer);
        use(bigger);
    }

    /** @return {@link RdsHeader#VALID}, or the {@link RdsHeader#validate} result of the first invalid header. */
    int invalidVerdict()
    {
        return invalidVerdict;
    }

    /** @return bytes still missing from the frame begun, 0 if none is begun or its header is not yet whole. */
    int bytesToCompleteFrame()
    {
        final int held = buffer.position();
        if (held < RdsHeader.LENGTH || invalidVerdict != RdsHeader.VALID)
        {
            return 0;
        }
        return RdsHeader.LENGTH + (int)RdsHeader.length(view, 0) - held;
    }

    /** @return bytes held: the start of a frame not yet complete (0 between frames). */
    int buffered()
    {
        return buffer.position();
    }

    /** @return bytes of the read buffer held (never more than {@link #MAX_FRAME}), 0 if none is held. */
    int capacity()
    {
        return buffer.capacity();
    }

    /** @return bytes of the largest read buffer this reader has held. */
    int largestCapacity()
    {
        return largestCapacity;
    }
}
