package org.rds4j.compare;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.LinkedHashMap;
import java.util.Map;

/** A flat JSON object (strings, numbers, booleans, null): the result lines run.sh collects, and their parser. */
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
        final Parser p = new Parser(text.trim());
        p.expect('{');
        p.skipWs();
        if (p.peek() == '}')
        {
            return json;
        }
        while (true)
        {
            p.skipWs();
            final String key = p.string();
            p.skipWs();
            p.expect(':');
            p.skipWs();
            json.put(key, p.value());
            p.skipWs();
            final char c = p.next();
            if (c == '}')
            {
                return json;
            }
            if (c != ',')
            {
                throw new IllegalArgumentException("bad JSON at " + p.pos + ": " + text);
            }
        }
    }

    private static final class Parser
    {
        final String s;
        int pos;

        Parser(final String s)
        {
            this.s = s;
        }

        char peek()
        {
            return s.charAt(pos);
        }

        char next()
        {
            return s.charAt(pos++);
        }

        void skipWs()
        {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos)))
            {
                pos++;
            }
        }

        void expect(final char c)
        {
            if (next() != c)
            {
                throw new IllegalArgumentException("expected '" + c + "' at " + (pos - 1) + ": " + s);
            }
        }

        String string()
        {
            expect('"');
            final StringBuilder sb = new StringBuilder();
            char c;
            while ((c = next()) != '"')
            {
                if (c == '\\')
                {
                    final char e = next();
                    switch (e)
                    {
                        case 'n': sb.append('\n'); break;
                        case 't': sb.append('\t'); break;
                        case 'u': sb.append((char)Integer.parseInt(s.substring(pos, pos + 4), 16)); pos += 4; break;
                        default: sb.append(e);
                    }
                }
                else
                {
                    sb.append(c);
                }
            }
            return sb.toString();
        }

        Object value()
        {
            final char c = peek();
            if (c == '"')
            {
                return string();
            }
            final int start = pos;
            while (pos < s.length() && ",}".indexOf(s.charAt(pos)) < 0 && !Character.isWhitespace(s.charAt(pos)))
            {
                pos++;
            }
            final String token = s.substring(start, pos);
            switch (token)
            {
                case "null": return null;
                case "true": return Boolean.TRUE;
                case "false": return Boolean.FALSE;
                default: return Double.parseDouble(token);
            }
        }
    }
}
