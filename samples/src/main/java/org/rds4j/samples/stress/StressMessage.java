package org.rds4j.samples.stress;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The layout of an {@code rds stress} payload: a 32-byte header at the start of every message, then (for
 * requests and replies) filler bytes up to the message's size, which hold a pattern derived from the task
 * and the sequence number when the sender verifies.
 *
 * <pre>
 *  offset size field
 *   0     4   magic          0x52445354 ("RDST"): anything else is not stress traffic
 *   4     1   type           REQUEST 1, REPLY 2, DONE 3, DONE_ACK 4
 *   5     1   flags          ONE_WAY 0x01 (do not reply), PATTERN 0x02 (the filler holds the pattern)
 *   6     2   task           the sending task's number on its node (REPLY, DONE_ACK: the task answered)
 *   8     4   length         the payload length as sent, header included
 *  12     4   arg            REQUEST: reply length asked for; DONE: tasks of the sender that send to this
 *                            receiver (so many DONEs to wait for); REPLY, DONE_ACK: 0
 *  16     8   sequence       REQUEST: 0, 1, 2... per task; REPLY: the request's; DONE: requests the task sent
 *                            to this receiver; DONE_ACK: distinct requests of the task the receiver got
 *  24     8   timestamp      REQUEST: System.nanoTime() of the send (or of its scheduled time with --rate;
 *                            one-way, of up to 63 sends before), on the requester's clock; REPLY: echoed;
 *                            DONE, DONE_ACK: 0
 * </pre>
 * All fields are big-endian. Every method here works on absolute offsets from a buffer's position and
 * allocates nothing.
 */
public final class StressMessage
{
    /** Bytes of the header; the smallest message. */
    public static final int HEADER_BYTES = 32;
    /** The first four bytes of every stress message: "RDST". */
    public static final int MAGIC = 0x52445354;

    /** A request: answered with a REPLY unless it carries {@link #FLAG_ONE_WAY}. */
    public static final byte REQUEST = 1;
    /** The answer to a request, carrying the request's task, sequence and timestamp. */
    public static final byte REPLY = 2;
    /** A task's last message to a receiver: how many requests it sent there. */
    public static final byte DONE = 3;
    /** The answer to DONE: how many of the task's requests arrived. */
    public static final byte DONE_ACK = 4;

    /** The receiver must not reply. */
    public static final int FLAG_ONE_WAY = 0x01;
    /** The bytes after the header hold {@link #fill the pattern} and are checked. */
    public static final int FLAG_PATTERN = 0x02;

    static final int OFFSET_MAGIC = 0;
    static final int OFFSET_TYPE = 4;
    static final int OFFSET_FLAGS = 5;
    static final int OFFSET_TASK = 6;
    static final int OFFSET_LENGTH = 8;
    static final int OFFSET_ARG = 12;
    static final int OFFSET_SEQUENCE = 16;
    static final int OFFSET_TIMESTAMP = 24;

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;
    private static final long MIX = 0xBF58476D1CE4E5B9L;

    private StressMessage()
    {
    }

    /**
     * Writes a header at {@code buffer}'s position (the position and limit do not move).
     *
     * @param buffer    where; at least {@link #HEADER_BYTES} from its position.
     * @param type      {@link #REQUEST}, {@link #REPLY}, {@link #DONE} or {@link #DONE_ACK}.
     * @param flags     {@link #FLAG_ONE_WAY}, {@link #FLAG_PATTERN}.
     * @param task      task number, 0..65535.
     * @param length    the whole payload's length.
     * @param arg       see the class comment.
     * @param sequence  see the class comment.
     * @param timestamp see the class comment.
     */
    public static void writeHeader(
        final ByteBuffer buffer,
        final byte type,
        final int flags,
        final int task,
        final int length,
        final int arg,
        final long sequence,
        final long timestamp)
    {
        final int p = buffer.position();
        putInt(buffer, p + OFFSET_MAGIC, MAGIC);
        buffer.put(p + OFFSET_TYPE, type);
        buffer.put(p + OFFSET_FLAGS, (byte)flags);
        putShort(buffer, p + OFFSET_TASK, task);
        putInt(buffer, p + OFFSET_LENGTH, length);
        putInt(buffer, p + OFFSET_ARG, arg);
        putLong(buffer, p + OFFSET_SEQUENCE, sequence);
        putLong(buffer, p + OFFSET_TIMESTAMP, timestamp);
    }

    /**
     * Rewrites only the sequence and timestamp of a header written before, for the next message of a task.
     *
     * @param buffer    the message, header at its position.
     * @param sequence  the new sequence number.
     * @param timestamp the new timestamp.
     */
    public static void restamp(final ByteBuffer buffer, final long sequence, final long timestamp)
    {
        final int p = buffer.position();
        putLong(buffer, p + OFFSET_SEQUENCE, sequence);
        putLong(buffer, p + OFFSET_TIMESTAMP, timestamp);
    }

    /**
     * @param m a message at its position.
     * @return whether it is long enough and starts with the magic.
     */
    public static boolean isStress(final ByteBuffer m)
    {
        return m.remaining() >= HEADER_BYTES && getInt(m, m.position() + OFFSET_MAGIC) == MAGIC;
    }

    /**
     * @param m a message at its position.
     * @return its type byte.
     */
    public static byte type(final ByteBuffer m)
    {
        return m.get(m.position() + OFFSET_TYPE);
    }

    /**
     * @param m a message at its position.
     * @return its flags.
     */
    public static int flags(final ByteBuffer m)
    {
        return m.get(m.position() + OFFSET_FLAGS) & 0xFF;
    }

    /**
     * @param m a message at its position.
     * @return its task number, 0..65535.
     */
    public static int task(final ByteBuffer m)
    {
        return getShort(m, m.position() + OFFSET_TASK);
    }

    /**
     * @param m a message at its position.
     * @return the length its sender wrote into it.
     */
    public static int length(final ByteBuffer m)
    {
        return getInt(m, m.position() + OFFSET_LENGTH);
    }

    /**
     * @param m a message at its position.
     * @return its {@code arg} field.
     */
    public static int arg(final ByteBuffer m)
    {
        return getInt(m, m.position() + OFFSET_ARG);
    }

    /**
     * @param m a message at its position.
     * @return its sequence field.
     */
    public static long sequence(final ByteBuffer m)
    {
        return getLong(m, m.position() + OFFSET_SEQUENCE);
    }

    /**
     * @param m a message at its position.
     * @return its timestamp field.
     */
    public static long timestamp(final ByteBuffer m)
    {
        return getLong(m, m.position() + OFFSET_TIMESTAMP);
    }

    /**
     * Fills the bytes after the header, up to the limit, with the pattern of ({@code task}, {@code sequence}),
     * eight bytes at a time.
     *
     * @param m        the message, header at its position, limit at its end.
     * @param task     the task number.
     * @param sequence the sequence number.
     */
    public static void fill(final ByteBuffer m, final int task, final long sequence)
    {
        final int start = m.position() + HEADER_BYTES;
        final int end = m.limit();
        final long seed = seed(task, sequence);
        int i = start;
        long k = 0;
        for (; i + 8 <= end; i += 8, k++)
        {
            putLong(m, i, word(seed, k));
        }
        final long last = word(seed, k);
        for (int shift = 56; i < end; i++, shift -= 8)
        {
            m.put(i, (byte)(last >>> shift));
        }
    }

    /**
     * Checks what {@link #fill} wrote.
     *
     * @param m        the message, header at its position, limit at its end.
     * @param task     the task number.
     * @param sequence the sequence number.
     * @return whether every byte after the header matches.
     */
    public static boolean matches(final ByteBuffer m, final int task, final long sequence)
    {
        final int start = m.position() + HEADER_BYTES;
        final int end = m.limit();
        final long seed = seed(task, sequence);
        int i = start;
        long k = 0;
        for (; i + 8 <= end; i += 8, k++)
        {
            if (getLong(m, i) != word(seed, k))
            {
                return false;
            }
        }
        final long last = word(seed, k);
        for (int shift = 56; i < end; i++, shift -= 8)
        {
            if (m.get(i) != (byte)(last >>> shift))
            {
                return false;
            }
        }
        return true;
    }

    private static long seed(final int task, final long sequence)
    {
        return sequence * MIX ^ ((long)task << 44);
    }

    /** Word {@code k} of the pattern: splitmix64's finaliser, so every bit of task and sequence reaches every byte. */
    private static long word(final long seed, final long k)
    {
        long z = seed + (k + 1) * GOLDEN;
        z = (z ^ (z >>> 30)) * MIX;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    // Absolute big-endian access whatever the buffer's own byte order (a received view may have either).

    private static boolean big(final ByteBuffer b)
    {
        return b.order() == ByteOrder.BIG_ENDIAN;
    }

    static long getLong(final ByteBuffer b, final int index)
    {
        final long v = b.getLong(index);
        return big(b) ? v : Long.reverseBytes(v);
    }

    static int getInt(final ByteBuffer b, final int index)
    {
        final int v = b.getInt(index);
        return big(b) ? v : Integer.reverseBytes(v);
    }

    static int getShort(final ByteBuffer b, final int index)
    {
        final short v = b.getShort(index);
        return (big(b) ? v : Short.reverseBytes(v)) & 0xFFFF;
    }

    static void putLong(final ByteBuffer b, final int index, final long value)
    {
        b.putLong(index, big(b) ? value : Long.reverseBytes(value));
    }

    static void putInt(final ByteBuffer b, final int index, final int value)
    {
        b.putInt(index, big(b) ? value : Integer.reverseBytes(value));
    }

    static void putShort(final ByteBuffer b, final int index, final int value)
    {
        final short s = (short)value;
        b.putShort(index, big(b) ? s : Short.reverseBytes(s));
    }
}
