package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsStackConfig;
import org.rds4j.Setting;
import org.rds4j.SettingSource;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TcpConfigTest
{
    @Test
    void defaults()
    {
        final TcpConfig config = TcpConfig.builder(SettingSource.none()).build();
        assertEquals(16385, config.tcpPort());
        assertEquals(Duration.ofSeconds(5), config.keepAliveIdle());
        assertEquals(Duration.ofSeconds(5), config.keepAliveInterval());
        assertEquals(5, config.keepAliveCount());
        assertEquals(Duration.ofSeconds(10), config.frameTimeout());
        assertEquals(2 << 20, config.tcpSendRingBytes());
    }

    @Test
    void propertiesAndEnvironment()
    {
        final Properties properties = new Properties();
        properties.setProperty("rds4j.tcp.port", "26001");
        properties.setProperty("rds4j.tcp.send.ring", "256k");
        properties.setProperty("rds4j.tcp.frame.timeout", "250ms");
        final TcpConfig config = TcpConfig.builder(SettingSource.of(properties, Map.of(
            "RDS4J_TCP_PORT", "26002", "RDS4J_TCP_KEEPALIVE_IDLE", "7s", "RDS4J_TCP_KEEPALIVE_INTERVAL", "2s",
            "RDS4J_TCP_KEEPALIVE_COUNT", "3"))).build();
        assertEquals(26001, config.tcpPort());
        assertEquals(256 << 10, config.tcpSendRingBytes());
        assertEquals(Duration.ofMillis(250), config.frameTimeout());
        assertEquals(Duration.ofSeconds(7), config.keepAliveIdle());
        assertEquals(Duration.ofSeconds(2), config.keepAliveInterval());
        assertEquals(3, config.keepAliveCount());
        for (final Setting<?> setting : TcpConfig.SETTINGS)
        {
            assertTrue(setting.property().startsWith("rds4j.tcp."), setting.toString());
            assertTrue(setting.environmentVariable().startsWith("RDS4J_TCP_"), setting.toString());
        }
    }

    @Test
    void theStacksConfigIsUsedElseItsSource()
    {
        final TcpConfig given = TcpConfig.builder(SettingSource.none()).tcpPort(26003).build();
        assertSame(given, TcpConfig.of(RdsStackConfig.builder().transportConfig(given).build()));
        final Properties properties = new Properties();
        properties.setProperty("rds4j.tcp.port", "26004");
        assertEquals(26004, TcpConfig.of(RdsStackConfig.builder(SettingSource.of(properties, Map.of())).build()).tcpPort());
        assertEquals(26005, TcpConfig.of(RdsStackConfig.builder(SettingSource.of(new Properties(), Map.of("RDS4J_TCP_PORT", "26005")))
            .build()).tcpPort());
    }

    @Test
    void badValuesAreRefused()
    {
        final TcpConfig.Builder b = TcpConfig.builder(SettingSource.none());
        assertEquals("tcpPort must be 1..65535: 0", assertThrows(IllegalArgumentException.class, () -> b.tcpPort(0)).getMessage());
        assertEquals("frameTimeout must be positive: PT0S",
            assertThrows(IllegalArgumentException.class, () -> b.frameTimeout(Duration.ZERO)).getMessage());
        assertEquals("frameTimeout must not be negative: PT-1S",
            assertThrows(IllegalArgumentException.class, () -> b.frameTimeout(Duration.ofSeconds(-1))).getMessage());
        assertThrows(NullPointerException.class, () -> b.frameTimeout(null));
        assertEquals("keepAliveIdle must be at least 1 s (TCP counts seconds): PT0.5S", assertThrows(IllegalArgumentException.class,
            () -> b.keepAlive(Duration.ofMillis(500), Duration.ofSeconds(1), 1)).getMessage());
        assertEquals("keepAliveCount must be positive: 0", assertThrows(IllegalArgumentException.class,
            () -> b.keepAlive(Duration.ofSeconds(1), Duration.ofSeconds(1), 0)).getMessage());
        assertEquals(Duration.ofMillis(250), b.frameTimeout(Duration.ofMillis(250)).build().frameTimeout());
    }

    @Test
    void malformedPropertiesAreNamed()
    {
        assertEquals("property rds4j.tcp.port=70000: tcpPort must be 1..65535", error("rds4j.tcp.port", "70000"));
        assertEquals("property rds4j.tcp.port=http: not an integer", error("rds4j.tcp.port", "http"));
        assertEquals("property rds4j.tcp.send.ring=100k: tcpSendRingBytes must be 0 or 262144..1073741824",
            error("rds4j.tcp.send.ring", "100k"));
        assertEquals("property rds4j.tcp.keepalive.idle=500ms: keepAliveIdle must be at least 1 s (TCP counts seconds)",
            error("rds4j.tcp.keepalive.idle", "500ms"));
        assertEquals("environment variable RDS4J_TCP_FRAME_TIMEOUT=10: not a duration: expected a whole number and ns, us, ms, s, m "
            + "or h, e.g. 500ms", assertThrows(IllegalArgumentException.class, () -> TcpConfig.builder(
            SettingSource.of(new Properties(), Map.of("RDS4J_TCP_FRAME_TIMEOUT", "10"))).build()).getMessage());
    }

    private static String error(final String property, final String value)
    {
        final Properties properties = new Properties();
        properties.setProperty(property, value);
        return assertThrows(IllegalArgumentException.class,
            () -> TcpConfig.builder(SettingSource.of(properties, Map.of())).build()).getMessage();
    }
}
