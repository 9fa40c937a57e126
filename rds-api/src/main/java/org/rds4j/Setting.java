package org.rds4j;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One setting, declared once: the name its builder method and its error messages use ({@code heartbeatTimeout}),
 * its system property ({@code rds4j.heartbeat.timeout}), its environment variable (derived from the property
 * by {@link #environmentVariable(String)}: {@code RDS4J_HEARTBEAT_TIMEOUT}), its default, how its text is
 * parsed and what values it accepts. {@link RdsStackConfig} and the transports' configs declare theirs as
 * constants; a value a builder was not given is {@link #resolve(Object, SettingSource) resolved} from the
 * property, else the environment variable, else the default.
 * <p>
 * Accepted text (blank counts as unset): integers in decimal; sizes in bytes with an optional binary suffix
 * {@code k}, {@code m} or {@code g} ({@code 65536}, {@code 64k}, {@code 2m}); durations as a whole number and
 * a unit, {@code ns}, {@code us}, {@code ms}, {@code s}, {@code m} or {@code h} ({@code 500ms}, {@code 2s}), or
 * ISO-8601 ({@code PT0.5S}); booleans {@code true} or {@code false}; enums by name, in any case. A value that
 * does not parse or is out of range throws an {@link IllegalArgumentException} naming the property or variable.
 *
 * @param <T> the value's type.
 */
public final class Setting<T>
{
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ns|us|ms|s|m|h)");
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmg]?)");

    /**
     * What values a setting accepts.
     *
     * @param <T> the value's type.
     */
    @FunctionalInterface
    public interface Check<T>
    {
        /**
         * @param value a non-null value.
         * @return null if the value is accepted, else what it must be ({@code "must be positive"}), which the
         *         error message puts between the setting's name and the value.
         */
        String problem(T value);
    }

    private final String name;
    private final String property;
    private final String environmentVariable;
    private final Function<String, T> parser;
    private final Supplier<T> defaultValue;
    private final Check<T> check;

    private Setting(final String name, final String property, final Function<String, T> parser,
        final Supplier<T> defaultValue, final Check<T> check)
    {
        this.name = Objects.requireNonNull(name, "name");
        if (!property.startsWith("rds4j."))
        {
            throw new IllegalArgumentException("a setting's property starts with rds4j.: " + property);
        }
        this.property = property;
        this.environmentVariable = environmentVariable(property);
        this.parser = Objects.requireNonNull(parser, "parser");
        this.defaultValue = Objects.requireNonNull(defaultValue, "defaultValue");
        this.check = Objects.requireNonNull(check, "check");
    }

    /**
     * A setting of any type.
     *
     * @param name         the name in error messages, as the builder method's.
     * @param property     the system property, {@code rds4j.<name>}.
     * @param parser       text to value; throws {@link IllegalArgumentException} saying what was expected.
     * @param defaultValue the default, computed when needed.
     * @param check        the values accepted.
     * @param <T>          the value's type.
     * @return the setting.
     */
    public static <T> Setting<T> of(final String name, final String property, final Function<String, T> parser,
        final Supplier<T> defaultValue, final Check<T> check)
    {
        return new Setting<>(name, property, parser, defaultValue, check);
    }

    /**
     * @param name         the name in error messages.
     * @param property     the system property.
     * @param defaultValue the default.
     * @param check        the values accepted.
     * @return an integer setting, in decimal.
     */
    public static Setting<Integer> ofInt(final String name, final String property, final int defaultValue,
        final Check<Integer> check)
    {
        return of(name, property, Setting::parseInt, () -> defaultValue, check);
    }

    /**
     * @param name         the name in error messages.
     * @param property     the system property.
     * @param defaultValue the default, in bytes.
     * @param check        the values accepted.
     * @return a size in bytes, with an optional {@code k}, {@code m} or {@code g} suffix (powers of 1024).
     */
    public static Setting<Integer> ofSize(final String name, final String property, final int defaultValue,
        final Check<Integer> check)
    {
        return of(name, property, Setting::parseSize, () -> defaultValue, check);
    }

    /**
     * @param name         the name in error messages.
     * @param property     the system property.
     * @param defaultValue the default.
     * @param check        the values accepted.
     * @return a duration: a whole number and a unit ({@code 500ms}), or ISO-8601.
     */
    public static Setting<Duration> ofDuration(final String name, final String property, final Duration defaultValue,
        final Check<Duration> check)
    {
        return of(name, property, Setting::parseDuration, () -> defaultValue, check);
    }

    /**
     * @param name         the name in error messages.
     * @param property     the system property.
     * @param defaultValue the default.
     * @return a boolean, {@code true} or {@code false}.
     */
    public static Setting<Boolean> ofBoolean(final String name, final String property, final boolean defaultValue)
    {
        return of(name, property, Setting::parseBoolean, () -> defaultValue, value -> null);
    }

    /**
     * @param name         the name in error messages.
     * @param property     the system property.
     * @param type         the enum.
     * @param defaultValue the default.
     * @param <E>          the enum.
     * @return an enum setting, by constant name in any case.
     */
    public static <E extends Enum<E>> Setting<E> ofEnum(final String name, final String property, final Class<E> type,
        final E defaultValue)
    {
        return of(name, property, text -> parseEnum(type, text), () -> defaultValue, value -> null);
    }

    /**
     * The one rule that names a setting's environment variable: upper case, with {@code _} for each dot and
     * between the humps of a camel-case word ({@code rds4j.ib.pollSpinMicros} is
     * {@code RDS4J_IB_POLL_SPIN_MICROS}).
     *
     * @param property a property name.
     * @return its environment variable.
     */
    public static String environmentVariable(final String property)
    {
        final StringBuilder sb = new StringBuilder(property.length() + 8);
        for (int i = 0; i < property.length(); i++)
        {
            final char c = property.charAt(i);
            if (Character.isUpperCase(c) && i > 0 && Character.isLowerCase(property.charAt(i - 1)))
            {
                sb.append('_');
            }
            sb.append(Character.isLetterOrDigit(c) ? Character.toUpperCase(c) : '_');
        }
        return sb.toString();
    }

    /** @return the name in error messages and documentation, as the builder method's. */
    public String name()
    {
        return name;
    }

    /** @return the system property. */
    public String property()
    {
        return property;
    }

    /** @return the environment variable. */
    public String environmentVariable()
    {
        return environmentVariable;
    }

    /** @return the default. */
    public T defaultValue()
    {
        return defaultValue.get();
    }

    /**
     * @param value a value a builder was given.
     * @return the value, if accepted.
     * @throws NullPointerException     naming the setting if null.
     * @throws IllegalArgumentException {@code <name> <problem>: <value>} if not accepted.
     */
    public T check(final T value)
    {
        Objects.requireNonNull(value, name);
        final String problem = check.problem(value);
        if (problem != null)
        {
            throw new IllegalArgumentException(name + " " + problem + ": " + value);
        }
        return value;
    }

    /**
     * @param source where to read.
     * @return the property's value, else the environment variable's, else the default.
     * @throws IllegalArgumentException naming the property or variable if its value does not parse or is not
     *                                  accepted.
     */
    public T resolve(final SettingSource source)
    {
        final String fromProperty = source.property(property);
        if (fromProperty != null)
        {
            return parse("property " + property, fromProperty);
        }
        final String fromEnvironment = source.environment(environmentVariable);
        if (fromEnvironment != null)
        {
            return parse("environment variable " + environmentVariable, fromEnvironment);
        }
        return defaultValue.get();
    }

    /**
     * @param given  the value a builder was given (checked then), or null.
     * @param source where to read when none was given.
     * @return the given value, else {@link #resolve(SettingSource)}.
     */
    public T resolve(final T given, final SettingSource source)
    {
        return given != null ? given : resolve(source);
    }

    @Override
    public String toString()
    {
        return name + " (" + property + ", " + environmentVariable + ")";
    }

    private T parse(final String where, final String text)
    {
        final T value;
        try
        {
            value = parser.apply(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(where + "=" + text + ": " + ex.getMessage(), ex);
        }
        final String problem = check.problem(value);
        if (problem != null)
        {
            throw new IllegalArgumentException(where + "=" + text + ": " + name + " " + problem);
        }
        return value;
    }

    /**
     * @param value the smallest accepted.
     * @return accepts values of at least {@code value}: {@code must be positive} for 1, else
     *         {@code must be at least <value>}.
     */
    public static Check<Integer> atLeast(final int value)
    {
        final String problem = value == 1 ? "must be positive" : value == 0 ? "must not be negative" : "must be at least " + value;
        return v -> v < value ? problem : null;
    }

    /**
     * @param min the smallest accepted.
     * @param max the largest accepted.
     * @return accepts {@code min..max}.
     */
    public static Check<Integer> range(final int min, final int max)
    {
        return v -> v < min || v > max ? "must be " + min + ".." + max : null;
    }

    /** @return accepts durations above zero ({@code must not be negative}, {@code must be positive}). */
    public static Check<Duration> positiveDuration()
    {
        return v -> v.isNegative() ? "must not be negative" : v.isZero() ? "must be positive" : null;
    }

    /** @return accepts durations of zero or more ({@code must not be negative}). */
    public static Check<Duration> notNegativeDuration()
    {
        return v -> v.isNegative() ? "must not be negative" : null;
    }

    private static Integer parseInt(final String text)
    {
        try
        {
            return Integer.valueOf(text);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("not an integer", ex);
        }
    }

    /**
     * Parses a size as every size setting does; the {@code rds} tools parse their size options with it too.
     *
     * @param text bytes with an optional {@code k}, {@code m} or {@code g} suffix, in any case (powers of 1024:
     *             {@code 64k} is 65536).
     * @return the bytes.
     * @throws IllegalArgumentException saying what was expected, or that the size is above {@link Integer#MAX_VALUE}.
     */
    public static Integer parseSize(final String text)
    {
        final Matcher m = SIZE.matcher(text.toLowerCase(Locale.ROOT));
        if (!m.matches())
        {
            throw new IllegalArgumentException("not a size: expected bytes with an optional k, m or g, e.g. 64k");
        }
        final int shift = switch (m.group(2))
        {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 0;
        };
        try
        {
            final long bytes = Long.parseLong(m.group(1));
            if (bytes > Integer.MAX_VALUE >> shift)
            {
                throw new IllegalArgumentException("too large: at most " + Integer.MAX_VALUE + " bytes");
            }
            return (int)(bytes << shift);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("too large: at most " + Integer.MAX_VALUE + " bytes", ex);
        }
    }

    /**
     * Parses a duration as every duration setting does; the {@code rds} tools parse their duration options with it
     * too.
     *
     * @param text a whole number and {@code ns}, {@code us}, {@code ms}, {@code s}, {@code m} or {@code h}
     *             ({@code 500ms}), or ISO-8601 ({@code PT0.5S}).
     * @return the duration.
     * @throws IllegalArgumentException saying what was expected.
     */
    public static Duration parseDuration(final String text)
    {
        if (text.regionMatches(true, 0, "PT", 0, 2))
        {
            try
            {
                return Duration.parse(text);
            }
            catch (final DateTimeParseException ex)
            {
                throw new IllegalArgumentException("not an ISO-8601 duration", ex);
            }
        }
        final Matcher m = DURATION.matcher(text);
        if (!m.matches())
        {
            throw new IllegalArgumentException("not a duration: expected a whole number and ns, us, ms, s, m or h, e.g. 500ms");
        }
        try
        {
            final long amount = Long.parseLong(m.group(1));
            return switch (m.group(2))
            {
                case "ns" -> Duration.ofNanos(amount);
                case "us" -> Duration.ofNanos(Math.multiplyExact(amount, 1000L));
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                default -> Duration.ofHours(amount);
            };
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new IllegalArgumentException("too large a duration", ex);
        }
    }

    private static Boolean parseBoolean(final String text)
    {
        if (text.equalsIgnoreCase("true"))
        {
            return Boolean.TRUE;
        }
        if (text.equalsIgnoreCase("false"))
        {
            return Boolean.FALSE;
        }
        throw new IllegalArgumentException("not a boolean: expected true or false");
    }

    private static <E extends Enum<E>> E parseEnum(final Class<E> type, final String text)
    {
        final StringBuilder names = new StringBuilder();
        for (final E constant : type.getEnumConstants())
        {
            if (constant.name().equalsIgnoreCase(text))
            {
                return constant;
            }
            names.append(names.length() == 0 ? "" : ", ").append(constant.name().toLowerCase(Locale.ROOT));
        }
        throw new IllegalArgumentException("expected one of " + names);
    }
}
