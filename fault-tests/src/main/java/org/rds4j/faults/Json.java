package org.rds4j.faults;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the summary lines {@link FaultNode} prints: objects ({@code LinkedHashMap}), arrays
 * ({@code List}), strings without escapes other than {@code \"} and {@code \\}, integers ({@code Long}),
 * {@code true}, {@code false} and {@code null}. Enough for our own output; not a general parser.
 */
final class Json
{
    private final String text;
    private int at;

    private Json(final String text)
    {
        this.text = text;
    }

    /**
     * @param text one JSON value.
     * @return the value.
     * @throws IllegalArgumentException if the text is not one value of the subset above.
     */
    static Object parse(final String text)
    {
        final Json json = new Json(text);
        final Object value = json.value();
        json.space();
        if (json.at != text.length())
        {
            throw json.error("trailing text");
        }
        return value;
    }

    private Object value()
    {
        space();
        if (at >= text.length())
        {
            throw error("unexpected end");
        }
        final char c = text.charAt(at);
        if (c == '{')
        {
            at++;
            final Map<String, Object> object = new LinkedHashMap<>();
            space();
            if (peek('}'))
            {
                return object;
            }
            do
            {
                space();
                final String key = string();
                space();
                expect(':');
                object.put(key, value());
                space();
            }
            while (peek(','));
            expect('}');
            return object;
        }
        if (c == '[')
        {
            at++;
            final List<Object> array = new ArrayList<>();
            space();
            if (peek(']'))
            {
                return array;
            }
            do
            {
                array.add(value());
                space();
            }
            while (peek(','));
            expect(']');
            return array;
        }
        if (c == '"')
        {
            return string();
        }
        if (text.startsWith("true", at))
        {
            at += 4;
            return Boolean.TRUE;
        }
        if (text.startsWith("false", at))
        {
            at += 5;
            return Boolean.FALSE;
        }
        if (text.startsWith("null", at))
        {
            at += 4;
            return null;
        }
        final int start = at;
        if (c == '-')
        {
            at++;
        }
        while (at < text.length() && Character.isDigit(text.charAt(at)))
        {
            at++;
        }
        if (at == start || (at == start + 1 && c == '-'))
        {
            throw error("unexpected '" + c + "'");
        }
        return Long.parseLong(text.substring(start, at));
    }

    private String string()
    {
        expect('"');
        final StringBuilder s = new StringBuilder();
        while (at < text.length() && text.charAt(at) != '"')
        {
            char c = text.charAt(at++);
            if (c == '\\' && at < text.length())
            {
                c = text.charAt(at++);
            }
            s.append(c);
        }
        expect('"');
        return s.toString();
    }

    private void space()
    {
        while (at < text.length() && Character.isWhitespace(text.charAt(at)))
        {
            at++;
        }
    }

    private boolean peek(final char c)
    {
        if (at < text.length() && text.charAt(at) == c)
        {
            at++;
            return true;
        }
        return false;
    }

    private void expect(final char c)
    {
        if (!peek(c))
        {
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(final String what)
    {
        return new IllegalArgumentException(what + " at " + at + " in: " + text);
    }
}
