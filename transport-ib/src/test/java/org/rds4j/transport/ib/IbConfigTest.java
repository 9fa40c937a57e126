package org.rds4j.transport.ib;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsStackConfig;
import org.rds4j.Setting;
import org.rds4j.SettingSource;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IbConfigTest
{
    @Test
    void defaults()
    {
        final IbConfig config = IbConfig.builder(SettingSource.none()).build();
        assertEquals(256, config.ibSendRing());
        assertEquals(1024, config.ibReceiveRing());
        assertEquals(18634, config.ibPort());
        assertEquals(Duration.ofNanos(200_000), config.ibPollSpin());
        assertFalse(config.ibDisable());
    }

    @Test
    void theOldPropertyNamesStillWork()
    {
        final Properties properties = new Properties();
        properties.setProperty("rds4j.ib.port", "18700");
        properties.setProperty("rds4j.ib.pollSpinMicros", "5000");
        properties.setProperty("rds4j.ib.disable", "true");
        final IbConfig config = IbConfig.builder(SettingSource.of(properties,
            Map.of("RDS4J_IB_SEND_RING", "64", "RDS4J_IB_RECEIVE_RING", "128", "RDS4J_IB_PORT", "18701"))).build();
        assertEquals(18700, config.ibPort());
        assertEquals(Duration.ofMillis(5), config.ibPollSpin());
        assertTrue(config.ibDisable());
        assertEquals(64, config.ibSendRing());
        assertEquals(128, config.ibReceiveRing());
        assertEquals("RDS4J_IB_POLL_SPIN_MICROS", IbConfig.IB_POLL_SPIN_MICROS.environmentVariable());
        for (final Setting<?> setting : IbConfig.SETTINGS)
        {
            assertTrue(setting.environmentVariable().startsWith("RDS4J_IB_"), setting.toString());
        }
    }

    @Test
    void theStacksConfigIsUsedElseItsSource()
    {
        final IbConfig given = IbConfig.builder(SettingSource.none()).ibSendRing(16).ibReceiveRing(16).build();
        assertSame(given, IbConfig.of(RdsStackConfig.builder().transportConfig(given).build()));
        final Properties properties = new Properties();
        properties.setProperty("rds4j.ib.receive.ring", "4096");
        assertEquals(4096, IbConfig.of(RdsStackConfig.builder(SettingSource.of(properties, Map.of())).build()).ibReceiveRing());
    }

    @Test
    void badValuesAreRefused()
    {
        final IbConfig.Builder b = IbConfig.builder(SettingSource.none());
        assertEquals("ibSendRing must be 8..4096 buffers: 7", assertThrows(IllegalArgumentException.class, () -> b.ibSendRing(7)).getMessage());
        assertEquals("ibReceiveRing must be 8..4096 buffers: 4097",
            assertThrows(IllegalArgumentException.class, () -> b.ibReceiveRing(4097)).getMessage());
        assertEquals("ibPollSpinMicros must not be negative: -1",
            assertThrows(IllegalArgumentException.class, () -> b.ibPollSpinMicros(-1)).getMessage());
        assertEquals("ibPort must be 1..65535: 0", assertThrows(IllegalArgumentException.class, () -> b.ibPort(0)).getMessage());
        final Properties properties = new Properties();
        properties.setProperty("rds4j.ib.disable", "yes");
        assertEquals("property rds4j.ib.disable=yes: not a boolean: expected true or false", assertThrows(IllegalArgumentException.class,
            () -> IbConfig.builder(SettingSource.of(properties, Map.of())).build()).getMessage());
    }
}
