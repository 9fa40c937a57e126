package org.rds4j;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The peers a stack talks to: IPv4 and IPv6 addresses and CIDR blocks ({@code 10.1.0.0/16}, {@code fd00::/8},
 * {@code 192.168.1.7}). Empty means every peer is allowed. Immutable; set with
 * {@link RdsStackConfig.Builder#allowedPeers(String...)}.
 * <p>
 * Entries are address literals only: no host name is ever looked up. A block's address must have no bits set
 * beyond its prefix ({@code 10.1.2.3/16} is refused: write {@code 10.1.0.0/16}). An IPv4 address matches IPv4
 * entries only and an IPv6 address IPv6 entries only; an IPv4-mapped IPv6 literal ({@code ::ffff:10.0.0.0/104})
 * is taken as the IPv4 block it maps.
 */
public final class PeerAllowList
{
    /** The empty list: every peer allowed. */
    public static final PeerAllowList ALL = new PeerAllowList(List.of(), new byte[0][], new int[0]);

    private static final Pattern IPV4 = Pattern.compile("(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");
    private static final Pattern PREFIX = Pattern.compile("0|[1-9][0-9]{0,2}");

    private final List<String> entries;
    private final byte[][] networks;
    private final int[] prefixes;
    /** The IPv4 entries again, each as its network and mask in an int: {@link #allows} copies no address. */
    private final int[] ipv4Networks;
    private final int[] ipv4Masks;

    private PeerAllowList(final List<String> entries, final byte[][] networks, final int[] prefixes)
    {
        this.entries = entries;
        this.networks = networks;
        this.prefixes = prefixes;
        final int ipv4 = (int)Arrays.stream(networks).filter(network -> network.length == 4).count();
        ipv4Networks = new int[ipv4];
        ipv4Masks = new int[ipv4];
        for (int i = 0, j = 0; i < networks.length; i++)
        {
            if (networks[i].length == 4)
            {
                ipv4Networks[j] = (networks[i][0] & 0xFF) << 24 | (networks[i][1] & 0xFF) << 16 |
                    (networks[i][2] & 0xFF) << 8 | (networks[i][3] & 0xFF);
                ipv4Masks[j++] = prefixes[i] == 0 ? 0 : -1 << (32 - prefixes[i]);
            }
        }
    }

    /**
     * Parses entries.
     *
     * @param entries addresses ({@code 10.0.0.7}, {@code fd00::7}) and CIDR blocks ({@code 10.0.0.0/24},
     *                {@code fd00::/64}); none means everyone is allowed.
     * @return the list.
     * @throws IllegalArgumentException naming the first entry that is not an address literal or a block, has a
     *                                  prefix beyond the address's bits, or has bits set beyond its prefix.
     * @throws NullPointerException     if the array or an entry is null.
     */
    public static PeerAllowList of(final String... entries)
    {
        Objects.requireNonNull(entries, "allowedPeers");
        if (entries.length == 0)
        {
            return ALL;
        }
        final List<String> kept = new ArrayList<>(entries.length);
        final byte[][] networks = new byte[entries.length][];
        final int[] prefixes = new int[entries.length];
        for (int i = 0; i < entries.length; i++)
        {
            final String entry = Objects.requireNonNull(entries[i], "allowedPeers entry").strip();
            final int slash = entry.indexOf('/');
            final String literal = slash < 0 ? entry : entry.substring(0, slash);
            final byte[] address = parseLiteral(entry, literal);
            int prefix = address.length * 8;
            if (slash >= 0)
            {
                final String bits = entry.substring(slash + 1);
                if (!PREFIX.matcher(bits).matches())
                {
                    throw new IllegalArgumentException("allowedPeers: bad prefix length in '" + entry + "'");
                }
                prefix = Integer.parseInt(bits);
                if (address.length == 4 && literal.indexOf(':') >= 0)
                {
                    // an IPv4-mapped IPv6 literal: its prefix counts the 96 bits of ::ffff: too
                    if (prefix < 96 || prefix > 128)
                    {
                        throw new IllegalArgumentException("allowedPeers: an IPv4-mapped block needs a prefix of 96..128: '" + entry + "'");
                    }
                    prefix -= 96;
                }
                if (prefix > address.length * 8)
                {
                    throw new IllegalArgumentException("allowedPeers: prefix /" + prefix + " is longer than the " +
                        (address.length * 8) + " bits of the address in '" + entry + "'");
                }
            }
            if (!Arrays.equals(address, mask(address, prefix)))
            {
                throw new IllegalArgumentException("allowedPeers: '" + entry + "' has address bits set beyond /" + prefix +
                    "; write the block's first address");
            }
            kept.add(entry);
            networks[i] = address;
            prefixes[i] = prefix;
        }
        return new PeerAllowList(List.copyOf(kept), networks, prefixes);
    }

    private static byte[] parseLiteral(final String entry, final String literal)
    {
        final boolean v4 = IPV4.matcher(literal).matches();
        if (!v4 && !IPV6.matcher(literal).matches())
        {
            throw new IllegalArgumentException("allowedPeers: '" + entry + "' is not an IP address or CIDR block (no host names)");
        }
        try
        {
            // a dotted-quad or a string with ':' is parsed as a literal: no name lookup happens
            return InetAddress.getByName(literal).getAddress();
        }
        catch (final UnknownHostException | RuntimeException ex)
        {
            throw new IllegalArgumentException("allowedPeers: '" + entry + "' is not a valid IP address: " + ex.getMessage(), ex);
        }
    }

    private static byte[] mask(final byte[] address, final int prefix)
    {
        final byte[] masked = address.clone();
        for (int bit = prefix; bit < masked.length * 8; bit++)
        {
            masked[bit >> 3] &= (byte)~(0x80 >>> (bit & 7));
        }
        return masked;
    }

    /** @return true if the list is empty: every peer is allowed. */
    public boolean isEmpty()
    {
        return networks.length == 0;
    }

    /** @return the entries as given (trimmed). */
    public List<String> entries()
    {
        return entries;
    }

    /**
     * @param address a peer's address.
     * @return true if the list is empty or an entry covers the address.
     */
    public boolean allows(final InetAddress address)
    {
        if (networks.length == 0)
        {
            return true;
        }
        if (address instanceof Inet4Address)
        {
            // an Inet4Address's hash code is its address: no copy of it per call, a check every send makes
            final int bits = address.hashCode();
            for (int i = 0; i < ipv4Networks.length; i++)
            {
                if ((bits & ipv4Masks[i]) == ipv4Networks[i])
                {
                    return true;
                }
            }
            return false;
        }
        final byte[] bytes = address.getAddress(); // an IPv6 address, copied: its class shows no other way
        for (int i = 0; i < networks.length; i++)
        {
            if (networks[i].length == bytes.length && matches(networks[i], prefixes[i], bytes))
            {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(final byte[] network, final int prefix, final byte[] address)
    {
        final int whole = prefix >> 3;
        for (int i = 0; i < whole; i++)
        {
            if (network[i] != address[i])
            {
                return false;
            }
        }
        final int rest = prefix & 7;
        if (rest == 0)
        {
            return true;
        }
        final int mask = (0xFF << (8 - rest)) & 0xFF;
        return (network[whole] & mask) == (address[whole] & mask);
    }

    @Override
    public String toString()
    {
        return networks.length == 0 ? "all" : entries.toString();
    }
}
