package org.rds4j.samples.stress;

/**
 * Checks one ordered stream of sequence numbers 0, 1, 2... (the requests of one task to one receiver, or the
 * replies one task gets back) and counts what RDS promises never happens: gaps, duplicates and reordering.
 * <p>
 * It remembers which of the last {@value #WINDOW} sequence numbers below the highest seen have arrived (a
 * bitmap ring), so a number that arrives late is told apart from one that arrives twice:
 * <ul>
 *   <li>above the highest seen: new; the numbers skipped are missing (for now);</li>
 *   <li>below it and not seen yet: new but <b>reordered</b> (it fills a gap);</li>
 *   <li>below it and seen: <b>duplicated</b>;</li>
 *   <li>more than {@value #WINDOW} below it: too old to tell; counted as reordered (and as new, so
 *       {@link #lost} may undercount by the duplicates among these).</li>
 * </ul>
 * A negative number is counted as neither and returns {@link #INVALID}. Single-threaded; allocates only in
 * its constructor.
 */
public final class SequenceTracker
{
    /** Sequence numbers below the highest one whose arrival is remembered. */
    public static final int WINDOW = 4096;

    /** {@link #record}: the next number expected. */
    public static final int IN_ORDER = 0;
    /** {@link #record}: new, above the next number expected: a gap opened. */
    public static final int AHEAD = 1;
    /** {@link #record}: new, below the highest seen: it filled a gap. */
    public static final int REORDERED = 2;
    /** {@link #record}: seen before. */
    public static final int DUPLICATE = 3;
    /** {@link #record}: negative. */
    public static final int INVALID = 4;

    private final long[] seen = new long[WINDOW / 64];
    /** The highest number seen plus one; 0 before the first. */
    private long next;
    private long distinct;
    private long duplicated;
    private long reordered;

    /** Creates a tracker that has seen nothing. */
    public SequenceTracker()
    {
    }

    /**
     * Records one arrival.
     *
     * @param sequence the number that arrived.
     * @return {@link #IN_ORDER}, {@link #AHEAD}, {@link #REORDERED}, {@link #DUPLICATE} or {@link #INVALID}:
     *         the first three are new numbers.
     */
    public int record(final long sequence)
    {
        if (sequence < 0)
        {
            return INVALID;
        }
        if (sequence >= next)
        {
            final int result = sequence == next ? IN_ORDER : AHEAD;
            if (sequence - next >= WINDOW)
            {
                java.util.Arrays.fill(seen, 0L);
            }
            else
            {
                for (long s = next; s < sequence; s++)
                {
                    clear(s);
                }
            }
            set(sequence);
            next = sequence + 1;
            distinct++;
            return result;
        }
        if (next - sequence > WINDOW)
        {
            distinct++;
            reordered++;
            return REORDERED;
        }
        if (isSet(sequence))
        {
            duplicated++;
            return DUPLICATE;
        }
        set(sequence);
        distinct++;
        reordered++;
        return REORDERED;
    }

    /** @return the highest number seen plus one, 0 if none. */
    public long next()
    {
        return next;
    }

    /** @return how many different numbers arrived. */
    public long distinct()
    {
        return distinct;
    }

    /** @return arrivals of a number that had arrived before. */
    public long duplicated()
    {
        return duplicated;
    }

    /** @return numbers that arrived after a higher one. */
    public long reordered()
    {
        return reordered;
    }

    /** @return numbers below the highest seen that have not arrived (yet). */
    public long missing()
    {
        return Math.max(0, next - distinct);
    }

    /**
     * @param expected how many numbers (0..expected-1) the sender says it sent.
     * @return those of them that did not arrive; never negative.
     */
    public long lost(final long expected)
    {
        return Math.max(0, Math.max(expected, next) - distinct);
    }

    private void set(final long sequence)
    {
        final int bit = (int)(sequence & (WINDOW - 1));
        seen[bit >>> 6] |= 1L << bit;
    }

    private void clear(final long sequence)
    {
        final int bit = (int)(sequence & (WINDOW - 1));
        seen[bit >>> 6] &= ~(1L << bit);
    }

    private boolean isSet(final long sequence)
    {
        final int bit = (int)(sequence & (WINDOW - 1));
        return (seen[bit >>> 6] & (1L << bit)) != 0;
    }
}
