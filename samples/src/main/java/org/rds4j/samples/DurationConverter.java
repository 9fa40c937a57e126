package org.rds4j.samples;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Pattern;

import org.rds4j.Setting;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The one converter of every duration option of the {@code rds} commands: a bare number is seconds and may have
 * decimals ({@code 0.2}, {@code 10}), as in {@code ping -i} and {@code watch -n}; anything else is parsed as the
 * library's duration settings are ({@link Setting#parseDuration}): a whole number and {@code ns}, {@code us},
 * {@code ms}, {@code s}, {@code m} or {@code h} ({@code 500ms}, {@code 2s}, {@code 1m}), or ISO-8601.
 * Negative durations are refused here; each command checks its own range.
 */
public final class DurationConverter implements ITypeConverter<Duration>
{
    private static final Pattern SECONDS = Pattern.compile("\\d+(\\.\\d*)?|\\.\\d+");

    @Override
    public Duration convert(final String value)
    {
        return parse(value);
    }

    /**
     * @param value the text, e.g. {@code 0.2}, {@code 500ms} or {@code 2s}.
     * @return the duration, to the nanosecond.
     * @throws TypeConversionException saying what was expected.
     */
    public static Duration parse(final String value)
    {
        final String text = value.trim();
        try
        {
            if (SECONDS.matcher(text).matches())
            {
                return Duration.ofNanos(new BigDecimal(text).movePointRight(9).longValueExact());
            }
            return Setting.parseDuration(text);
        }
        catch (final IllegalArgumentException | ArithmeticException e)
        {
            throw new TypeConversionException("'" + value + "' is not a duration: expected seconds (0.2, 10) or a whole "
                + "number and ns, us, ms, s, m or h (500ms, 2s)");
        }
    }

    /**
     * @param duration a duration.
     * @return it as the converter reads it back, in the largest unit that keeps it whole: {@code 1s},
     *         {@code 200ms}, {@code 0s}.
     */
    public static String format(final Duration duration)
    {
        final long nanos = duration.toNanos();
        if (nanos == 0)
        {
            return "0s";
        }
        final String[] units = {"h", "m", "s", "ms", "us"};
        final long[] sizes = {3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L};
        for (int i = 0; i < units.length; i++)
        {
            if (nanos % sizes[i] == 0)
            {
                return nanos / sizes[i] + units[i];
            }
        }
        return nanos + "ns";
    }
}
