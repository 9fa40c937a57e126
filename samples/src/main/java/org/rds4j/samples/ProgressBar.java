package org.rds4j.samples;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A one-line progress display for a terminal: {@code  42% 2.1/5.0 MiB 123.4 MB/s ETA 0:03}, rewritten in place
 * with a carriage return at most every {@link #REFRESH_NS} and ended with a newline by {@link #finish}. A
 * disabled bar prints nothing.
 */
final class ProgressBar
{
    /** Shortest time between two redraws. */
    static final long REFRESH_NS = TimeUnit.MILLISECONDS.toNanos(200);

    private final PrintWriter out;
    private final long total;
    private final boolean enabled;
    private final long startNs = System.nanoTime();
    private long lastDrawNs = Long.MIN_VALUE;
    private int lastWidth;

    /**
     * @param out     where the bar goes (stderr).
     * @param total   bytes in all.
     * @param enabled {@code false} for a bar that prints nothing.
     */
    ProgressBar(final PrintWriter out, final long total, final boolean enabled)
    {
        this.out = out;
        this.total = total;
        this.enabled = enabled;
    }

    /**
     * Redraws if {@link #REFRESH_NS} has passed since the last draw.
     *
     * @param done bytes done.
     */
    void update(final long done)
    {
        if (!enabled)
        {
            return;
        }
        final long now = System.nanoTime();
        if (lastDrawNs == Long.MIN_VALUE || now - lastDrawNs >= REFRESH_NS)
        {
            draw(done, now);
        }
    }

    /**
     * Draws the final state and ends the line.
     *
     * @param done bytes done.
     */
    void finish(final long done)
    {
        if (!enabled)
        {
            return;
        }
        draw(done, System.nanoTime());
        out.println();
        out.flush();
    }

    private void draw(final long done, final long now)
    {
        lastDrawNs = now;
        final String line = line(done, now - startNs, total);
        final StringBuilder text = new StringBuilder("\r").append(line);
        for (int i = line.length(); i < lastWidth; i++)
        {
            text.append(' '); // wipe the rest of a longer previous line
        }
        lastWidth = line.length();
        out.print(text);
        out.flush();
    }

    /**
     * @param done      bytes done.
     * @param elapsedNs time since the start.
     * @param total     bytes in all.
     * @return the text of the bar, e.g. {@code  42% 2.1/5.0 MiB 123.4 MB/s ETA 0:03}.
     */
    static String line(final long done, final long elapsedNs, final long total)
    {
        final int percent = total == 0 ? 100 : (int)(done * 100 / total);
        final double seconds = Math.max(elapsedNs, 1) / 1e9;
        final double rate = done / seconds; // bytes per second
        final String eta = done >= total ? "0:00" : rate <= 0 ? "--:--" : duration((long)Math.ceil((total - done) / rate));
        return String.format(Locale.ROOT, "%3d%% %s/%s %.1f MB/s ETA %s", percent, mebibytes(done), mebibytes(total) + " MiB",
            rate / 1e6, eta);
    }

    private static String mebibytes(final long bytes)
    {
        return String.format(Locale.ROOT, "%.1f", bytes / (1024.0 * 1024.0));
    }

    private static String duration(final long seconds)
    {
        return seconds >= 3600
            ? String.format(Locale.ROOT, "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
            : String.format(Locale.ROOT, "%d:%02d", seconds / 60, seconds % 60);
    }
}
