package org.rds4j;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SettingTest
{
    private static final Setting<Integer> COUNT = Setting.ofInt("count", "rds4j.test.count", 7, Setting.atLeast(1));
    private static final Setting<Integer> SIZE = Setting.ofSize("size", "rds4j.test.size", 4096, Setting.atLeast(0));
    private static final Setting<Duration> DELAY =
        Setting.ofDuration("delay", "rds4j.test.delay", Duration.ofSeconds(1), Setting.positiveDuration());
    private static final Setting<Boolean> FLAG = Setting.ofBoolean("flag", "rds4j.test.flag", false);
    private static final Setting<Threading> MODE = Setting.ofEnum("mode", "rds4j.test.mode", Threading.class, Threading.AGENT);

    @Test
    void theEnvironmentVariableIsDerivedFromTheProperty()
    {
        assertEquals("RDS4J_HEARTBEAT_TIMEOUT", Setting.environmentVariable("rds4j.heartbeat.timeout"));
        assertEquals("RDS4J_TCP_PORT", Setting.environmentVariable("rds4j.tcp.port"));
        assertEquals("RDS4J_IB_POLL_SPIN_MICROS", Setting.environmentVariable("rds4j.ib.pollSpinMicros"));
        assertEquals("RDS4J_INFO_DIR", RdsStackConfig.INFO_DIRECTORY.environmentVariable());
        assertEquals("RDS4J_TEST_COUNT", COUNT.environmentVariable());
        assertThrows(IllegalArgumentException.class, () -> Setting.ofInt("x", "other.x", 1, Setting.atLeast(1)));
    }

    @Test
    void propertyBeatsEnvironmentBeatsDefault()
    {
        assertEquals(7, COUNT.resolve(SettingSource.none()));
        assertEquals(8, COUNT.resolve(source(Map.of(), Map.of("RDS4J_TEST_COUNT", "8"))));
        assertEquals(9, COUNT.resolve(source(Map.of("rds4j.test.count", "9"), Map.of("RDS4J_TEST_COUNT", "8"))));
        assertEquals(10, COUNT.resolve(10, source(Map.of("rds4j.test.count", "9"), Map.of("RDS4J_TEST_COUNT", "8"))));
        assertEquals(9, COUNT.resolve(null, source(Map.of("rds4j.test.count", "9"), Map.of())));
    }

    @Test
    void blankValuesCountAsUnset()
    {
        assertEquals(8, COUNT.resolve(source(Map.of("rds4j.test.count", " "), Map.of("RDS4J_TEST_COUNT", " 8 "))));
        assertEquals(7, COUNT.resolve(source(Map.of(), Map.of("RDS4J_TEST_COUNT", ""))));
    }

    @Test
    void unitsOfSizesAndDurations()
    {
        assertEquals(65536, SIZE.resolve(property("rds4j.test.size", "64k")));
        assertEquals(65536, SIZE.resolve(property("rds4j.test.size", "64K")));
        assertEquals(2 << 20, SIZE.resolve(property("rds4j.test.size", "2m")));
        assertEquals(1 << 30, SIZE.resolve(property("rds4j.test.size", "1g")));
        assertEquals(1000, SIZE.resolve(property("rds4j.test.size", "1000")));
        assertEquals(Duration.ofMillis(500), DELAY.resolve(property("rds4j.test.delay", "500ms")));
        assertEquals(Duration.ofSeconds(2), DELAY.resolve(property("rds4j.test.delay", "2s")));
        assertEquals(Duration.ofNanos(250_000), DELAY.resolve(property("rds4j.test.delay", "250us")));
        assertEquals(Duration.ofNanos(7), DELAY.resolve(property("rds4j.test.delay", "7ns")));
        assertEquals(Duration.ofMinutes(3), DELAY.resolve(property("rds4j.test.delay", "3m")));
        assertEquals(Duration.ofHours(1), DELAY.resolve(property("rds4j.test.delay", "1h")));
        assertEquals(Duration.ofMillis(1500), DELAY.resolve(property("rds4j.test.delay", "PT1.5S")));
        assertEquals(Boolean.TRUE, FLAG.resolve(property("rds4j.test.flag", "TRUE")));
        assertEquals(Boolean.FALSE, FLAG.resolve(property("rds4j.test.flag", "false")));
        assertEquals(Threading.INVOKER, MODE.resolve(property("rds4j.test.mode", "invoker")));
    }

    @Test
    void malformedValuesNameThePropertyOrVariable()
    {
        assertEquals("property rds4j.test.count=ten: not an integer", error(COUNT, property("rds4j.test.count", "ten")));
        assertEquals("environment variable RDS4J_TEST_COUNT=1.5: not an integer",
            error(COUNT, source(Map.of(), Map.of("RDS4J_TEST_COUNT", "1.5"))));
        assertEquals("property rds4j.test.count=0: count must be positive", error(COUNT, property("rds4j.test.count", "0")));
        assertEquals("property rds4j.test.delay=2: not a duration: expected a whole number and ns, us, ms, s, m or h, e.g. 500ms",
            error(DELAY, property("rds4j.test.delay", "2")));
        assertEquals("property rds4j.test.delay=0s: delay must be positive", error(DELAY, property("rds4j.test.delay", "0s")));
        assertEquals("property rds4j.test.delay=PTx: not an ISO-8601 duration", error(DELAY, property("rds4j.test.delay", "PTx")));
        assertEquals("property rds4j.test.size=4t: not a size: expected bytes with an optional k, m or g, e.g. 64k",
            error(SIZE, property("rds4j.test.size", "4t")));
        assertEquals("property rds4j.test.size=2g: too large: at most 2147483647 bytes", error(SIZE, property("rds4j.test.size", "2g")));
        assertEquals("property rds4j.test.flag=yes: not a boolean: expected true or false", error(FLAG, property("rds4j.test.flag", "yes")));
        assertEquals("property rds4j.test.mode=thread: expected one of agent, invoker", error(MODE, property("rds4j.test.mode", "thread")));
    }

    @Test
    void builderValuesAreCheckedWithTheSettingsName()
    {
        assertEquals(5, COUNT.check(5));
        assertEquals("count must be positive: 0", assertThrows(IllegalArgumentException.class, () -> COUNT.check(0)).getMessage());
        assertEquals("delay must not be negative: PT-1S",
            assertThrows(IllegalArgumentException.class, () -> DELAY.check(Duration.ofSeconds(-1))).getMessage());
        assertEquals("delay", assertThrows(NullPointerException.class, () -> DELAY.check(null)).getMessage());
    }

    @Test
    void theStackConfigReadsItsSourceWithTheBuilderFirst()
    {
        final SettingSource source = source(
            Map.of("rds4j.heartbeat.timeout", "30s", "rds4j.max.peers", "9", "rds4j.allowed.peers", "10.0.0.0/8, fd00::/64"),
            Map.of("RDS4J_MAX_PEERS", "11", "RDS4J_PEER_CONNECT_RATE", "4", "RDS4J_THREADING", "INVOKER", "RDS4J_SEND_BUFFER", "2m",
                "RDS4J_DRIVER_TIMEOUT", "2s"));
        final RdsStackConfig config = RdsStackConfig.builder(source).peerConnectRate(5).build();
        assertEquals(Duration.ofSeconds(30), config.heartbeatTimeout());
        assertEquals(Duration.ofSeconds(1), config.heartbeatInterval());
        assertEquals(9, config.maxPeers());
        assertEquals(5, config.peerConnectRate());
        assertEquals(Threading.INVOKER, config.threading());
        assertEquals(2 << 20, config.sendBufferBytes());
        assertEquals(1 << 20, config.receiveBufferBytes());
        assertEquals(Duration.ofSeconds(2), config.driverTimeout());
        assertEquals(java.util.List.of("10.0.0.0/8", "fd00::/64"), config.allowedPeers().entries());
        assertSame(source, config.settingSource());
        final RdsStackConfig copy = config.toBuilder().build();
        assertEquals(9, copy.maxPeers());
        assertSame(source, copy.settingSource());
    }

    @Test
    void everyDefaultHoldsWithoutASource()
    {
        final RdsStackConfig config = RdsStackConfig.builder(SettingSource.none()).build();
        assertEquals("rds4j", config.name());
        assertEquals(TransportType.AUTO, config.transport());
        assertEquals(1 << 20, config.sendBufferBytes());
        assertEquals(64 << 20, config.maxSocketBufferBytes());
        assertEquals(4096, config.socketQueueCapacity());
        assertEquals("backoff", config.idleStrategy());
        assertEquals(Duration.ofMillis(1), config.ackDelay());
        assertEquals(Duration.ofMillis(1), config.reconnectDelayMin());
        assertEquals(Duration.ofSeconds(1), config.reconnectDelayMax());
        assertEquals(Duration.ofSeconds(5), config.connectTimeout());
        assertEquals(Duration.ofSeconds(10), config.heartbeatTimeout());
        assertTrue(config.infoFileEnabled());
        assertEquals(256, config.maxPeers());
        assertEquals(20, config.peerConnectRate());
        assertSame(PeerAllowList.ALL, config.allowedPeers());
        assertEquals(Threading.AGENT, config.threading());
        assertEquals(Duration.ofSeconds(10), config.driverTimeout());
    }

    @Test
    void theDriverTimeoutMustExceedTheDriversHeartbeatPeriod()
    {
        assertEquals(Duration.ofMillis(101), RdsStackConfig.builder(property("rds4j.driver.timeout", "101ms")).build()
            .driverTimeout());
        assertEquals("property rds4j.driver.timeout=100ms: driverTimeout must exceed the driver's heartbeat period, 100ms",
            assertThrows(IllegalArgumentException.class,
                () -> RdsStackConfig.builder(property("rds4j.driver.timeout", "100ms")).build()).getMessage());
        assertEquals("driverTimeout must be positive: PT0S", assertThrows(IllegalArgumentException.class,
            () -> RdsStackConfig.builder().driverTimeout(Duration.ZERO)).getMessage());
        assertEquals("driverTimeout must not be negative: PT-1S", assertThrows(IllegalArgumentException.class,
            () -> RdsStackConfig.builder().driverTimeout(Duration.ofSeconds(-1))).getMessage());
    }

    @Test
    void settingsThatDependOnEachOtherAreCheckedWhenBuilt()
    {
        final IllegalArgumentException heartbeat = assertThrows(IllegalArgumentException.class,
            () -> RdsStackConfig.builder(property("rds4j.heartbeat.interval", "10s")).build());
        assertEquals("heartbeatTimeout must exceed heartbeatInterval: PT10S, PT10S", heartbeat.getMessage());
        final IllegalArgumentException reconnect = assertThrows(IllegalArgumentException.class,
            () -> RdsStackConfig.builder(source(Map.of(), Map.of("RDS4J_RECONNECT_DELAY_MIN", "2s"))).build());
        assertEquals("need 0 < reconnectDelayMin <= reconnectDelayMax: PT2S, PT1S", reconnect.getMessage());
        // the builder's pair setters keep checking at once, with the same messages
        assertEquals("heartbeatTimeout must exceed heartbeatInterval: PT2S, PT1S", assertThrows(IllegalArgumentException.class,
            () -> RdsStackConfig.builder().heartbeat(Duration.ofSeconds(2), Duration.ofSeconds(1))).getMessage());
        assertEquals("need 0 < reconnectDelayMin <= reconnectDelayMax: PT0S, PT1S", assertThrows(IllegalArgumentException.class,
            () -> RdsStackConfig.builder().reconnectDelay(Duration.ZERO, Duration.ofSeconds(1))).getMessage());
        assertEquals("receiveBufferBytes must not exceed maxSocketBufferBytes: 1048576 > 65536",
            assertThrows(IllegalArgumentException.class, () -> RdsStackConfig.builder(property("rds4j.socket.buffer.max", "64k"))
                .sendBufferBytes(65536).build()).getMessage());
        // a builder value resolves a conflict the source made
        assertEquals(Duration.ofSeconds(20), RdsStackConfig.builder(property("rds4j.heartbeat.interval", "10s"))
            .heartbeat(Duration.ofSeconds(10), Duration.ofSeconds(20)).build().heartbeatTimeout());
    }

    @Test
    void aMalformedPropertyFailsTheBuildNamingIt()
    {
        assertEquals("property rds4j.socket.queue.capacity=100: socketQueueCapacity must be a power of two >= 2",
            assertThrows(IllegalArgumentException.class,
                () -> RdsStackConfig.builder(property("rds4j.socket.queue.capacity", "100")).build()).getMessage());
        assertEquals("environment variable RDS4J_IDLE_STRATEGY=sleep: idleStrategy must be backoff, sleep:<micros>, yield or spin",
            assertThrows(IllegalArgumentException.class,
                () -> RdsStackConfig.builder(source(Map.of(), Map.of("RDS4J_IDLE_STRATEGY", "sleep"))).build()).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class,
            () -> RdsStackConfig.builder(property("rds4j.allowed.peers", "10.0.0.0/99")).build()).getMessage()
            .startsWith("property rds4j.allowed.peers=10.0.0.0/99: "));
    }

    @Test
    void aPlainBuilderReadsTheSystemProperties()
    {
        System.setProperty("rds4j.max.peers", "33");
        try
        {
            assertEquals(33, RdsStackConfig.builder().build().maxPeers());
            assertEquals(34, RdsStackConfig.builder().maxPeers(34).build().maxPeers());
            assertEquals(256, RdsStackConfig.builder(SettingSource.none()).build().maxPeers());
        }
        finally
        {
            System.clearProperty("rds4j.max.peers");
        }
    }

    @Test
    void scriptVariablesThatAreNotSettingsAreIgnored()
    {
        final Set<String> variables = new HashSet<>();
        for (final Setting<?> setting : RdsStackConfig.SETTINGS)
        {
            assertTrue(variables.add(setting.environmentVariable()), setting.toString());
            assertTrue(setting.property().startsWith("rds4j."), setting.toString());
            assertTrue(!setting.environmentVariable().endsWith("_OPTS") && !setting.environmentVariable().equals("RDS4J_RECORD"),
                setting.toString());
        }
        final RdsStackConfig config = RdsStackConfig.builder(source(Map.of(),
            Map.of("RDS4J_RECORD", "1", "RDS4J_OPTS", "-Xmx1g", "RDS4J_IB_JAVA_OPTS", "-Drds4j.ib.opsCall=jna"))).build();
        assertEquals(256, config.maxPeers());
    }

    @Test
    void aTransportConfigIsFoundByItsClass()
    {
        final class Fake implements TransportConfig
        {
        }
        final Fake fake = new Fake();
        final RdsStackConfig config = RdsStackConfig.builder(SettingSource.none()).transportConfig(fake).build();
        assertSame(fake, config.transportConfig(Fake.class));
        assertSame(fake, config.toBuilder().build().transportConfig(Fake.class));
        assertNull(RdsStackConfig.builder(SettingSource.none()).build().transportConfig(Fake.class));
    }

    private static String error(final Setting<?> setting, final SettingSource source)
    {
        return assertThrows(IllegalArgumentException.class, () -> setting.resolve(source)).getMessage();
    }

    private static SettingSource property(final String name, final String value)
    {
        return source(Map.of(name, value), Map.of());
    }

    private static SettingSource source(final Map<String, String> properties, final Map<String, String> environment)
    {
        final Properties p = new Properties();
        p.putAll(properties);
        return SettingSource.of(p, environment);
    }
}
