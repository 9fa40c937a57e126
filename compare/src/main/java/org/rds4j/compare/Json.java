package org.rds4j.compare;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A flat JSON object (strings, numbers, booleans, null): the result lines run.sh collects, written and read back
 * through the tools' one JSON configuration ({@link org.rds4j.samples.Json}). Doubles are written with six
 * significant digits in plain notation ({@code 12345.7}, {@code 0.0123457}, {@code 3}), NaN and infinities as
 * {@code null}.
 */
final class Json
{
    private final Map<String, Object> fields = new LinkedHashMap<>();

    Json put(final String key, final Object value)
    {
        fields.put(key, value);
        return this;
    }

    Json putAll(final Json other)
    {
        if (other != null)
        {
            fields.putAll(other.fields);
        }
        return this;
    }

    Object get(final String key)
    {
        return fields.get(key);
    }

    String str(final String key)
    {
        final Object v = fields.get(key);
        return v == null ? null : v.toString();
    }

    /** @return the number, or NaN when absent, null or not a number. */
    double num(final String key)
    {
        final Object v = fields.get(key);
        return v instanceof Number ? ((Number)v).doubleValue() : Double.NaN;
    }

    @Override
    public String toString()
    {
        final Map<String, Object> out = new LinkedHashMap<>();
        fields.forEach((key, v) -> out.put(key, written(v)));
        return org.rds4j.samples.Json.write(out);
    }

    private static Object written(final Object v)
    {
        if (v instanceof Double || v instanceof Float)
        {
            final double d = ((Number)v).doubleValue();
            return Double.isFinite(d) ? new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros() : null;
        }
        if (v == null || v instanceof Number || v instanceof Boolean)
        {
            return v;
        }
        return v.toString();
    }

    /** Parses one flat object as written by {@link #toString()} (or by run.sh, which appends fields). */
    static Json parse(final String text)
    {
        final Json json = new Json();
        org.rds4j.samples.Json.object(text.trim()).forEach(json::put);
        return json;
    }
}
