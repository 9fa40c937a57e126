package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import picocli.CommandLine.TypeConversionException;

/** The duration and size converters every {@code rds} command uses: exact values for each accepted form. */
class UnitConvertersTest
{
    @Test
    void durations()
    {
        assertEquals(Duration.ofMillis(200), DurationConverter.parse("0.2"));
        assertEquals(Duration.ofSeconds(10), DurationConverter.parse("10"));
        assertEquals(Duration.ofMillis(500), DurationConverter.parse(".5"));
        assertEquals(Duration.ofSeconds(3), DurationConverter.parse("3."));
        assertEquals(Duration.ofNanos(1), DurationConverter.parse("0.000000001"));
        assertEquals(Duration.ZERO, DurationConverter.parse("0"));
        assertEquals(Duration.ofMillis(500), DurationConverter.parse("500ms"));
        assertEquals(Duration.ofSeconds(2), DurationConverter.parse("2s"));
        assertEquals(Duration.ofMinutes(1), DurationConverter.parse("1m"));
        assertEquals(Duration.ofHours(1), DurationConverter.parse("1h"));
        assertEquals(Duration.ofNanos(250_000), DurationConverter.parse("250us"));
        assertEquals(Duration.ofMillis(1500), DurationConverter.parse("PT1.5S"));
        assertEquals(Duration.ofMillis(20), DurationConverter.parse(" 20ms "));
        for (final String bad : new String[] {"-1", "1.5s", "2 minutes", "", "0.0000000001", "1e3", "s"})
        {
            final TypeConversionException e = assertThrows(TypeConversionException.class, () -> DurationConverter.parse(bad), bad);
            assertEquals("'" + bad + "' is not a duration: expected seconds (0.2, 10) or a whole number and ns, us, ms, s, m or h "
                + "(500ms, 2s)", e.getMessage());
        }
    }

    @Test
    void durationsAreFormattedInTheLargestWholeUnit()
    {
        assertEquals("0s", DurationConverter.format(Duration.ZERO));
        assertEquals("1s", DurationConverter.format(Duration.ofSeconds(1)));
        assertEquals("200ms", DurationConverter.format(Duration.ofMillis(200)));
        assertEquals("90s", DurationConverter.format(Duration.ofSeconds(90)));
        assertEquals("2m", DurationConverter.format(Duration.ofMinutes(2)));
        assertEquals("1500us", DurationConverter.format(Duration.ofNanos(1_500_000)));
        assertEquals("7ns", DurationConverter.format(Duration.ofNanos(7)));
    }

    @Test
    void sizes()
    {
        final SizeConverter sizes = new SizeConverter();
        assertEquals(1024, sizes.convert("1024"));
        assertEquals(65536, sizes.convert("64k"));
        assertEquals(65536, sizes.convert("64K"));
        assertEquals(1 << 20, sizes.convert("1m"));
        assertEquals(1 << 30, sizes.convert("1g"));
        assertEquals(0, sizes.convert("0"));
        for (final String bad : new String[] {"-1", "1.5k", "64KiB", "2g", "", "k"})
        {
            final TypeConversionException e = assertThrows(TypeConversionException.class, () -> sizes.convert(bad), bad);
            assertEquals("'" + bad + "' is not a size: expected bytes with an optional k, m or g (powers of 1024: 64k, 1m)",
                e.getMessage());
        }
    }
}
