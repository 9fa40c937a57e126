package org.rds4j.samples;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses {@code IP:PORT} into a resolved {@link InetSocketAddress}: an IPv4 literal such as
 * {@code 127.0.0.1:4000} or a bracketed IPv6 literal such as {@code [::1]:4000}, and a port 0..65535.
 * Host names are refused: RDS binds and addresses IP addresses, and a literal never needs a name lookup.
 */
public final class IpPortConverter implements ITypeConverter<InetSocketAddress>
{
    private static final String EXAMPLE = "expected IP:PORT, e.g. 127.0.0.1:4000";

    @Override
    public InetSocketAddress convert(final String value)
    {
        return parse(value);
    }

    /**
     * Parses {@code IP:PORT}.
     *
     * @param value the text, e.g. {@code 127.0.0.1:4000}.
     * @return the address, resolved.
     * @throws TypeConversionException with a message for a person when {@code value} is not {@code IP:PORT}.
     */
    public static InetSocketAddress parse(final String value)
    {
        if (value == null || value.isBlank())
        {
            throw new TypeConversionException("empty address: " + EXAMPLE);
        }
        final String text = value.trim();
        final int colon = text.lastIndexOf(':');
        if (colon < 0)
        {
            throw new TypeConversionException("'" + value + "' has no port: " + EXAMPLE);
        }
        final String host = text.substring(0, colon);
        final String portText = text.substring(colon + 1);
        final InetAddress address = parseIp(host, value);
        return new InetSocketAddress(address, parsePort(portText, value));
    }

    /**
     * @param address an address.
     * @return {@code IP:PORT} ({@code [IPv6]:PORT}), without the host name {@link InetSocketAddress#toString()}
     *         may add.
     */
    public static String format(final InetSocketAddress address)
    {
        if (address == null)
        {
            return "null";
        }
        final InetAddress ip = address.getAddress();
        if (ip == null)
        {
            return address.getHostString() + ":" + address.getPort();
        }
        final String host = ip.getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
    }

    private static int parsePort(final String portText, final String value)
    {
        if (portText.isEmpty())
        {
            throw new TypeConversionException("'" + value + "' has no port: " + EXAMPLE);
        }
        if (portText.length() > 5 || !portText.chars().allMatch(c -> c >= '0' && c <= '9'))
        {
            throw new TypeConversionException("'" + value + "': port '" + portText + "' is not a number 0..65535");
        }
        final int port = Integer.parseInt(portText);
        if (port > 65535)
        {
            throw new TypeConversionException("'" + value + "': port " + port + " is out of range 0..65535");
        }
        return port;
    }

    private static InetAddress parseIp(final String host, final String value)
    {
        if (host.startsWith("[") && host.endsWith("]") && host.length() > 2)
        {
            final String literal = host.substring(1, host.length() - 1);
            // only hex digits, colons and dots (an embedded IPv4 tail), so getByName does no lookup
            if (literal.indexOf(':') >= 0 && literal.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.'))
            {
                try
                {
                    return InetAddress.getByName(literal);
                }
                catch (final UnknownHostException e)
                {
                    // fall through to the error below
                }
            }
            throw new TypeConversionException("'" + value + "': '" + host + "' is not an IPv6 address: " + EXAMPLE);
        }
        if (host.indexOf(':') >= 0)
        {
            throw new TypeConversionException("'" + value + "': write an IPv6 address in brackets, e.g. [::1]:4000");
        }
        final String[] parts = host.split("\\.", -1);
        if (parts.length != 4)
        {
            throw new TypeConversionException("'" + value + "': '" + host + "' is not an IPv4 address: " + EXAMPLE);
        }
        final byte[] bytes = new byte[4];
        for (int i = 0; i < 4; i++)
        {
            final String part = parts[i];
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(c -> c >= '0' && c <= '9'))
            {
                throw new TypeConversionException("'" + value + "': '" + host + "' is not an IPv4 address: " + EXAMPLE);
            }
            final int octet = Integer.parseInt(part);
            if (octet > 255)
            {
                throw new TypeConversionException("'" + value + "': '" + host + "' is not an IPv4 address (" + octet + " > 255)");
            }
            bytes[i] = (byte)octet;
        }
        try
        {
            return InetAddress.getByAddress(bytes);
        }
        catch (final UnknownHostException e)
        {
            throw new TypeConversionException("'" + value + "': " + e.getMessage());
        }
    }
}
