package org.rds4j.transport.ib.verbs;

import org.agrona.concurrent.UnsafeBuffer;

import java.net.Inet4Address;
import java.net.InetSocketAddress;

import static org.rds4j.transport.ib.verbs.VerbsLayout.*;

/**
 * An rdma_cm identifier ({@code struct rdma_cm_id}, port space TCP), the connection-management side of one
 * RC queue pair or of a listener. IPv4 only for now (kernel RDS over IB listens on 18634 for IPv4).
 * Every call returns once the request is made; its outcome arrives as an event on the {@link CmEventChannel}.
 */
public final class CmId implements AutoCloseable
{
    /** The rdma_cm port kernel RDS listens on for IPv4 ({@code RDS_PORT}). */
    public static final int RDS_IB_PORT = 18634;
    /** Private data fits in a connect request: 92 bytes of IB CM REQ less rdma_cm's 36-byte header. */
    public static final int MAX_CONNECT_PRIVATE_DATA = 56;
    /** Private data fits in an accept (IB CM REP 196 bytes). */
    public static final int MAX_ACCEPT_PRIVATE_DATA = 196;

    private static final int SRC = 0;
    private static final int DST = 16;
    private static final int CONN_PARAM = 64;
    private static final int QP_INIT_ATTR = 128;
    private static final int PRIVATE_DATA = 256;

    private final long id;
    private final NativeBlock scratch = new NativeBlock(512);
    private final UnsafeBuffer view = scratch.view();
    private QueuePair queuePair;
    private boolean closed;

    private CmId(final long id)
    {
        this.id = id;
    }

    /** Creates an id on a channel ({@code rdma_create_id}, {@code RDMA_PS_TCP}). */
    public static CmId create(final CmEventChannel channel)
    {
        final NativeBlock out = new NativeBlock(8);
        if (LibRdmaCm.rdma_create_id(channel.channel(), out.address(), 0, RDMA_PS_TCP) != 0)
        {
            throw VerbsException.lastError("rdma_create_id");
        }
        final CmId cmId = new CmId(out.view().getLong(0));
        VerbsLayout.expect(cmId.readLong(CM_ID_CHANNEL) == channel.channel(), "rdma_cm_id.channel",
            cmId.readLong(CM_ID_CHANNEL), channel.channel());
        return cmId;
    }

    /** Takes ownership of the new id of a CONNECT_REQUEST event: accept or reject it, and close it. */
    public static CmId ofRequest(final CmEventChannel.CmEvent request)
    {
        if (request.type() != RDMA_CM_EVENT_CONNECT_REQUEST)
        {
            throw new IllegalArgumentException("not a connect request: " + request);
        }
        return new CmId(request.id());
    }

    /**
     * Takes ownership of the new id a CONNECT_REQUEST event named ({@link CmEventChannel.CmEvent#id()}), after
     * the event has been acked: accept or reject it, and close it.
     */
    public static CmId ofRequestId(final long requestId)
    {
        if (requestId == 0)
        {
            throw new IllegalArgumentException("no id");
        }
        return new CmId(requestId);
    }

    /** @return the {@code struct rdma_cm_id *}. */
    public long id()
    {
        return id;
    }

    /** @return {@code id->verbs}, the device context once the id is bound to a device (0 before). */
    public long verbs()
    {
        return readLong(CM_ID_VERBS);
    }

    private long readLong(final int offset)
    {
        return new UnsafeBuffer(id, offset + 8).getLong(offset);
    }

    /** @return the queue pair created on this id, or null. */
    public QueuePair queuePair()
    {
        return queuePair;
    }

    private void sockaddr(final int at, final InetSocketAddress address)
    {
        if (!(address.getAddress() instanceof Inet4Address))
        {
            throw new IllegalArgumentException("IPv4 only: " + address);
        }
        view.setMemory(at, SOCKADDR_IN_SIZE, (byte)0);
        view.putShort(at + SOCKADDR_IN_FAMILY, (short)AF_INET);
        view.putByte(at + SOCKADDR_IN_PORT, (byte)(address.getPort() >> 8));
        view.putByte(at + SOCKADDR_IN_PORT + 1, (byte)address.getPort());
        view.putBytes(at + SOCKADDR_IN_ADDR, address.getAddress().getAddress());
    }

    /** {@code rdma_bind_addr}: binds to a local address and port (a listener, or a fixed source). */
    public void bind(final InetSocketAddress local)
    {
        sockaddr(SRC, local);
        VerbsException.check(LibRdmaCm.rdma_bind_addr(id, scratch.address() + SRC), "rdma_bind_addr(" + local + ")");
    }

    /** {@code rdma_listen} on the bound address. */
    public void listen(final int backlog)
    {
        VerbsException.check(LibRdmaCm.rdma_listen(id, backlog), "rdma_listen");
    }

    /**
     * {@code rdma_resolve_addr}: ADDR_RESOLVED (or ADDR_ERROR) follows.
     *
     * @param source the local address to use, or null to let the routing table pick.
     */
    public void resolveAddress(final InetSocketAddress source, final InetSocketAddress destination, final int timeoutMs)
    {
        if (source != null)
        {
            sockaddr(SRC, source);
        }
        sockaddr(DST, destination);
        VerbsException.check(LibRdmaCm.rdma_resolve_addr(id, source == null ? 0 : scratch.address() + SRC,
            scratch.address() + DST, timeoutMs), "rdma_resolve_addr(" + destination + ")");
    }

    /** {@code rdma_resolve_route}: ROUTE_RESOLVED (or ROUTE_ERROR) follows. */
    public void resolveRoute(final int timeoutMs)
    {
        VerbsException.check(LibRdmaCm.rdma_resolve_route(id, timeoutMs), "rdma_resolve_route");
    }

    /**
     * {@code rdma_create_qp}: an RC queue pair on this id's device, in the context's PD, sending and receiving
     * through the given CQs (one may serve both), one SGE per work request, signalling chosen per WR.
     */
    public QueuePair createQueuePair(final VerbsContext context, final CompletionQueue sendCq,
        final CompletionQueue recvCq, final int maxSendWr, final int maxRecvWr)
    {
        if (queuePair != null)
        {
            throw new IllegalStateException("the id has a queue pair already");
        }
        if (verbs() != context.context())
        {
            throw new IllegalArgumentException("the context is not the id's device context");
        }
        view.setMemory(QP_INIT_ATTR, QP_INIT_ATTR_SIZE, (byte)0);
        view.putLong(QP_INIT_ATTR + QP_INIT_ATTR_SEND_CQ, sendCq.cq());
        view.putLong(QP_INIT_ATTR + QP_INIT_ATTR_RECV_CQ, recvCq.cq());
        view.putInt(QP_INIT_ATTR + QP_INIT_ATTR_MAX_SEND_WR, maxSendWr);
        view.putInt(QP_INIT_ATTR + QP_INIT_ATTR_MAX_RECV_WR, maxRecvWr);
        view.putInt(QP_INIT_ATTR + QP_INIT_ATTR_MAX_SEND_SGE, 1);
        view.putInt(QP_INIT_ATTR + QP_INIT_ATTR_MAX_RECV_SGE, 1);
        view.putInt(QP_INIT_ATTR + QP_INIT_ATTR_QP_TYPE, IBV_QPT_RC);
        view.putInt(QP_INIT_ATTR + QP_INIT_ATTR_SQ_SIG_ALL, 0);
        VerbsException.check(LibRdmaCm.rdma_create_qp(id, context.pd(), scratch.address() + QP_INIT_ATTR), "rdma_create_qp");
        try
        {
            queuePair = new QueuePair(context, readLong(CM_ID_QP), sendCq, recvCq,
                view.getInt(QP_INIT_ATTR + QP_INIT_ATTR_MAX_SEND_WR), view.getInt(QP_INIT_ATTR + QP_INIT_ATTR_MAX_RECV_WR));
        }
        catch (final RuntimeException e)
        {
            LibRdmaCm.rdma_destroy_qp(id);
            throw e;
        }
        return queuePair;
    }

    private long connParam(final byte[] privateData, final int length, final int max, final int retryCount, final int rnrRetryCount)
    {
        if (length > max)
        {
            throw new IllegalArgumentException("private data of " + length + " bytes, at most " + max);
        }
        view.setMemory(CONN_PARAM, CONN_PARAM_SIZE, (byte)0);
        if (length > 0)
        {
            view.putBytes(PRIVATE_DATA, privateData, 0, length);
            view.putLong(CONN_PARAM + CONN_PARAM_PRIVATE_DATA, scratch.address() + PRIVATE_DATA);
        }
        view.putByte(CONN_PARAM + CONN_PARAM_PRIVATE_DATA_LEN, (byte)length);
        view.putByte(CONN_PARAM + CONN_PARAM_RESPONDER_RESOURCES, (byte)1);
        view.putByte(CONN_PARAM + CONN_PARAM_INITIATOR_DEPTH, (byte)1);
        view.putByte(CONN_PARAM + CONN_PARAM_RETRY_COUNT, (byte)retryCount);
        view.putByte(CONN_PARAM + CONN_PARAM_RNR_RETRY_COUNT, (byte)rnrRetryCount);
        return scratch.address() + CONN_PARAM;
    }

    /**
     * {@code rdma_connect} after ROUTE_RESOLVED and {@link #createQueuePair}: ESTABLISHED (or REJECTED,
     * UNREACHABLE, CONNECT_ERROR) follows.
     *
     * @param retryCount    transport retries (0-7) before a send fails.
     * @param rnrRetryCount receiver-not-ready retries (7 = forever).
     */
    public void connect(final byte[] privateData, final int length, final int retryCount, final int rnrRetryCount)
    {
        VerbsException.check(LibRdmaCm.rdma_connect(id,
            connParam(privateData, length, MAX_CONNECT_PRIVATE_DATA, retryCount, rnrRetryCount)), "rdma_connect");
    }

    /** {@code rdma_accept} of a request id, after {@link #createQueuePair}: ESTABLISHED follows. */
    public void accept(final byte[] privateData, final int length, final int retryCount, final int rnrRetryCount)
    {
        VerbsException.check(LibRdmaCm.rdma_accept(id,
            connParam(privateData, length, MAX_ACCEPT_PRIVATE_DATA, retryCount, rnrRetryCount)), "rdma_accept");
    }

    /** {@code rdma_reject} of a request id, with private data telling the peer why. */
    public void reject(final byte[] privateData, final int length)
    {
        if (length > 148)
        {
            throw new IllegalArgumentException("reject private data of " + length + " bytes, at most 148");
        }
        view.putBytes(PRIVATE_DATA, privateData, 0, length);
        VerbsException.check(LibRdmaCm.rdma_reject(id, length == 0 ? 0 : scratch.address() + PRIVATE_DATA, (byte)length),
            "rdma_reject");
    }

    /** {@code rdma_disconnect}: moves the QP to the error state (outstanding WRs flush) and DISCONNECTED follows on both sides. */
    public int disconnect()
    {
        return LibRdmaCm.rdma_disconnect(id) == 0 ? 0 : com.sun.jna.Native.getLastError();
    }

    /** Destroys the QP (if any) and the id. Ack every event of this id first. Idempotent. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (queuePair != null)
        {
            LibRdmaCm.rdma_destroy_qp(id);
            queuePair = null;
        }
        LibRdmaCm.rdma_destroy_id(id);
    }
}
