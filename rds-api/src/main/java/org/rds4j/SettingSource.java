package org.rds4j;

import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * Where unset {@link Setting}s are read from: {@code rds4j.*} properties, then {@code RDS4J_*} environment
 * variables. {@link #system()} is the JVM's own; tests inject their own with {@link #of(Properties, Map)}.
 */
public final class SettingSource
{
    private static final SettingSource NONE = new SettingSource(new Properties(), Map.of());

    private final Properties properties;
    private final Map<String, String> environment;

    private SettingSource(final Properties properties, final Map<String, String> environment)
    {
        this.properties = properties;
        this.environment = environment;
    }

    /** @return the JVM's system properties and the process environment, read when a setting is resolved. */
    public static SettingSource system()
    {
        return new SettingSource(System.getProperties(), System.getenv());
    }

    /**
     * @param properties  the properties to read ({@code rds4j.tcp.port=16385}); not copied.
     * @param environment the environment variables to read ({@code RDS4J_TCP_PORT=16385}); not copied.
     * @return a source reading those.
     */
    public static SettingSource of(final Properties properties, final Map<String, String> environment)
    {
        return new SettingSource(Objects.requireNonNull(properties, "properties"),
            Objects.requireNonNull(environment, "environment"));
    }

    /** @return a source with no properties and no environment: every unset setting takes its default. */
    public static SettingSource none()
    {
        return NONE;
    }

    /**
     * @param name a property name.
     * @return its value, or null if unset or blank.
     */
    String property(final String name)
    {
        return nonBlank(properties.getProperty(name));
    }

    /**
     * @param name an environment variable's name.
     * @return its value, or null if unset or blank.
     */
    String environment(final String name)
    {
        return nonBlank(environment.get(name));
    }

    private static String nonBlank(final String value)
    {
        return value == null || value.isBlank() ? null : value.trim();
    }
}
