package org.rds4j;

/**
 * Service-provider interface: how {@link RdsStack#open(RdsStackConfig)} finds an implementation. Registered
 * in {@code META-INF/services/org.rds4j.RdsStackProvider}; applications do not call it.
 */
public interface RdsStackProvider
{
    /**
     * @param config the configuration.
     * @return a running stack.
     */
    RdsStack open(RdsStackConfig config);
}
