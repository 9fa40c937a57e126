package org.rds4j;

/**
 * The settings of one transport (TCP's port and keepalive, IB's rings...), declared by the transport's module
 * and handed to a stack with {@link RdsStackConfig.Builder#transportConfig(TransportConfig)}. This API knows no
 * transport: a transport looks its own class up with {@link RdsStackConfig#transportConfig(Class)} and, when
 * none was given, builds one from the stack's {@link RdsStackConfig#settingSource()} (system properties,
 * environment, defaults). Implementations are immutable.
 */
public interface TransportConfig
{
}
