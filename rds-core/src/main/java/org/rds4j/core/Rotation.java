package org.rds4j.core;

/**
 * The order in which the duty cycle serves one of its lists (sockets, connections, transports): every element
 * once a cycle, from a start that moves on by one each cycle, so that no socket or peer is always served last.
 * An int and a comparison: nothing to allocate, no division.
 * <p>
 * Threads: one per list, used by whoever runs the duty cycle.
 */
final class Rotation
{
    private int next;

    /**
     * Begins a cycle over the list: call once per cycle.
     *
     * @param size the list's size this cycle.
     * @return the index to serve first, one on from last cycle's (back to 0 past the end).
     */
    int first(final int size)
    {
        final int first = next < size ? next : 0;
        next = first + 1;
        return first;
    }

    /**
     * @param first the index served first, from {@link #first}.
     * @param turn  0 for the first served, up to {@code size - 1} for the last.
     * @param size  the list's size this cycle.
     * @return the index to serve at that turn.
     */
    static int index(final int first, final int turn, final int size)
    {
        final int index = first + turn;
        return index < size ? index : index - size;
    }
}
