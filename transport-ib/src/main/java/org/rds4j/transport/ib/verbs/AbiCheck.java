package org.rds4j.transport.ib.verbs;

import com.sun.jna.Pointer;

/**
 * The run-time half of the layout check (the build-time half is the C probe test; see {@link VerbsLayout}).
 * Without a compiler, what can be proved at run time is which ABI the libraries give: every function the
 * binding calls must resolve (dlsym, as JNA binds) to the symbol version whose structs {@link VerbsLayout}
 * describes. libibverbs keeps the pre-rdma-core {@code IBVERBS_1.0} structs for old binaries; binding to the
 * wrong generation would silently misread every struct, so that is what is checked. The live-object checks
 * (back pointers, QP type, ops pointers) are done by the wrappers as they create each object.
 */
public final class AbiCheck
{
    private static final String[][] IBVERBS = {
        {"ibv_get_device_list", "IBVERBS_1.1"}, {"ibv_free_device_list", "IBVERBS_1.1"},
        {"ibv_get_device_name", "IBVERBS_1.1"}, {"ibv_open_device", "IBVERBS_1.1"},
        {"ibv_close_device", "IBVERBS_1.1"}, {"ibv_alloc_pd", "IBVERBS_1.1"}, {"ibv_dealloc_pd", "IBVERBS_1.1"},
        {"ibv_reg_mr", "IBVERBS_1.1"}, {"ibv_dereg_mr", "IBVERBS_1.1"},
        {"ibv_create_comp_channel", "IBVERBS_1.0"}, {"ibv_destroy_comp_channel", "IBVERBS_1.0"},
        {"ibv_create_cq", "IBVERBS_1.1"}, {"ibv_destroy_cq", "IBVERBS_1.1"},
        {"ibv_get_cq_event", "IBVERBS_1.1"}, {"ibv_ack_cq_events", "IBVERBS_1.1"},
        {"ibv_query_gid", "IBVERBS_1.1"}, {"ibv_wc_status_str", "IBVERBS_1.1"},
    };
    private static final String[] RDMACM = {
        "rdma_create_event_channel", "rdma_destroy_event_channel", "rdma_create_id", "rdma_destroy_id",
        "rdma_bind_addr", "rdma_resolve_addr", "rdma_resolve_route", "rdma_create_qp", "rdma_destroy_qp",
        "rdma_connect", "rdma_listen", "rdma_accept", "rdma_reject", "rdma_disconnect", "rdma_get_cm_event",
        "rdma_ack_cm_event", "rdma_event_str",
    };

    private static volatile boolean passed;

    private AbiCheck()
    {
    }

    /**
     * Loads libibverbs and librdmacm and checks the platform and the symbol versions (once per JVM).
     *
     * @throws VerbsLayoutException on a mismatch, {@link UnsatisfiedLinkError} if a library is missing.
     */
    public static void verify()
    {
        if (passed)
        {
            return;
        }
        VerbsLayout.checkPlatform();
        LibIbverbs.load();
        LibRdmaCm.load();
        checkVersions(LibIbverbs.LIBRARY, IBVERBS);
        final String[][] rdmacm = new String[RDMACM.length][];
        for (int i = 0; i < RDMACM.length; i++)
        {
            rdmacm[i] = new String[] {RDMACM[i], "RDMACM_1.0"};
        }
        checkVersions(LibRdmaCm.LIBRARY, rdmacm);
        passed = true;
    }

    private static void checkVersions(final String library, final String[][] symbols)
    {
        final long handle = LibC.dlopen(library, LibC.RTLD_NOW | LibC.RTLD_NOLOAD);
        if (handle == 0)
        {
            throw new VerbsLayoutException(library + " is not loaded");
        }
        try
        {
            for (final String[] symbol : symbols)
            {
                final long bound = LibC.dlsym(handle, symbol[0]);
                final long versioned = LibC.dlvsym(handle, symbol[0], symbol[1]);
                if (bound == 0 || bound != versioned)
                {
                    throw new VerbsLayoutException(library + ": " + symbol[0] + " does not resolve to version " +
                        symbol[1] + " (dlsym 0x" + Long.toHexString(bound) + ", dlvsym 0x" +
                        Long.toHexString(versioned) + ")");
                }
            }
        }
        finally
        {
            LibC.dlclose(handle);
        }
    }

    /**
     * Checks that a function pointer read from an ops table is code in a loaded shared object.
     *
     * @return the path of that object (for logs).
     */
    static String checkCode(final long function, final String field)
    {
        final NativeBlock info = new NativeBlock(LibC.DL_INFO_SIZE);
        if (function == 0 || LibC.dladdr(function, info.address()) == 0 || info.view().getLong(0) == 0)
        {
            throw new VerbsLayoutException(field + " = 0x" + Long.toHexString(function) +
                " is not code in any loaded library");
        }
        return new Pointer(info.view().getLong(0)).getString(0);
    }
}
