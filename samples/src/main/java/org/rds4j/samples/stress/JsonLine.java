package org.rds4j.samples.stress;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.rds4j.samples.Json;

/**
 * Builds one JSON object, in the order its fields are added, and writes it on one line through {@link Json}:
 * a whole number as an integer, any other number with at most three decimals and never with an exponent, a
 * non-finite double as {@code null}.
 */
public final class JsonLine
{
    private final Map<String, Object> fields = new LinkedHashMap<>();

    /** Starts an empty object. */
    public JsonLine()
    {
    }

    /**
     * @param name  the key.
     * @param value the value.
     * @return this.
     */
    public JsonLine add(final String name, final long value)
    {
        fields.put(name, value);
        return this;
    }

    /**
     * @param name  the key.
     * @param value the value, written with up to three decimals; NaN and infinities as {@code null}.
     * @return this.
     */
    public JsonLine add(final String name, final double value)
    {
        fields.put(name, Double.isFinite(value) ? rounded(value) : null);
        return this;
    }

    /**
     * @param name  the key.
     * @param value the value.
     * @return this.
     */
    public JsonLine add(final String name, final boolean value)
    {
        fields.put(name, value);
        return this;
    }

    /**
     * @param name  the key.
     * @param value the value; {@code null} as {@code null}.
     * @return this.
     */
    public JsonLine add(final String name, final String value)
    {
        fields.put(name, value);
        return this;
    }

    /**
     * @param name   the key.
     * @param object a nested object, {@code null} for {@code null}.
     * @return this.
     */
    public JsonLine add(final String name, final JsonLine object)
    {
        fields.put(name, object == null ? null : object.fields);
        return this;
    }

    /**
     * @param name   the key.
     * @param values an array of strings.
     * @return this.
     */
    public JsonLine add(final String name, final Iterable<String> values)
    {
        final List<String> list = new ArrayList<>();
        values.forEach(list::add);
        fields.put(name, list);
        return this;
    }

    /**
     * @param name    the key.
     * @param objects an array of objects.
     * @return this.
     */
    public JsonLine addObjects(final String name, final Iterable<JsonLine> objects)
    {
        final List<Map<String, Object>> list = new ArrayList<>();
        objects.forEach(o -> list.add(o.fields));
        fields.put(name, list);
        return this;
    }

    /** @return the object on one line: {@code {"k":v,...}}. */
    @Override
    public String toString()
    {
        return Json.write(fields);
    }

    /**
     * @param value a finite number.
     * @return it with at most three decimals and no trailing zeros, never in exponent form.
     */
    static String number(final double value)
    {
        return rounded(value).toPlainString();
    }

    private static BigDecimal rounded(final double value)
    {
        final BigDecimal exact = new BigDecimal(value).setScale(3, RoundingMode.HALF_EVEN).stripTrailingZeros();
        return exact.signum() == 0 ? BigDecimal.ZERO : exact;
    }
}
