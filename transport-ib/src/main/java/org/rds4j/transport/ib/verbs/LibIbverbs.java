package org.rds4j.transport.ib.verbs;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * libibverbs.so.1, direct-mapped ({@link Native#register}): every function here is an exported symbol, and
 * every pointer is passed as a {@code long}, so a call allocates nothing. Control path only: the data-path
 * calls ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq}, {@code ibv_req_notify_cq}) are
 * static inline in {@code verbs.h} and have no symbol; they go through {@link OpsCall}.
 * <p>
 * {@code ibv_reg_mr} is a macro in rdma-core's header that calls the exported {@code ibv_reg_mr} when the
 * access flags are a compile-time constant outside {@code IBV_ACCESS_OPTIONAL_RANGE}, which is the case for
 * the flags rds4j uses ({@code IBV_ACCESS_LOCAL_WRITE}). {@code ibv_query_port} is a macro over an inline
 * function and is not bound. dlsym, which JNA uses, returns each symbol's default version; {@link AbiCheck}
 * verifies it is {@code IBVERBS_1.1} (or 1.0 for the functions that never changed).
 */
public final class LibIbverbs
{
    public static final String LIBRARY = "libibverbs.so.1";

    static
    {
        Native.register(LibIbverbs.class, NativeLibrary.getInstance(LIBRARY));
    }

    private LibIbverbs()
    {
    }

    /** Loads the library (idempotent); throws {@link UnsatisfiedLinkError} if it is missing. */
    public static void load()
    {
    }

    /** @param numDevices {@code int *} or 0. @return {@code struct ibv_device **}, null-terminated, or 0. */
    public static native long ibv_get_device_list(long numDevices);

    public static native void ibv_free_device_list(long list);

    /** @return {@code const char *}. */
    public static native long ibv_get_device_name(long device);

    public static native long ibv_open_device(long device);

    public static native int ibv_close_device(long context);

    public static native long ibv_alloc_pd(long context);

    public static native int ibv_dealloc_pd(long pd);

    public static native long ibv_reg_mr(long pd, long addr, long length, int access);

    public static native int ibv_dereg_mr(long mr);

    public static native long ibv_create_comp_channel(long context);

    public static native int ibv_destroy_comp_channel(long channel);

    public static native long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    public static native int ibv_destroy_cq(long cq);

    /** @param cqOut {@code struct ibv_cq **}. @param cqContextOut {@code void **}. */
    public static native int ibv_get_cq_event(long channel, long cqOut, long cqContextOut);

    public static native void ibv_ack_cq_events(long cq, int events);

    /** @param gidOut 16 bytes ({@code union ibv_gid}). */
    public static native int ibv_query_gid(long context, byte port, int index, long gidOut);

    /** @return {@code const char *} naming a completion status. */
    public static native long ibv_wc_status_str(int status);
}
