package org.rds4j.compare;

import org.rds4j.samples.JsonReader;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.LinkedHashMap;
import java.util.Map;

/** A flat JSON object (strings, numbers, booleans, null): the result lines run.sh collects, written and read back. */
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
        final StringBuilder sb = new StringBuilder("{");
        for (final Map.Entry<String, Object> e : fields.entrySet())
        {
            if (sb.length() > 1)
            {
                sb.append(',');
            }
            quote(sb, e.getKey());
            sb.append(':');
            final Object v = e.getValue();
            if (v == null)
            {
                sb.append("null");
            }
            else if (v instanceof Double || v instanceof Float)
            {
                final double d = ((Number)v).doubleValue();
                if (Double.isNaN(d) || Double.isInfinite(d))
                {
                    sb.append("null");
                }
                else
                {
                    // six significant digits, plain notation: 12345.7, 0.0123457, 3
                    sb.append(new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros().toPlainString());
                }
            }
            else if (v instanceof Number || v instanceof Boolean)
            {
                sb.append(v);
            }
            else
            {
                quote(sb, v.toString());
            }
        }
        return sb.append('}').toString();
    }

    private static void quote(final StringBuilder sb, final String s)
    {
        sb.append('"');
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            switch (c)
            {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20)
                    {
                        sb.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    /** Parses one flat object as written by {@link #toString()} (or by run.sh, which appends fields). */
    static Json parse(final String text)
    {
        final Json json = new Json();
        JsonReader.object(text.trim()).forEach(json::put);
        return json;
    }
}
