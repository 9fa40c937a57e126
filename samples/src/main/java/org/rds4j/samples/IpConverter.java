package org.rds4j.samples;

import java.net.InetAddress;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses an IP address without a port: an IPv4 literal such as {@code 127.0.0.2}, or an IPv6 literal with or
 * without brackets ({@code ::1}, {@code [::1]}). Host names are refused, as in {@link IpPortConverter}, and
 * so is {@code IP:PORT}: the options that take this converter ({@code rds ping DEST}, {@code -I LOCAL_IP})
 * choose the port themselves.
 */
public final class IpConverter implements ITypeConverter<InetAddress>
{
    @Override
    public InetAddress convert(final String value)
    {
        return parse(value);
    }

    /**
     * Parses an IP literal.
     *
     * @param value the text, e.g. {@code 127.0.0.2} or {@code [::1]}.
     * @return the address.
     * @throws TypeConversionException with a message for a person when {@code value} is not an IP literal,
     *                                 in particular when it has a port.
     */
    public static InetAddress parse(final String value)
    {
        if (value == null || value.isBlank())
        {
            throw new TypeConversionException("empty address: expected an IP address, e.g. 127.0.0.1");
        }
        final String text = value.trim();
        final long colons = text.chars().filter(c -> c == ':').count();
        final String withPort;
        if (text.startsWith("["))
        {
            if (!text.endsWith("]"))
            {
                throw new TypeConversionException("'" + value + "': expected an IP address without a port, e.g. [::1]");
            }
            withPort = text + ":0";
        }
        else if (colons == 1)
        {
            throw new TypeConversionException("'" + value + "': expected an IP address without a port, e.g. 127.0.0.1");
        }
        else if (colons > 1)
        {
            withPort = "[" + text + "]:0";
        }
        else
        {
            withPort = text + ":0";
        }
        try
        {
            return IpPortConverter.parse(withPort).getAddress();
        }
        catch (final TypeConversionException e)
        {
            throw new TypeConversionException("'" + value + "' is not an IP address, e.g. 127.0.0.1 or [::1]");
        }
    }
}
