package org.rds4j.core;

/**
 * A connection's outbound messages in sequence order: first those fully sent and waiting for an ack (the
 * retransmission list), then those not yet sent. Agent thread only; grows by doubling, never shrinks.
 */
final class SendQueue
{
    private Message[] ring = new Message[64];
    private int mask = ring.length - 1;
    private int head;
    private int size;
    private int sent;

    int size()
    {
        return size;
    }

    /** @return how many messages at the head are fully sent and unacked. */
    int sentCount()
    {
        return sent;
    }

    boolean hasUnsent()
    {
        return sent < size;
    }

    Message get(final int index)
    {
        return ring[(head + index) & mask];
    }

    void add(final Message message)
    {
        if (size == ring.length)
        {
            grow();
        }
        ring[(head + size) & mask] = message;
        size++;
    }

    /** The message at index {@link #sentCount()} was fully sent. */
    void markSent()
    {
        sent++;
    }

    /**
     * Removes the head if a cumulative ack covers it. A message waiting for retransmission may be removed
     * too (the peer has it), unless a transport is part way through writing it.
     *
     * @param ack        the highest sequence the peer acknowledged.
     * @param headLocked true if the first unsent message is being written and must stay.
     * @return the removed message, or null.
     */
    Message pollAcked(final long ack, final boolean headLocked)
    {
        if (size == 0 || (sent == 0 && headLocked))
        {
            return null;
        }
        final Message message = ring[head];
        if (message.sequence > ack)
        {
            return null;
        }
        return pollHead();
    }

    /** Removes and returns the head, sent or not; null when empty. */
    Message pollHead()
    {
        if (size == 0)
        {
            return null;
        }
        final Message message = ring[head];
        ring[head] = null;
        head = (head + 1) & mask;
        size--;
        if (sent > 0)
        {
            sent--;
        }
        return message;
    }

    /** Every message becomes unsent again, for retransmission on the next connection. */
    void markAllUnsent()
    {
        sent = 0;
    }

    /**
     * Removes the messages a filter selects, keeping the order of the rest.
     *
     * @param filter  says which to remove.
     * @param removed gets each removed message.
     * @return how many were removed.
     */
    int removeIf(final Filter filter, final Removed removed)
    {
        int kept = 0;
        int removedCount = 0;
        int sentKept = 0;
        for (int i = 0; i < size; i++)
        {
            final int slot = (head + i) & mask;
            final Message message = ring[slot];
            ring[slot] = null;
            if (filter.test(i, message))
            {
                removedCount++;
                removed.accept(message);
            }
            else
            {
                ring[(head + kept) & mask] = message;
                kept++;
                if (i < sent)
                {
                    sentKept++;
                }
            }
        }
        size = kept;
        sent = sentKept;
        return removedCount;
    }

    /**
     * Merges messages into the queue by sequence (frames a sending thread had appended to a path that went down).
     *
     * @param extra     the messages, in sequence order.
     * @param count     how many of {@code extra}.
     * @param sentExtra how many of them, from the first, were fully sent.
     */
    void merge(final Message[] extra, final int count, final int sentExtra)
    {
        final Message[] own = new Message[size];
        for (int i = 0; i < size; i++)
        {
            own[i] = get(i);
            ring[(head + i) & mask] = null;
        }
        final int ownSent = sent;
        head = 0;
        size = 0;
        sent = 0;
        boolean allSent = true;
        int a = 0;
        int b = 0;
        while (a < own.length || b < count)
        {
            final boolean fromOwn = b == count || (a < own.length && own[a].sequence < extra[b].sequence);
            final boolean wasSent = fromOwn ? a < ownSent : b < sentExtra;
            add(fromOwn ? own[a++] : extra[b++]);
            allSent &= wasSent;
            if (allSent)
            {
                sent++; // the sent ones stay a prefix
            }
        }
    }

    private void grow()
    {
        final Message[] bigger = new Message[ring.length * 2];
        for (int i = 0; i < size; i++)
        {
            bigger[i] = ring[(head + i) & mask];
        }
        ring = bigger;
        mask = bigger.length - 1;
        head = 0;
    }

    /** Selects messages by position and content. */
    @FunctionalInterface
    interface Filter
    {
        boolean test(int index, Message message);
    }

    /** Receives removed messages. */
    @FunctionalInterface
    interface Removed
    {
        void accept(Message message);
    }
}
