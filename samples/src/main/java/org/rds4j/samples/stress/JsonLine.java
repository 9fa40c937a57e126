package org.rds4j.samples.stress;

import java.util.Locale;

/**
 * Builds one JSON object on one line, by hand (the tool needs no JSON library): numbers are written as
 * JSON numbers (a non-finite double as {@code null}), strings are escaped.
 */
public final class JsonLine
{
    private final StringBuilder text = new StringBuilder(256);
    private boolean first = true;

    /** Starts an empty object. */
    public JsonLine()
    {
        text.append('{');
    }

    /**
     * @param name  the key.
     * @param value the value.
     * @return this.
     */
    public JsonLine add(final String name, final long value)
    {
        key(name).append(value);
        return this;
    }

    /**
     * @param name  the key.
     * @param value the value, written with up to three decimals; NaN and infinities as {@code null}.
     * @return this.
     */
    public JsonLine add(final String name, final double value)
    {
        key(name);
        if (Double.isFinite(value))
        {
            text.append(number(value));
        }
        else
        {
            text.append("null");
        }
        return this;
    }

    /**
     * @param name  the key.
     * @param value the value.
     * @return this.
     */
    public JsonLine add(final String name, final boolean value)
    {
        key(name).append(value);
        return this;
    }

    /**
     * @param name  the key.
     * @param value the value, escaped; {@code null} as {@code null}.
     * @return this.
     */
    public JsonLine add(final String name, final String value)
    {
        key(name);
        if (value == null)
        {
            text.append("null");
        }
        else
        {
            quote(value);
        }
        return this;
    }

    /**
     * @param name   the key.
     * @param object a nested object, {@code null} for {@code null}.
     * @return this.
     */
    public JsonLine add(final String name, final JsonLine object)
    {
        key(name).append(object == null ? "null" : object.toString());
        return this;
    }

    /**
     * @param name   the key.
     * @param values an array of strings.
     * @return this.
     */
    public JsonLine add(final String name, final Iterable<String> values)
    {
        return array(name, values, this::quote);
    }

    /**
     * @param name    the key.
     * @param objects an array of objects.
     * @return this.
     */
    public JsonLine addObjects(final String name, final Iterable<JsonLine> objects)
    {
        return array(name, objects, text::append);
    }

    private <T> JsonLine array(final String name, final Iterable<T> values, final java.util.function.Consumer<T> write)
    {
        key(name).append('[');
        boolean firstValue = true;
        for (final T value : values)
        {
            if (!firstValue)
            {
                text.append(',');
            }
            firstValue = false;
            write.accept(value);
        }
        text.append(']');
        return this;
    }

    /** @return the object, closed: {@code {"k":v,...}}. */
    @Override
    public String toString()
    {
        return text + "}";
    }

    /**
     * @param value a finite number.
     * @return it with at most three decimals and no trailing zeros, never in exponent form.
     */
    static String number(final double value)
    {
        if (value == Math.rint(value) && Math.abs(value) < 1e15)
        {
            return Long.toString((long)value);
        }
        String s = String.format(Locale.ROOT, "%.3f", value);
        while (s.endsWith("0"))
        {
            s = s.substring(0, s.length() - 1);
        }
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }

    private StringBuilder key(final String name)
    {
        if (!first)
        {
            text.append(',');
        }
        first = false;
        quote(name);
        return text.append(':');
    }

    private void quote(final String s)
    {
        text.append('"');
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            switch (c)
            {
                case '"' -> text.append("\\\"");
                case '\\' -> text.append("\\\\");
                case '\n' -> text.append("\\n");
                case '\r' -> text.append("\\r");
                case '\t' -> text.append("\\t");
                default ->
                {
                    if (c < 0x20)
                    {
                        text.append(String.format(Locale.ROOT, "\\u%04x", (int)c));
                    }
                    else
                    {
                        text.append(c);
                    }
                }
            }
        }
        text.append('"');
    }
}
