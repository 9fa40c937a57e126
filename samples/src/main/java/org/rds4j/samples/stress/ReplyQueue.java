package org.rds4j.samples.stress;

import java.net.InetSocketAddress;

/**
 * Answers (REPLY, DONE_ACK) the receive thread could not send at once because the requester's port was
 * congested or the send buffer full, kept in order until they can go. A ring of parallel arrays that doubles
 * when full, so it allocates only while it grows (bounded by the requesters' windows). Single-threaded.
 */
final class ReplyQueue
{
    private InetSocketAddress[] destination;
    private byte[] type;
    private byte[] flags;
    private int[] task;
    private int[] length;
    private long[] sequence;
    private long[] timestamp;
    private int head;
    private int size;

    ReplyQueue(final int capacity)
    {
        allocate(Integer.highestOneBit(Math.max(2, capacity - 1)) << 1);
    }

    boolean isEmpty()
    {
        return size == 0;
    }

    int size()
    {
        return size;
    }

    void add(
        final InetSocketAddress to, final byte type, final int flags, final int task, final int length, final long sequence,
        final long timestamp)
    {
        if (size == destination.length)
        {
            grow();
        }
        final int i = (head + size) & (destination.length - 1);
        this.destination[i] = to;
        this.type[i] = type;
        this.flags[i] = (byte)flags;
        this.task[i] = task;
        this.length[i] = length;
        this.sequence[i] = sequence;
        this.timestamp[i] = timestamp;
        size++;
    }

    InetSocketAddress destination()
    {
        return destination[head];
    }

    byte type()
    {
        return type[head];
    }

    int flags()
    {
        return flags[head] & 0xFF;
    }

    int task()
    {
        return task[head];
    }

    int length()
    {
        return length[head];
    }

    long sequence()
    {
        return sequence[head];
    }

    long timestamp()
    {
        return timestamp[head];
    }

    /** Drops the head, which must exist. */
    void remove()
    {
        destination[head] = null;
        head = (head + 1) & (destination.length - 1);
        size--;
    }

    private void grow()
    {
        final int n = destination.length;
        final InetSocketAddress[] d = destination;
        final byte[] ty = type;
        final byte[] f = flags;
        final int[] t = task;
        final int[] l = length;
        final long[] s = sequence;
        final long[] ts = timestamp;
        allocate(n * 2);
        for (int k = 0; k < size; k++)
        {
            final int from = (head + k) & (n - 1);
            destination[k] = d[from];
            type[k] = ty[from];
            flags[k] = f[from];
            task[k] = t[from];
            length[k] = l[from];
            sequence[k] = s[from];
            timestamp[k] = ts[from];
        }
        head = 0;
    }

    private void allocate(final int capacity)
    {
        destination = new InetSocketAddress[capacity];
        type = new byte[capacity];
        flags = new byte[capacity];
        task = new int[capacity];
        length = new int[capacity];
        sequence = new long[capacity];
        timestamp = new long[capacity];
    }
}
