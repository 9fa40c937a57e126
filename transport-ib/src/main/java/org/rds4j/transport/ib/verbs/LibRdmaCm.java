package org.rds4j.transport.ib.verbs;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * librdmacm.so.1, direct-mapped: connection management (address and route resolution, listen, connect,
 * accept, reject, disconnect, events). Pointers are {@code long}s. Every function returns -1 with errno set
 * on failure ({@link com.sun.jna.Native#getLastError()}), except as noted.
 */
public final class LibRdmaCm
{
    public static final String LIBRARY = "librdmacm.so.1";

    static
    {
        Native.register(LibRdmaCm.class, NativeLibrary.getInstance(LIBRARY));
    }

    private LibRdmaCm()
    {
    }

    /** Loads the library (idempotent); throws {@link UnsatisfiedLinkError} if it is missing. */
    public static void load()
    {
    }

    /** @return {@code struct rdma_event_channel *} or 0. */
    public static native long rdma_create_event_channel();

    public static native void rdma_destroy_event_channel(long channel);

    /** @param idOut {@code struct rdma_cm_id **}. @param ps {@link VerbsLayout#RDMA_PS_TCP}. */
    public static native int rdma_create_id(long channel, long idOut, long context, int ps);

    public static native int rdma_destroy_id(long id);

    /** @param addr {@code struct sockaddr *}. */
    public static native int rdma_bind_addr(long id, long addr);

    public static native int rdma_resolve_addr(long id, long srcAddr, long dstAddr, int timeoutMs);

    public static native int rdma_resolve_route(long id, int timeoutMs);

    /** @param qpInitAttr {@code struct ibv_qp_init_attr *}; the QP lands in {@code id->qp}. */
    public static native int rdma_create_qp(long id, long pd, long qpInitAttr);

    public static native void rdma_destroy_qp(long id);

    /** @param connParam {@code struct rdma_conn_param *}. */
    public static native int rdma_connect(long id, long connParam);

    public static native int rdma_listen(long id, int backlog);

    public static native int rdma_accept(long id, long connParam);

    public static native int rdma_reject(long id, long privateData, byte privateDataLen);

    public static native int rdma_disconnect(long id);

    /** @param eventOut {@code struct rdma_cm_event **}. Blocks unless the channel's fd is non-blocking. */
    public static native int rdma_get_cm_event(long channel, long eventOut);

    public static native int rdma_ack_cm_event(long event);

    /** @return {@code const char *}. */
    public static native long rdma_event_str(int event);
}
