package org.rds4j.transport.ib.verbs;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs {@link VerbsSmoke} when this machine has an RDMA device and {@code -Drds4j.ib.smoke=server,client}
 * names two local addresses on it; skipped otherwise (the build host has no RDMA device: the smoke runs in
 * the rxe guest through src/test/vm/run-ib-tests.sh).
 */
class VerbsSmokeTest
{
    @Test
    void connectExchangeAndTearDown() throws Exception
    {
        final String addresses = System.getProperty("rds4j.ib.smoke");
        final String[] devices = new File("/sys/class/infiniband").list();
        assumeTrue(addresses != null && devices != null && devices.length > 0,
            "no RDMA device or -Drds4j.ib.smoke=server-ip,client-ip not set");
        final String[] ips = addresses.split(",");
        new VerbsSmoke(new InetSocketAddress(InetAddress.getByName(ips[0]), CmId.RDS_IB_PORT),
            new InetSocketAddress(InetAddress.getByName(ips[1]), 0), 2000).run();
    }
}
