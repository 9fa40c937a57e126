package org.rds4j.transport.tcp;

/**
 * The sequenced frames written to one TCP connection and not yet acked by TCP, each with the stream offset just
 * past its last byte, in write order. Given how many bytes TCP has acked, {@link #ackedUpTo} tells the highest
 * sequence whose frame the peer's host has whole. Grows when full (a doubling, then no more allocation at that
 * depth). Agent thread only.
 */
final class TcpAckedFrames
{
    private long[] ends = new long[64];
    private long[] sequences = new long[64];
    private int head;
    private int size;

    /** A sequenced frame's last byte was written at stream offset {@code end - 1}. */
    void onWritten(final long end, final long sequence)
    {
        if (size == ends.length)
        {
            grow();
        }
        final int at = (head + size) & (ends.length - 1);
        ends[at] = end;
        sequences[at] = sequence;
        size++;
    }

    /**
     * @param ackedBytes bytes of the stream TCP has acked.
     * @return the highest sequence of the frames now wholly acked, which leave the record; 0 if none.
     */
    long ackedUpTo(final long ackedBytes)
    {
        long sequence = 0;
        while (size > 0 && ends[head] <= ackedBytes)
        {
            sequence = sequences[head];
            head = (head + 1) & (ends.length - 1);
            size--;
        }
        return sequence;
    }

    /** @return frames written and not yet acked. */
    int size()
    {
        return size;
    }

    private void grow()
    {
        final long[] newEnds = new long[ends.length * 2];
        final long[] newSequences = new long[ends.length * 2];
        for (int i = 0; i < size; i++)
        {
            newEnds[i] = ends[(head + i) & (ends.length - 1)];
            newSequences[i] = sequences[(head + i) & (ends.length - 1)];
        }
        ends = newEnds;
        sequences = newSequences;
        head = 0;
    }
}
