package org.rds4j;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * Events of a socket, called on the application thread that receives or polls on that socket, before the
 * messages queued after the event. Set with {@link RdsSocket#setNotificationListener}.
 */
public interface RdsNotificationListener
{
    /**
     * A destination that refused a send with {@link RdsResult#ENOBUFS} while {@link RdsOptions#RDS_CONG_MONITOR}
     * was on is no longer congested: sends to it may succeed again.
     *
     * @param destination the destination address and port.
     */
    default void onUncongested(final InetSocketAddress destination)
    {
    }

    /**
     * The connection from the socket's local address to a peer came up.
     *
     * @param peer the peer node's address.
     */
    default void onPeerUp(final InetAddress peer)
    {
    }

    /**
     * The connection from the socket's local address to a peer went down. Messages queued to it stay
     * queued and are sent (again, where unacknowledged) when it reconnects, unless cancelled with
     * {@link RdsSocket#cancelSentTo}.
     *
     * @param peer the peer node's address.
     */
    default void onPeerDown(final InetAddress peer)
    {
    }
}
