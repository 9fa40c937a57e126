package org.rds4j.core.test;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Address literals for tests, without the checked exception. Tests only. */
public final class TestAddresses
{
    private TestAddresses()
    {
    }

    /**
     * @param literal an IP address literal such as {@code 127.0.1.1}: no name lookup happens.
     * @return the address.
     */
    public static InetAddress ip(final String literal)
    {
        try
        {
            return InetAddress.getByName(literal);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException("not an address literal: " + literal, ex);
        }
    }
}
