package org.rds4j.samples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader for the JSON lines rds4j's tools print ({@code rds stress --json},
 * {@code rds info --json}, the fault-test nodes, the comparison suite): objects become {@link Map} (in their
 * order), arrays {@link List}, integers {@link Long}, other numbers {@link Double}, and
 * {@code true}/{@code false}/{@code null} themselves. It throws on anything that is not one complete JSON
 * value, so a caller that parses a line also checks that the line is valid JSON.
 */
public final class JsonReader
{
    private final String text;
    private int at;

    private JsonReader(final String text)
    {
        this.text = text;
    }

    /**
     * @param text one JSON value.
     * @return it, parsed.
     * @throws IllegalArgumentException if it is not valid JSON.
     */
    public static Object parse(final String text)
    {
        final JsonReader parser = new JsonReader(text);
        final Object value = parser.value();
        parser.space();
        if (parser.at != text.length())
        {
            throw parser.fail("text after the value");
        }
        return value;
    }

    /**
     * @param text a JSON object.
     * @return it as a map.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(final String text)
    {
        final Object value = parse(text);
        if (!(value instanceof Map))
        {
            throw new IllegalArgumentException("not an object: " + text);
        }
        return (Map<String, Object>)value;
    }

    private Object value()
    {
        space();
        if (at >= text.length())
        {
            throw fail("end of text");
        }
        final char c = text.charAt(at);
        switch (c)
        {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                return number();
        }
    }

    private Map<String, Object> object()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        at++;
        space();
        if (peek() == '}')
        {
            at++;
            return map;
        }
        while (true)
        {
            space();
            if (peek() != '"')
            {
                throw fail("a key");
            }
            final String key = string();
            space();
            expect(':');
            if (map.containsKey(key))
            {
                throw fail("a new key, not a second " + key);
            }
            map.put(key, value());
            space();
            if (peek() == ',')
            {
                at++;
                continue;
            }
            expect('}');
            return map;
        }
    }

    private List<Object> array()
    {
        final List<Object> list = new ArrayList<>();
        at++;
        space();
        if (peek() == ']')
        {
            at++;
            return list;
        }
        while (true)
        {
            list.add(value());
            space();
            if (peek() == ',')
            {
                at++;
                continue;
            }
            expect(']');
            return list;
        }
    }

    private String string()
    {
        expect('"');
        final StringBuilder s = new StringBuilder();
        while (true)
        {
            if (at >= text.length())
            {
                throw fail("unterminated string");
            }
            final char c = text.charAt(at++);
            if (c == '"')
            {
                return s.toString();
            }
            if (c < 0x20)
            {
                throw fail("control character in a string");
            }
            if (c != '\\')
            {
                s.append(c);
                continue;
            }
            final char e = text.charAt(at++);
            switch (e)
            {
                case '"', '\\', '/' -> s.append(e);
                case 'n' -> s.append('\n');
                case 'r' -> s.append('\r');
                case 't' -> s.append('\t');
                case 'b' -> s.append('\b');
                case 'f' -> s.append('\f');
                case 'u' ->
                {
                    s.append((char)Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> throw fail("bad escape");
            }
        }
    }

    private Number number()
    {
        final int start = at;
        if (peek() == '-')
        {
            at++;
        }
        digits();
        boolean integer = true;
        if (peek() == '.')
        {
            integer = false;
            at++;
            digits();
        }
        if (peek() == 'e' || peek() == 'E')
        {
            integer = false;
            at++;
            if (peek() == '+' || peek() == '-')
            {
                at++;
            }
            digits();
        }
        final String literal = text.substring(start, at);
        if (integer)
        {
            try
            {
                return Long.valueOf(literal);
            }
            catch (final NumberFormatException ex)
            {
                // beyond a long: fall through to a double
            }
        }
        return Double.valueOf(literal);
    }

    private void digits()
    {
        final int start = at;
        while (at < text.length() && Character.isDigit(text.charAt(at)))
        {
            at++;
        }
        if (at == start)
        {
            throw fail("a digit");
        }
    }

    private Object literal(final String word, final Object value)
    {
        if (!text.startsWith(word, at))
        {
            throw fail(word);
        }
        at += word.length();
        return value;
    }

    private void expect(final char c)
    {
        if (peek() != c)
        {
            throw fail("'" + c + "'");
        }
        at++;
    }

    private char peek()
    {
        return at < text.length() ? text.charAt(at) : '\0';
    }

    private void space()
    {
        while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0)
        {
            at++;
        }
    }

    private IllegalArgumentException fail(final String what)
    {
        return new IllegalArgumentException("JSON: expected " + what + " at " + at + " in: " + text);
    }
}
