package org.rds4j.compare;

import java.util.HashMap;
import java.util.Map;

/**
 * {@code --key value} and {@code --flag} command-line options. Unknown keys are an error only when read
 * with a typo; every value has a default chosen by the caller, so a role runs with no options at all.
 */
final class Args
{
    private final Map<String, String> values = new HashMap<>();

    Args(final String[] args, final int from)
    {
        for (int i = from; i < args.length; i++)
        {
            final String arg = args[i];
            if (!arg.startsWith("--"))
            {
                throw new IllegalArgumentException("expected --option, got " + arg);
            }
            final int eq = arg.indexOf('=');
            if (eq > 0)
            {
                values.put(arg.substring(2, eq), arg.substring(eq + 1));
            }
            else if (i + 1 < args.length && !args[i + 1].startsWith("--"))
            {
                values.put(arg.substring(2), args[++i]);
            }
            else
            {
                values.put(arg.substring(2), "true");
            }
        }
    }

    String str(final String key, final String defaultValue)
    {
        return values.getOrDefault(key, defaultValue);
    }

    int integer(final String key, final int defaultValue)
    {
        final String v = values.get(key);
        return v == null ? defaultValue : Integer.parseInt(v);
    }

    long longValue(final String key, final long defaultValue)
    {
        final String v = values.get(key);
        return v == null ? defaultValue : Long.parseLong(v);
    }

    double dbl(final String key, final double defaultValue)
    {
        final String v = values.get(key);
        return v == null ? defaultValue : Double.parseDouble(v);
    }

    /** A size: plain bytes or with a k/m suffix (powers of two): {@code 64}, {@code 1k}, {@code 16m}. */
    int size(final String key, final int defaultValue)
    {
        final String v = values.get(key);
        if (v == null)
        {
            return defaultValue;
        }
        final String s = v.trim().toLowerCase();
        final char last = s.charAt(s.length() - 1);
        if (last == 'k')
        {
            return Integer.parseInt(s.substring(0, s.length() - 1)) << 10;
        }
        if (last == 'm')
        {
            return Integer.parseInt(s.substring(0, s.length() - 1)) << 20;
        }
        return Integer.parseInt(s);
    }

    boolean flag(final String key)
    {
        return Boolean.parseBoolean(values.getOrDefault(key, "false"));
    }
}
