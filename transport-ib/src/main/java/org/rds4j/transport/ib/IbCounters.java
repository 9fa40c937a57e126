package org.rds4j.transport.ib;

import org.agrona.concurrent.status.AtomicCounter;
import org.rds4j.core.spi.TransportCounters;

/**
 * The IB transport's counters, registered with the stack's so that {@code counters()} and {@code rds info}
 * show them. Where the kernel's rds_ib statistics count the same event, the name is the kernel's. Each counter
 * has one writing thread (the agent), so increments are ordered writes.
 */
final class IbCounters
{
    /** ibv_post_send calls; each posts a chain of fragments. */
    final AtomicCounter postSend;
    /** ibv_post_recv calls; each reposts a batch of receive buffers. */
    final AtomicCounter postRecv;
    /** ibv_poll_cq calls. */
    final AtomicCounter pollCq;
    /** ibv_req_notify_cq calls: a completion queue armed before the agent stopped polling it. */
    final AtomicCounter reqNotifyCq;
    /** Completion-channel events taken. */
    final AtomicCounter cqEvent;
    /** Fragments posted. */
    final AtomicCounter fragmentsSent;
    /** Fragments received. */
    final AtomicCounter fragmentsReceived;
    /** A frame waited for send credits (kernel {@code ib_tx_throttle}). */
    final AtomicCounter txThrottle;
    /** A frame waited for a free send buffer (kernel {@code ib_tx_ring_full}). */
    final AtomicCounter txRingFull;
    /** An ack-only frame waited because one was in flight (kernel {@code ib_ack_send_delayed}). */
    final AtomicCounter ackSendDelayed;
    /**
     * Both nodes connected at once and one request lost: ours was rejected, or the peer's was, because the
     * connection from the lower address wins (kernel {@code ib_connect_raced}).
     */
    final AtomicCounter connectRaced;

    IbCounters(final TransportCounters counters)
    {
        postSend = counters.newTransportCounter("ib_post_send");
        postRecv = counters.newTransportCounter("ib_post_recv");
        pollCq = counters.newTransportCounter("ib_poll_cq");
        reqNotifyCq = counters.newTransportCounter("ib_req_notify_cq");
        cqEvent = counters.newTransportCounter("ib_cq_event");
        fragmentsSent = counters.newTransportCounter("ib_fragments_sent");
        fragmentsReceived = counters.newTransportCounter("ib_fragments_received");
        txThrottle = counters.newTransportCounter("ib_tx_throttle");
        txRingFull = counters.newTransportCounter("ib_tx_ring_full");
        ackSendDelayed = counters.newTransportCounter("ib_ack_send_delayed");
        connectRaced = counters.newTransportCounter("ib_connect_raced");
    }
}
