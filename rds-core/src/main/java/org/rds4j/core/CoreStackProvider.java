package org.rds4j.core;

import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.RdsStackProvider;

/** Registers {@link CoreStack} as the implementation behind {@link RdsStack#open(RdsStackConfig)}. */
public final class CoreStackProvider implements RdsStackProvider
{
    /** Created by {@link java.util.ServiceLoader}. */
    public CoreStackProvider()
    {
    }

    @Override
    public RdsStack open(final RdsStackConfig config)
    {
        return config.driverDirectory().isEmpty() ? CoreStack.open(config) : DriverStack.open(config);
    }
}
