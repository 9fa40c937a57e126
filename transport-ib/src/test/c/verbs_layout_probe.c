/*
 * Prints the struct offsets, sizes and constants that org.rds4j.transport.ib.verbs.VerbsLayout relies on,
 * one "NAME VALUE" per line, compiled against the installed <infiniband/verbs.h>, <rdma/rdma_cma.h> and
 * <ffi.h>. VerbsLayoutProbeTest compiles and runs it and compares every line with VerbsLayout.values().
 * Names are VerbsLayout's constant names; keep the two lists in step.
 */
#include <stddef.h>
#include <stdio.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <ffi.h>

#define P(name, value) printf("%s %lld\n", name, (long long)(value))
#define OFF(name, type, field) P(name, offsetof(type, field))
#define SIZE(name, type) P(name, sizeof(type))

int main(void)
{
    /* struct ibv_context and the data-path entries of its ops table */
    OFF("CONTEXT_DEVICE", struct ibv_context, device);
    OFF("CONTEXT_OPS_POLL_CQ", struct ibv_context, ops.poll_cq);
    OFF("CONTEXT_OPS_REQ_NOTIFY_CQ", struct ibv_context, ops.req_notify_cq);
    OFF("CONTEXT_OPS_POST_SEND", struct ibv_context, ops.post_send);
    OFF("CONTEXT_OPS_POST_RECV", struct ibv_context, ops.post_recv);
    OFF("CONTEXT_NUM_COMP_VECTORS", struct ibv_context, num_comp_vectors);

    OFF("PD_CONTEXT", struct ibv_pd, context);

    OFF("MR_CONTEXT", struct ibv_mr, context);
    OFF("MR_PD", struct ibv_mr, pd);
    OFF("MR_ADDR", struct ibv_mr, addr);
    OFF("MR_LENGTH", struct ibv_mr, length);
    OFF("MR_LKEY", struct ibv_mr, lkey);
    OFF("MR_RKEY", struct ibv_mr, rkey);

    OFF("COMP_CHANNEL_CONTEXT", struct ibv_comp_channel, context);
    OFF("COMP_CHANNEL_FD", struct ibv_comp_channel, fd);

    OFF("CQ_CONTEXT", struct ibv_cq, context);
    OFF("CQ_CHANNEL", struct ibv_cq, channel);
    OFF("CQ_CQE", struct ibv_cq, cqe);

    OFF("QP_CONTEXT", struct ibv_qp, context);
    OFF("QP_PD", struct ibv_qp, pd);
    OFF("QP_SEND_CQ", struct ibv_qp, send_cq);
    OFF("QP_RECV_CQ", struct ibv_qp, recv_cq);
    OFF("QP_QP_NUM", struct ibv_qp, qp_num);
    OFF("QP_STATE", struct ibv_qp, state);
    OFF("QP_QP_TYPE", struct ibv_qp, qp_type);

    SIZE("SGE_SIZE", struct ibv_sge);
    OFF("SGE_ADDR", struct ibv_sge, addr);
    OFF("SGE_LENGTH", struct ibv_sge, length);
    OFF("SGE_LKEY", struct ibv_sge, lkey);

    SIZE("SEND_WR_SIZE", struct ibv_send_wr);
    OFF("SEND_WR_WR_ID", struct ibv_send_wr, wr_id);
    OFF("SEND_WR_NEXT", struct ibv_send_wr, next);
    OFF("SEND_WR_SG_LIST", struct ibv_send_wr, sg_list);
    OFF("SEND_WR_NUM_SGE", struct ibv_send_wr, num_sge);
    OFF("SEND_WR_OPCODE", struct ibv_send_wr, opcode);
    OFF("SEND_WR_SEND_FLAGS", struct ibv_send_wr, send_flags);
    OFF("SEND_WR_IMM_DATA", struct ibv_send_wr, imm_data);

    SIZE("RECV_WR_SIZE", struct ibv_recv_wr);
    OFF("RECV_WR_WR_ID", struct ibv_recv_wr, wr_id);
    OFF("RECV_WR_NEXT", struct ibv_recv_wr, next);
    OFF("RECV_WR_SG_LIST", struct ibv_recv_wr, sg_list);
    OFF("RECV_WR_NUM_SGE", struct ibv_recv_wr, num_sge);

    SIZE("WC_SIZE", struct ibv_wc);
    OFF("WC_WR_ID", struct ibv_wc, wr_id);
    OFF("WC_STATUS", struct ibv_wc, status);
    OFF("WC_OPCODE", struct ibv_wc, opcode);
    OFF("WC_VENDOR_ERR", struct ibv_wc, vendor_err);
    OFF("WC_BYTE_LEN", struct ibv_wc, byte_len);
    OFF("WC_QP_NUM", struct ibv_wc, qp_num);
    OFF("WC_WC_FLAGS", struct ibv_wc, wc_flags);

    SIZE("QP_INIT_ATTR_SIZE", struct ibv_qp_init_attr);
    OFF("QP_INIT_ATTR_QP_CONTEXT", struct ibv_qp_init_attr, qp_context);
    OFF("QP_INIT_ATTR_SEND_CQ", struct ibv_qp_init_attr, send_cq);
    OFF("QP_INIT_ATTR_RECV_CQ", struct ibv_qp_init_attr, recv_cq);
    OFF("QP_INIT_ATTR_SRQ", struct ibv_qp_init_attr, srq);
    OFF("QP_INIT_ATTR_MAX_SEND_WR", struct ibv_qp_init_attr, cap.max_send_wr);
    OFF("QP_INIT_ATTR_MAX_RECV_WR", struct ibv_qp_init_attr, cap.max_recv_wr);
    OFF("QP_INIT_ATTR_MAX_SEND_SGE", struct ibv_qp_init_attr, cap.max_send_sge);
    OFF("QP_INIT_ATTR_MAX_RECV_SGE", struct ibv_qp_init_attr, cap.max_recv_sge);
    OFF("QP_INIT_ATTR_MAX_INLINE_DATA", struct ibv_qp_init_attr, cap.max_inline_data);
    OFF("QP_INIT_ATTR_QP_TYPE", struct ibv_qp_init_attr, qp_type);
    OFF("QP_INIT_ATTR_SQ_SIG_ALL", struct ibv_qp_init_attr, sq_sig_all);

    /* librdmacm */
    OFF("CM_CHANNEL_FD", struct rdma_event_channel, fd);
    OFF("CM_ID_VERBS", struct rdma_cm_id, verbs);
    OFF("CM_ID_CHANNEL", struct rdma_cm_id, channel);
    OFF("CM_ID_CONTEXT", struct rdma_cm_id, context);
    OFF("CM_ID_QP", struct rdma_cm_id, qp);
    OFF("CM_ID_PORT_NUM", struct rdma_cm_id, port_num);
    OFF("CM_EVENT_ID", struct rdma_cm_event, id);
    OFF("CM_EVENT_LISTEN_ID", struct rdma_cm_event, listen_id);
    OFF("CM_EVENT_EVENT", struct rdma_cm_event, event);
    OFF("CM_EVENT_STATUS", struct rdma_cm_event, status);
    OFF("CM_EVENT_CONN_PRIVATE_DATA", struct rdma_cm_event, param.conn.private_data);
    OFF("CM_EVENT_CONN_PRIVATE_DATA_LEN", struct rdma_cm_event, param.conn.private_data_len);
    SIZE("CONN_PARAM_SIZE", struct rdma_conn_param);
    OFF("CONN_PARAM_PRIVATE_DATA", struct rdma_conn_param, private_data);
    OFF("CONN_PARAM_PRIVATE_DATA_LEN", struct rdma_conn_param, private_data_len);
    OFF("CONN_PARAM_RESPONDER_RESOURCES", struct rdma_conn_param, responder_resources);
    OFF("CONN_PARAM_INITIATOR_DEPTH", struct rdma_conn_param, initiator_depth);
    OFF("CONN_PARAM_FLOW_CONTROL", struct rdma_conn_param, flow_control);
    OFF("CONN_PARAM_RETRY_COUNT", struct rdma_conn_param, retry_count);
    OFF("CONN_PARAM_RNR_RETRY_COUNT", struct rdma_conn_param, rnr_retry_count);
    OFF("CONN_PARAM_SRQ", struct rdma_conn_param, srq);
    OFF("CONN_PARAM_QP_NUM", struct rdma_conn_param, qp_num);
    SIZE("SOCKADDR_IN_SIZE", struct sockaddr_in);
    OFF("SOCKADDR_IN_FAMILY", struct sockaddr_in, sin_family);
    OFF("SOCKADDR_IN_PORT", struct sockaddr_in, sin_port);
    OFF("SOCKADDR_IN_ADDR", struct sockaddr_in, sin_addr);
    P("AF_INET", AF_INET);

    /* enum and flag values */
    P("IBV_ACCESS_LOCAL_WRITE", IBV_ACCESS_LOCAL_WRITE);
    P("IBV_QPT_RC", IBV_QPT_RC);
    P("IBV_WR_SEND", IBV_WR_SEND);
    P("IBV_WR_SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM);
    P("IBV_SEND_SIGNALED", IBV_SEND_SIGNALED);
    P("IBV_SEND_SOLICITED", IBV_SEND_SOLICITED);
    P("IBV_WC_SUCCESS", IBV_WC_SUCCESS);
    P("IBV_WC_WR_FLUSH_ERR", IBV_WC_WR_FLUSH_ERR);
    P("IBV_WC_SEND", IBV_WC_SEND);
    P("IBV_WC_RECV", IBV_WC_RECV);
    P("IBV_QPS_ERR", IBV_QPS_ERR);
    P("RDMA_PS_TCP", RDMA_PS_TCP);
    P("RDMA_CM_EVENT_ADDR_RESOLVED", RDMA_CM_EVENT_ADDR_RESOLVED);
    P("RDMA_CM_EVENT_ADDR_ERROR", RDMA_CM_EVENT_ADDR_ERROR);
    P("RDMA_CM_EVENT_ROUTE_RESOLVED", RDMA_CM_EVENT_ROUTE_RESOLVED);
    P("RDMA_CM_EVENT_ROUTE_ERROR", RDMA_CM_EVENT_ROUTE_ERROR);
    P("RDMA_CM_EVENT_CONNECT_REQUEST", RDMA_CM_EVENT_CONNECT_REQUEST);
    P("RDMA_CM_EVENT_CONNECT_RESPONSE", RDMA_CM_EVENT_CONNECT_RESPONSE);
    P("RDMA_CM_EVENT_CONNECT_ERROR", RDMA_CM_EVENT_CONNECT_ERROR);
    P("RDMA_CM_EVENT_UNREACHABLE", RDMA_CM_EVENT_UNREACHABLE);
    P("RDMA_CM_EVENT_REJECTED", RDMA_CM_EVENT_REJECTED);
    P("RDMA_CM_EVENT_ESTABLISHED", RDMA_CM_EVENT_ESTABLISHED);
    P("RDMA_CM_EVENT_DISCONNECTED", RDMA_CM_EVENT_DISCONNECTED);
    P("RDMA_CM_EVENT_DEVICE_REMOVAL", RDMA_CM_EVENT_DEVICE_REMOVAL);
    P("RDMA_CM_EVENT_TIMEWAIT_EXIT", RDMA_CM_EVENT_TIMEWAIT_EXIT);

    /* libffi, for the zero-allocation calls through ibv_context_ops */
    P("FFI_DEFAULT_ABI", FFI_DEFAULT_ABI);
    P("FFI_OK", FFI_OK);
    SIZE("FFI_CIF_SIZE", ffi_cif);
    SIZE("FFI_ARG_SIZE", ffi_arg);
    return 0;
}
