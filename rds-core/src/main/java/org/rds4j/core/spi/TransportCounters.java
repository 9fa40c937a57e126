package org.rds4j.core.spi;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * The stack counters a transport updates, and its way to add counters of its own. Counters are agrona
 * {@link AtomicCounter}s; the agent thread increments them with ordered writes.
 */
public interface TransportCounters
{
    /** @return connections refused: no socket bound to the local address, a higher address, a duplicate. */
    AtomicCounter connRefused();

    /** @return connections refused, or connects not made, for a peer outside the allow-list. */
    AtomicCounter connRefusedNotAllowed();

    /** @return connections refused because their node pair connected faster than the configured rate. */
    AtomicCounter connRefusedRate();

    /** @return connections refused because the stack has as many peer connections as it may. */
    AtomicCounter connRefusedLimit();

    /** @return paths dropped for a frame that broke the protocol. */
    AtomicCounter connBadFrame();

    /** @return paths dropped for a frame left incomplete longer than the frame timeout. */
    AtomicCounter connFrameTimeout();

    /**
     * Adds a counter of the transport's own, shown with the stack's.
     *
     * @param name its name, prefixed with the transport's (e.g. {@code tcp_sndbuf_full}).
     * @return the counter.
     */
    AtomicCounter newTransportCounter(String name);
}
