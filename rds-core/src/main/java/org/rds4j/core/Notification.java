package org.rds4j.core;

import org.rds4j.RdsNotificationListener;

import java.net.InetSocketAddress;

/** An event queued on a socket for its listener. */
record Notification(Kind kind, InetSocketAddress address)
{
    enum Kind
    {
        UNCONGESTED, PEER_UP, PEER_DOWN
    }

    void deliverTo(final RdsNotificationListener listener)
    {
        switch (kind)
        {
            case UNCONGESTED: listener.onUncongested(address); break;
            case PEER_UP: listener.onPeerUp(address.getAddress()); break;
            case PEER_DOWN: listener.onPeerDown(address.getAddress()); break;
            default: throw new IllegalStateException(kind.toString());
        }
    }
}
