package org.rds4j.transport.ib.verbs;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every struct offset, struct size and enum value of libibverbs, librdmacm and libffi that the Java side
 * relies on. Nothing reads a native struct except through these constants.
 * <p>
 * <b>Where they are checked.</b>
 * <ul>
 *   <li>Build time: {@code VerbsLayoutProbeTest} compiles {@code src/test/c/verbs_layout_probe.c} with gcc
 *       against the installed {@code <infiniband/verbs.h>}, {@code <rdma/rdma_cma.h>} and {@code <ffi.h>},
 *       runs it, and fails {@code mvn verify} if any value differs from {@link #values()} or if either side
 *       has a name the other lacks.</li>
 *   <li>Run time (no compiler needed): {@link AbiCheck} verifies that the functions bound are the symbol
 *       versions whose structs these constants describe ({@code IBVERBS_1.1}, {@code RDMACM_1.0}), and the
 *       wrappers check every object they create against what they know must be in it (the PD's, CQ's,
 *       MR's and QP's back pointers, the MR's address and length, the QP type, the ops entries being code in
 *       a loaded library). A mismatch throws {@link VerbsLayoutException} and the transport does not
 *       start.</li>
 * </ul>
 * Values verified against rdma-core 44.0 and libffi 3.4.4 (Debian 12, x86-64), and stable since the
 * {@code IBVERBS_1.1} ABI: the data-path structs are part of the libibverbs ABI, which rdma-core only
 * extends at the end.
 */
public final class VerbsLayout
{
    /** The platform the constants were verified on; the transport refuses others. */
    public static final String VERIFIED_PLATFORM = "linux-x86-64";
    public static final String VERIFIED_AGAINST = "rdma-core 44.0, libffi 3.4.4 (Debian 12, x86-64)";

    // struct ibv_context: the device pointer and the data-path entries of its ops table (ibv_context_ops)
    public static final int CONTEXT_DEVICE = 0;
    public static final int CONTEXT_OPS_POLL_CQ = 96;
    public static final int CONTEXT_OPS_REQ_NOTIFY_CQ = 104;
    public static final int CONTEXT_OPS_POST_SEND = 208;
    public static final int CONTEXT_OPS_POST_RECV = 216;
    public static final int CONTEXT_NUM_COMP_VECTORS = 272;

    // struct ibv_pd
    public static final int PD_CONTEXT = 0;

    // struct ibv_mr
    public static final int MR_CONTEXT = 0;
    public static final int MR_PD = 8;
    public static final int MR_ADDR = 16;
    public static final int MR_LENGTH = 24;
    public static final int MR_LKEY = 36;
    public static final int MR_RKEY = 40;

    // struct ibv_comp_channel
    public static final int COMP_CHANNEL_CONTEXT = 0;
    public static final int COMP_CHANNEL_FD = 8;

    // struct ibv_cq
    public static final int CQ_CONTEXT = 0;
    public static final int CQ_CHANNEL = 8;
    public static final int CQ_CQE = 28;

    // struct ibv_qp
    public static final int QP_CONTEXT = 0;
    public static final int QP_PD = 16;
    public static final int QP_SEND_CQ = 24;
    public static final int QP_RECV_CQ = 32;
    public static final int QP_QP_NUM = 52;
    public static final int QP_STATE = 56;
    public static final int QP_QP_TYPE = 60;

    // struct ibv_sge
    public static final int SGE_SIZE = 16;
    public static final int SGE_ADDR = 0;
    public static final int SGE_LENGTH = 8;
    public static final int SGE_LKEY = 12;

    // struct ibv_send_wr
    public static final int SEND_WR_SIZE = 128;
    public static final int SEND_WR_WR_ID = 0;
    public static final int SEND_WR_NEXT = 8;
    public static final int SEND_WR_SG_LIST = 16;
    public static final int SEND_WR_NUM_SGE = 24;
    public static final int SEND_WR_OPCODE = 28;
    public static final int SEND_WR_SEND_FLAGS = 32;
    public static final int SEND_WR_IMM_DATA = 36;

    // struct ibv_recv_wr
    public static final int RECV_WR_SIZE = 32;
    public static final int RECV_WR_WR_ID = 0;
    public static final int RECV_WR_NEXT = 8;
    public static final int RECV_WR_SG_LIST = 16;
    public static final int RECV_WR_NUM_SGE = 24;

    // struct ibv_wc
    public static final int WC_SIZE = 48;
    public static final int WC_WR_ID = 0;
    public static final int WC_STATUS = 8;
    public static final int WC_OPCODE = 12;
    public static final int WC_VENDOR_ERR = 16;
    public static final int WC_BYTE_LEN = 20;
    public static final int WC_QP_NUM = 28;
    public static final int WC_WC_FLAGS = 36;

    // struct ibv_qp_init_attr (with its struct ibv_qp_cap cap)
    public static final int QP_INIT_ATTR_SIZE = 64;
    public static final int QP_INIT_ATTR_QP_CONTEXT = 0;
    public static final int QP_INIT_ATTR_SEND_CQ = 8;
    public static final int QP_INIT_ATTR_RECV_CQ = 16;
    public static final int QP_INIT_ATTR_SRQ = 24;
    public static final int QP_INIT_ATTR_MAX_SEND_WR = 32;
    public static final int QP_INIT_ATTR_MAX_RECV_WR = 36;
    public static final int QP_INIT_ATTR_MAX_SEND_SGE = 40;
    public static final int QP_INIT_ATTR_MAX_RECV_SGE = 44;
    public static final int QP_INIT_ATTR_MAX_INLINE_DATA = 48;
    public static final int QP_INIT_ATTR_QP_TYPE = 52;
    public static final int QP_INIT_ATTR_SQ_SIG_ALL = 56;

    // struct rdma_event_channel
    public static final int CM_CHANNEL_FD = 0;

    // struct rdma_cm_id
    public static final int CM_ID_VERBS = 0;
    public static final int CM_ID_CHANNEL = 8;
    public static final int CM_ID_CONTEXT = 16;
    public static final int CM_ID_QP = 24;
    public static final int CM_ID_PORT_NUM = 348;

    // struct rdma_cm_event (param.conn is a struct rdma_conn_param)
    public static final int CM_EVENT_ID = 0;
    public static final int CM_EVENT_LISTEN_ID = 8;
    public static final int CM_EVENT_EVENT = 16;
    public static final int CM_EVENT_STATUS = 20;
    public static final int CM_EVENT_CONN_PRIVATE_DATA = 24;
    public static final int CM_EVENT_CONN_PRIVATE_DATA_LEN = 32;

    // struct rdma_conn_param
    public static final int CONN_PARAM_SIZE = 24;
    public static final int CONN_PARAM_PRIVATE_DATA = 0;
    public static final int CONN_PARAM_PRIVATE_DATA_LEN = 8;
    public static final int CONN_PARAM_RESPONDER_RESOURCES = 9;
    public static final int CONN_PARAM_INITIATOR_DEPTH = 10;
    public static final int CONN_PARAM_FLOW_CONTROL = 11;
    public static final int CONN_PARAM_RETRY_COUNT = 12;
    public static final int CONN_PARAM_RNR_RETRY_COUNT = 13;
    public static final int CONN_PARAM_SRQ = 14;
    public static final int CONN_PARAM_QP_NUM = 16;

    // struct sockaddr_in
    public static final int SOCKADDR_IN_SIZE = 16;
    public static final int SOCKADDR_IN_FAMILY = 0;
    public static final int SOCKADDR_IN_PORT = 2;
    public static final int SOCKADDR_IN_ADDR = 4;

    // enum and flag values
    public static final int AF_INET = 2;
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    public static final int IBV_QPT_RC = 2;
    public static final int IBV_WR_SEND = 2;
    public static final int IBV_WR_SEND_WITH_IMM = 3;
    public static final int IBV_SEND_SIGNALED = 2;
    public static final int IBV_SEND_SOLICITED = 4;
    public static final int IBV_WC_SUCCESS = 0;
    public static final int IBV_WC_WR_FLUSH_ERR = 5;
    public static final int IBV_WC_SEND = 0;
    public static final int IBV_WC_RECV = 128;
    public static final int IBV_QPS_ERR = 6;
    public static final int RDMA_PS_TCP = 262;
    public static final int RDMA_CM_EVENT_ADDR_RESOLVED = 0;
    public static final int RDMA_CM_EVENT_ADDR_ERROR = 1;
    public static final int RDMA_CM_EVENT_ROUTE_RESOLVED = 2;
    public static final int RDMA_CM_EVENT_ROUTE_ERROR = 3;
    public static final int RDMA_CM_EVENT_CONNECT_REQUEST = 4;
    public static final int RDMA_CM_EVENT_CONNECT_RESPONSE = 5;
    public static final int RDMA_CM_EVENT_CONNECT_ERROR = 6;
    public static final int RDMA_CM_EVENT_UNREACHABLE = 7;
    public static final int RDMA_CM_EVENT_REJECTED = 8;
    public static final int RDMA_CM_EVENT_ESTABLISHED = 9;
    public static final int RDMA_CM_EVENT_DISCONNECTED = 10;
    public static final int RDMA_CM_EVENT_DEVICE_REMOVAL = 11;
    public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = 15;

    // libffi (x86-64), for the zero-allocation calls through ibv_context_ops (OpsCall)
    public static final int FFI_DEFAULT_ABI = 2;
    public static final int FFI_OK = 0;
    public static final int FFI_CIF_SIZE = 32;
    public static final int FFI_ARG_SIZE = 8;

    private VerbsLayout()
    {
    }

    /** @return every constant above by name (the names the C probe prints). */
    public static Map<String, Long> values()
    {
        final Map<String, Long> values = new TreeMap<>();
        for (final Field field : VerbsLayout.class.getFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == int.class)
            {
                try
                {
                    values.put(field.getName(), (long)field.getInt(null));
                }
                catch (final IllegalAccessException e)
                {
                    throw new IllegalStateException(e);
                }
            }
        }
        return values;
    }

    /**
     * Refuses a platform the constants were not verified on.
     *
     * @throws VerbsLayoutException on anything but 64-bit Linux on x86-64.
     */
    public static void checkPlatform()
    {
        final String os = System.getProperty("os.name", "");
        final String arch = System.getProperty("os.arch", "");
        if (!os.equals("Linux") || !(arch.equals("amd64") || arch.equals("x86_64")))
        {
            throw new VerbsLayoutException("the verbs struct layout was verified on " + VERIFIED_PLATFORM +
                " only, not on " + os + "/" + arch);
        }
    }

    /**
     * A run-time layout check: fails with a message naming the field when a value read from a live object
     * is not what it must be.
     */
    static void expect(final boolean ok, final String field, final long found, final long expected)
    {
        if (!ok)
        {
            throw new VerbsLayoutException(field + " reads 0x" + Long.toHexString(found) + ", expected 0x" +
                Long.toHexString(expected));
        }
    }
}
