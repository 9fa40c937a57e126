package org.rds4j;

import java.net.InetAddress;

/**
 * A stack's peer events: the connection between a local address and a peer node came up or went down, whatever
 * socket uses it and without any socket polling. Set with {@link RdsStack#setPeerListener}. The same events reach
 * each socket bound to the local address as {@link RdsNotificationListener#onPeerUp} and
 * {@link RdsNotificationListener#onPeerDown} notifications.
 */
public interface RdsPeerListener
{
    /**
     * The connection from {@code local} to {@code peer} came up (its handshake completed).
     *
     * @param local the local address.
     * @param peer  the peer node's address.
     */
    void onPeerUp(InetAddress local, InetAddress peer);

    /**
     * The connection from {@code local} to {@code peer} went down. Messages queued to it stay queued and are
     * sent (again, where unacknowledged) when it reconnects.
     *
     * @param local the local address.
     * @param peer  the peer node's address.
     */
    void onPeerDown(InetAddress local, InetAddress peer);
}
