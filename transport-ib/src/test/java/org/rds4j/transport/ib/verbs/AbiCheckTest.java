package org.rds4j.transport.ib.verbs;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The run-time ABI check against the installed libibverbs and librdmacm (no RDMA device needed). */
class AbiCheckTest
{
    private static boolean librariesPresent()
    {
        try
        {
            LibIbverbs.load();
            LibRdmaCm.load();
            return true;
        }
        catch (final UnsatisfiedLinkError e)
        {
            return false;
        }
    }

    @Test
    void installedLibrariesHaveTheVerifiedAbi()
    {
        assumeTrue(librariesPresent(), "libibverbs.so.1 / librdmacm.so.1 not installed");
        AbiCheck.verify();
        assertNotNull(VerbsContext.deviceNames()); // empty on a machine without RDMA devices
    }

    @Test
    void nonCodeOpsPointerIsRefusedWithAClearMessage()
    {
        assumeTrue(librariesPresent(), "libibverbs.so.1 / librdmacm.so.1 not installed");
        final NativeBlock data = new NativeBlock(64);
        final VerbsLayoutException e = assertThrows(VerbsLayoutException.class,
            () -> AbiCheck.checkCode(data.address(), "ibv_context.ops.post_send"));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("refusing to start the IB transport"), e.getMessage());
    }
}
