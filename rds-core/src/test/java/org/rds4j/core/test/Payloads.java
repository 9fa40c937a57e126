package org.rds4j.core.test;

import java.nio.ByteBuffer;

/**
 * Test payloads that carry (sender id, sequence) and a pattern derived from them, so a receiver can check
 * every byte, the order per sender and the absence of duplicates.
 */
public final class Payloads
{
    public static final int HEADER = 12;

    private Payloads()
    {
    }

    /** Fills {@code buffer} (cleared) with a message of {@code size} bytes, at least {@link #HEADER}. */
    public static ByteBuffer fill(final ByteBuffer buffer, final int sender, final long sequence, final int size)
    {
        buffer.clear();
        buffer.putInt(sender).putLong(sequence);
        for (int i = HEADER; i < size; i++)
        {
            buffer.put(patternByte(sender, sequence, i));
        }
        return buffer.flip();
    }

    public static int sender(final ByteBuffer message)
    {
        return message.getInt(message.position());
    }

    public static long sequence(final ByteBuffer message)
    {
        return message.getLong(message.position() + 4);
    }

    /** @return true if every byte after the header matches the pattern. */
    public static boolean verify(final ByteBuffer message)
    {
        final int sender = sender(message);
        final long sequence = sequence(message);
        for (int i = HEADER; i < message.remaining(); i++)
        {
            if (message.get(message.position() + i) != patternByte(sender, sequence, i))
            {
                return false;
            }
        }
        return true;
    }

    private static byte patternByte(final int sender, final long sequence, final int index)
    {
        return (byte)(sender * 31 + sequence * 17 + index);
    }
}
