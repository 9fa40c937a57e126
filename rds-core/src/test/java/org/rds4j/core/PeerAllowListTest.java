package org.rds4j.core;

import org.junit.jupiter.api.Test;
import org.rds4j.PeerAllowList;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.ThreadMeter;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/** The peer allow-list (rds-api's {@link PeerAllowList}) and the hostile-peer options of the stack configuration. */
class PeerAllowListTest
{
    @Test
    void emptyAllowsEveryone()
    {
        assertSame(PeerAllowList.ALL, RdsStackConfig.defaults().allowedPeers());
        assertTrue(PeerAllowList.of().isEmpty());
        assertTrue(PeerAllowList.ALL.allows(ip("10.1.2.3")));
        assertTrue(PeerAllowList.ALL.allows(ip("fd00::1")));
    }

    /** The check runs on every send: for an IPv4 address it copies nothing (it copied the address each time). */
    @Test
    void anIpv4AddressIsCheckedWithoutAllocating() throws Exception
    {
        final PeerAllowList list = PeerAllowList.of("fd00::/8", "10.1.0.0/16", "192.168.1.7");
        final InetAddress[] addresses = {ip("10.1.2.3"), ip("192.168.1.7"), ip("10.2.0.1")};
        final int[] allowed = new int[1];
        final long[] allocated = ThreadMeter.allocatedByCallerPerRound(3, () ->
        {
            for (int i = 0; i < 999; i++)
            {
                allowed[0] += list.allows(addresses[i % 3]) ? 1 : 0;
            }
        });
        assertEquals(3 * 666, allowed[0], "10.1.2.3 and 192.168.1.7 allowed, 10.2.0.1 not");
        assertEquals(0, Arrays.stream(allocated).min().getAsLong(),
            () -> "bytes allocated by each round of 999 checks: " + java.util.Arrays.toString(allocated));
    }

    @Test
    void ipv4AddressesAndBlocks()
    {
        final PeerAllowList list = PeerAllowList.of("10.1.0.0/16", "192.168.7.9", "172.16.0.0/12", " 127.0.0.0/8 ");
        assertTrue(list.allows(ip("10.1.0.0")));
        assertTrue(list.allows(ip("10.1.255.255")));
        assertFalse(list.allows(ip("10.2.0.0")));
        assertFalse(list.allows(ip("10.0.255.255")));
        assertTrue(list.allows(ip("192.168.7.9")));
        assertFalse(list.allows(ip("192.168.7.8")));
        assertTrue(list.allows(ip("172.31.255.255")), "/12 is not byte aligned");
        assertFalse(list.allows(ip("172.32.0.0")));
        assertTrue(list.allows(ip("127.29.0.1")));
        assertFalse(list.allows(ip("::ffff:0:0a01:0001")), "an IPv6 address does not match IPv4 entries");
        assertEquals(List.of("10.1.0.0/16", "192.168.7.9", "172.16.0.0/12", "127.0.0.0/8"), list.entries());
    }

    @Test
    void ipv6AddressesAndBlocks()
    {
        final PeerAllowList list = PeerAllowList.of("fd00:1234::/32", "2001:db8::7", "fe80::/10");
        assertTrue(list.allows(ip("fd00:1234:ffff::1")));
        assertFalse(list.allows(ip("fd00:1235::1")));
        assertTrue(list.allows(ip("2001:db8::7")));
        assertFalse(list.allows(ip("2001:db8::8")));
        assertTrue(list.allows(ip("febf::1")), "/10 is not byte aligned");
        assertFalse(list.allows(ip("fec0::1")));
        assertFalse(list.allows(ip("10.0.0.1")));
    }

    @Test
    void zeroPrefixAllowsTheWholeFamily()
    {
        final PeerAllowList list = PeerAllowList.of("0.0.0.0/0");
        assertTrue(list.allows(ip("203.0.113.5")));
        assertFalse(list.allows(ip("::1")));
    }

    @Test
    void ipv4MappedLiteralIsTheIpv4Block()
    {
        final PeerAllowList list = PeerAllowList.of("::ffff:10.0.0.0/104");
        assertTrue(list.allows(ip("10.200.0.1")));
        assertFalse(list.allows(ip("11.0.0.1")));
    }

    @Test
    void badEntriesAreRefusedWithTheirText()
    {
        final String[] bad = {
            "", "localhost", "example.com", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/8/8", "10.0.0.1/8",
            "256.0.0.1", "10.0.0", "10.0.0.0.0", "fd00::/129", "fd00::1/64", "fd00:::1", "1.2.3.4/08", "::ffff:10.0.0.0/8",
            "fe80::1%eth0", "10.0.0.0/ 8",
        };
        for (final String entry : bad)
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> RdsStackConfig.builder().allowedPeers("10.0.0.0/8", entry), entry);
            assertTrue(ex.getMessage().startsWith("allowedPeers: ") && ex.getMessage().contains(entry.strip()),
                entry + ": " + ex.getMessage());
        }
        assertThrows(NullPointerException.class, () -> RdsStackConfig.builder().allowedPeers((String)null));
        assertThrows(NullPointerException.class, () -> RdsStackConfig.builder().allowedPeers((String[])null));
    }

    @Test
    void configKeepsTheListAndTheLimits()
    {
        final RdsStackConfig config = RdsStackConfig.builder().allowedPeers("10.0.0.0/8")
            .maxPeers(7).peerConnectRate(3).build();
        assertEquals(List.of("10.0.0.0/8"), config.allowedPeers().entries());
        assertEquals(7, config.maxPeers());
        assertEquals(3, config.peerConnectRate());
        final RdsStackConfig copy = config.toBuilder().build();
        assertSame(config.allowedPeers(), copy.allowedPeers());
        assertEquals(7, copy.maxPeers());
        assertEquals(3, copy.peerConnectRate());
        assertTrue(config.toString().contains("allowedPeers=[10.0.0.0/8]"), config.toString());

        final RdsStackConfig defaults = RdsStackConfig.defaults();
        assertEquals(256, defaults.maxPeers());
        assertEquals(20, defaults.peerConnectRate());
    }

    @Test
    void badLimitsAreRefused()
    {
        final RdsStackConfig.Builder b = RdsStackConfig.builder();
        assertEquals("maxPeers must be positive: 0", assertThrows(IllegalArgumentException.class, () -> b.maxPeers(0)).getMessage());
        assertEquals("peerConnectRate must be positive: -2",
            assertThrows(IllegalArgumentException.class, () -> b.peerConnectRate(-2)).getMessage());
    }
}
