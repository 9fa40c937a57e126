package org.rds4j.transport.ib.verbs;

import org.agrona.concurrent.UnsafeBuffer;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * An RC queue pair ({@code struct ibv_qp}) created by {@link CmId#createQueuePair}, with its two data-path
 * call sites ({@code ops.post_send}, {@code ops.post_recv}) set up once. The rings build work-request chains
 * in native memory and hand their heads to {@link #postSend}/{@link #postReceive}; nothing is allocated per
 * post. Destroyed with its {@link CmId}. Not thread safe.
 */
public final class QueuePair
{
    private final long qp;
    private final int qpNum;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final VerbsContext context;
    private final NativeBlock badWr = new NativeBlock(16);
    private final OpsCall postSend;
    private final OpsCall postRecv;

    QueuePair(final VerbsContext context, final long qp, final CompletionQueue sendCq, final CompletionQueue recvCq,
        final int maxSendWr, final int maxRecvWr)
    {
        this.context = context;
        this.qp = qp;
        final UnsafeBuffer view = new UnsafeBuffer(qp, QP_QP_TYPE + 4);
        VerbsLayout.expect(qp != 0, "rdma_cm_id.qp", qp, 1);
        VerbsLayout.expect(view.getLong(QP_CONTEXT) == context.context(), "ibv_qp.context", view.getLong(QP_CONTEXT), context.context());
        VerbsLayout.expect(view.getLong(QP_PD) == context.pd(), "ibv_qp.pd", view.getLong(QP_PD), context.pd());
        VerbsLayout.expect(view.getLong(QP_SEND_CQ) == sendCq.cq(), "ibv_qp.send_cq", view.getLong(QP_SEND_CQ), sendCq.cq());
        VerbsLayout.expect(view.getLong(QP_RECV_CQ) == recvCq.cq(), "ibv_qp.recv_cq", view.getLong(QP_RECV_CQ), recvCq.cq());
        VerbsLayout.expect(view.getInt(QP_QP_TYPE) == IBV_QPT_RC, "ibv_qp.qp_type", view.getInt(QP_QP_TYPE), IBV_QPT_RC);
        qpNum = view.getInt(QP_QP_NUM);
        this.maxSendWr = maxSendWr;
        this.maxRecvWr = maxRecvWr;
        postSend = OpsCall.create(context.postSendFunction(), OpsCall.Signature.PTR_PTR_PTR);
        postSend.pointer(0, qp);
        postSend.pointer(2, badWr.address());
        postRecv = OpsCall.create(context.postRecvFunction(), OpsCall.Signature.PTR_PTR_PTR);
        postRecv.pointer(0, qp);
        postRecv.pointer(2, badWr.address());
    }

    public long qp()
    {
        return qp;
    }

    /** @return the QP number (matches {@link CompletionQueue#qpNum}). */
    public int qpNum()
    {
        return qpNum;
    }

    public VerbsContext context()
    {
        return context;
    }

    /** @return the send queue's size as granted (at least what was asked). */
    public int maxSendWr()
    {
        return maxSendWr;
    }

    public int maxRecvWr()
    {
        return maxRecvWr;
    }

    /** {@code ibv_post_send} of a chain of {@code struct ibv_send_wr}. @return 0 or an errno; see {@link #badWorkRequest()}. */
    public int postSend(final long firstWr)
    {
        postSend.pointer(1, firstWr);
        return postSend.invoke();
    }

    /** {@code ibv_post_recv} of a chain of {@code struct ibv_recv_wr}. @return 0 or an errno. */
    public int postReceive(final long firstWr)
    {
        postRecv.pointer(1, firstWr);
        return postRecv.invoke();
    }

    /** @return after a failed post, the first work request that was not posted. */
    public long badWorkRequest()
    {
        return badWr.view().getLong(0);
    }
}
