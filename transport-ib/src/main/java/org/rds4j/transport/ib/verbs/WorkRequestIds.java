package org.rds4j.transport.ib.verbs;

/**
 * The {@code wr_id} the rings give their work requests: a 32-bit tag (which ring: in part 2, which
 * connection), a receive bit, and the slot. One CQ can then serve many QPs and both directions.
 */
public final class WorkRequestIds
{
    private static final long RECEIVE = 1L << 31;

    private WorkRequestIds()
    {
    }

    static long send(final int tag, final int slot)
    {
        return ((long)tag << 32) | slot;
    }

    static long receive(final int tag, final int slot)
    {
        return ((long)tag << 32) | RECEIVE | slot;
    }

    public static int tag(final long wrId)
    {
        return (int)(wrId >>> 32);
    }

    public static boolean isReceive(final long wrId)
    {
        return (wrId & RECEIVE) != 0;
    }

    public static int slot(final long wrId)
    {
        return (int)(wrId & 0x7FFF_FFFFL);
    }
}
