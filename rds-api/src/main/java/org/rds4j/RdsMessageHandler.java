package org.rds4j;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Receives messages without a copy, from {@link RdsSocket#poll(RdsMessageHandler, int)}.
 */
@FunctionalInterface
public interface RdsMessageHandler
{
    /**
     * Called once per message, on the thread that polls.
     *
     * @param sender  the address and port the message was sent from; a cached, immutable object.
     * @param payload the message, read-only, from its position to its limit. It is valid only during this
     *                call: copy what must outlive it.
     */
    void onMessage(InetSocketAddress sender, ByteBuffer payload);
}
