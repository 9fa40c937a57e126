package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The congestion policy of a stack, in one place (the role of the kernel's {@code net/rds/cong.c}); the maps
 * themselves are {@link CongestionMap} bitmaps, one per address.
 * <p>
 * Congestion is advisory, as in the kernel. A socket whose receive queue grows beyond its {@code SO_RCVBUF}
 * marks its port in its local address's map, which the connections send to their peers; the mark is released
 * once the queue has fallen below half of {@code SO_RCVBUF}. A send to a port its peer marked is refused with
 * ENOBUFS; a non-blocking sender with {@code RDS_CONG_MONITOR} on is told when that port is freed. A port
 * freed, locally or by a peer's update, wakes every blocked sender.
 * <p>
 * Threads: this object is the agent's, all its methods are agent only. Each socket's send side is a
 * {@link Sender}, which application threads use to check a send and the agent to notify freed ports.
 */
final class Congestion
{
    /** A bound socket as congestion sees it: implemented by {@link RdsSocketImpl}, by plain objects in tests. */
    interface Member
    {
        /** @return the local address the socket is bound to: its congestion map. */
        LocalEndpoint endpoint();

        /** @return the bound address and port. */
        InetSocketAddress localAddress();

        /** @return the bytes in the socket's receive queue; any thread. */
        long receiveQueuedBytes();

        /** @return the socket's {@code SO_RCVBUF} in bytes; any thread. */
        int receiveBufferBytes();

        /** @return the socket's agent-side state, which holds whether its port is marked. */
        SocketAgentState agentState();

        /** @return the socket's send side of congestion. */
        Sender congestion();

        /** Agent: unparks the socket's blocked senders. */
        void wakeSenders();

        /**
         * Agent: queues an event for the socket's listener.
         *
         * @param notification the event.
         */
        void notifyListener(Notification notification);
    }

    private final List<? extends Member> sockets;
    private final ArrayList<Member> congestedSockets = new ArrayList<>();
    private final CongestionMap.PortConsumer onPeerPortFreed = this::onPeerPortFreed;
    /** The peer whose update is being applied: the address {@link #onPeerPortFreed} reports. */
    private InetAddress updatingPeer;

    /**
     * @param sockets the agent's bound sockets, which freed ports notify and wake; the agent keeps the list.
     */
    Congestion(final List<? extends Member> sockets)
    {
        this.sockets = sockets;
    }

    /**
     * Agent: a message has been queued on a socket; marks its port congested when the queue holds more than
     * {@code SO_RCVBUF}.
     *
     * @param socket      the receiving socket.
     * @param queuedBytes the bytes its receive queue holds now.
     */
    void onReceived(final Member socket, final long queuedBytes)
    {
        final SocketAgentState state = socket.agentState();
        if (!state.congested && queuedBytes > socket.receiveBufferBytes())
        {
            state.congested = true;
            congestedSockets.add(socket);
            socket.endpoint().congestionMap.set(socket.localAddress().getPort());
        }
    }

    /** @return true while a socket's port is marked: the agent must then look every cycle whether it drained. */
    boolean hasCongestedSockets()
    {
        return !congestedSockets.isEmpty();
    }

    /**
     * Agent: releases the ports of sockets whose receive queue has fallen below half of {@code SO_RCVBUF}.
     *
     * @return the number of ports released.
     */
    int releaseDrainedPorts()
    {
        int released = 0;
        for (int i = congestedSockets.size() - 1; i >= 0; i--)
        {
            final Member socket = congestedSockets.get(i);
            if (isDrained(socket.receiveQueuedBytes(), socket.receiveBufferBytes()))
            {
                congestedSockets.remove(i);
                socket.agentState().congested = false;
                clearLocal(socket.endpoint(), socket.localAddress().getPort());
                released++;
            }
        }
        return released;
    }

    /**
     * Application threads, having taken a message off a socket's receive queue: whether the agent must run now
     * to release the socket's marked port, the queue having fallen below half of {@code SO_RCVBUF}.
     *
     * @param socket      the socket.
     * @param queuedBytes the bytes its receive queue holds now.
     * @return true to wake the agent.
     */
    static boolean mayRelease(final Member socket, final long queuedBytes)
    {
        return socket.agentState().congested && isDrained(queuedBytes, socket.receiveBufferBytes());
    }

    private static boolean isDrained(final long queuedBytes, final int receiveBufferBytes)
    {
        return queuedBytes < receiveBufferBytes / 2;
    }

    /**
     * Agent: a socket is unbound (already gone from the agent's sockets); releases its port if marked.
     *
     * @param socket the socket.
     */
    void onUnbind(final Member socket)
    {
        final SocketAgentState state = socket.agentState();
        if (state.congested)
        {
            state.congested = false;
            congestedSockets.remove(socket);
            clearLocal(socket.endpoint(), socket.localAddress().getPort());
        }
    }

    private void clearLocal(final LocalEndpoint endpoint, final int port)
    {
        if (endpoint.congestionMap.clear(port))
        {
            onPortFreed(endpoint.address, port);
            wakeBlockedSenders();
        }
    }

    /**
     * Agent: a peer sent its congestion map; stores it, notifies monitors of the ports it freed, and wakes
     * blocked senders if anything changed.
     *
     * @param peer    the peer's address.
     * @param peerMap the map kept for that address.
     * @param buffer  the update's payload.
     * @param offset  its first byte.
     */
    void onPeerMap(final InetAddress peer, final CongestionMap peerMap, final DirectBuffer buffer, final int offset)
    {
        updatingPeer = peer;
        if (peerMap.replace(buffer, offset, onPeerPortFreed))
        {
            wakeBlockedSenders();
        }
        updatingPeer = null;
    }

    private void onPeerPortFreed(final int port)
    {
        onPortFreed(updatingPeer, port);
    }

    private void onPortFreed(final InetAddress address, final int port)
    {
        for (int i = 0, n = sockets.size(); i < n; i++)
        {
            final Member socket = sockets.get(i);
            socket.congestion().onPortFreed(address, port, socket);
        }
    }

    private void wakeBlockedSenders()
    {
        for (int i = 0, n = sockets.size(); i < n; i++)
        {
            sockets.get(i).wakeSenders();
        }
    }

    /**
     * A socket's send side of congestion (the kernel's {@code rds_cong_wait} and the socket's
     * {@code rs_cong_mask}): whether a destination's peer has marked it congested, and, with
     * {@code RDS_CONG_MONITOR} on, the destinations a non-blocking send was refused, to notify when they free.
     * <p>
     * Threads: application threads check and record (a driver's conductor records for its clients); the agent
     * reports freed ports. In a driver's client the refusals recorded are those the driver was told of and has not
     * notified yet ({@link #awaitNotification}, {@link #notified}): the client sees no updates.
     */
    static final class Sender
    {
        private final Function<InetAddress, CongestionMap> maps;
        private final AtomicCounter refusals;
        /** Added by the refused threads; removed by whoever notifies (the agent, a refusal's second look). */
        private final Set<InetSocketAddress> refusedDestinations = ConcurrentHashMap.newKeySet();
        private volatile boolean monitor;
        /** The congestion map of the last destination address checked; replaced (never mutated) on change. */
        private volatile PeerMap lastPeerMap;

        private record PeerMap(InetAddress address, CongestionMap map)
        {
        }

        /**
         * @param maps     the congestion map of an address, or null if none is known; any thread.
         * @param refusals counts sends refused because the destination port is congested.
         */
        Sender(final Function<InetAddress, CongestionMap> maps, final AtomicCounter refusals)
        {
            this.maps = maps;
            this.refusals = refusals;
        }

        /**
         * Application threads: whether a send must be refused (ENOBUFS) because the destination's peer marked
         * its port congested; counts each refusal.
         *
         * @param destination the send's destination.
         * @return true to refuse.
         */
        boolean refuses(final InetSocketAddress destination)
        {
            final CongestionMap peerMap = peerMap(destination.getAddress());
            if (peerMap != null && peerMap.isCongested(destination.getPort()))
            {
                refusals.increment();
                return true;
            }
            return false;
        }

        private CongestionMap peerMap(final InetAddress address)
        {
            final PeerMap last = lastPeerMap;
            if (last != null && last.address == address)
            {
                return last.map;
            }
            final CongestionMap map = maps.apply(address);
            if (map != null)
            {
                lastPeerMap = new PeerMap(address, map);
            }
            return map;
        }

        /**
         * Application threads, and a driver's conductor for its client's: a non-blocking send returns ENOBUFS to
         * its caller. Only a refusal the caller sees is remembered (as the kernel's {@code rs_cong_mask}), and only
         * while monitoring. Once remembered, the port is tested again (as the kernel's {@code rds_cong_wait} does
         * after setting the mask): an update that freed it since the refusal found nothing to notify. The stores
         * and loads are volatile on both sides (the set here, the map's bits in the agent's update), so either the
         * update sees the refusal or this look sees the port free.
         *
         * @param destination the refused destination.
         * @return true if the port is free again and the refusal was taken back here: the caller notifies the
         *         socket's listener. The agent's {@link #onPortFreed} may find the refusal too; whichever removes
         *         it notifies, so the notification comes once.
         */
        boolean onRefusalReturned(final InetSocketAddress destination)
        {
            if (!monitor)
            {
                return false;
            }
            refusedDestinations.add(destination);
            final CongestionMap peerMap = peerMap(destination.getAddress());
            return (peerMap == null || !peerMap.isCongested(destination.getPort())) &&
                refusedDestinations.remove(destination);
        }

        /**
         * A driver's client, as a non-blocking send returns ENOBUFS: the driver remembers refusals (its agent sees
         * the updates), and this side tells it of one per destination until the driver's notification for it comes
         * ({@link #notified}), so that refusals before a notification share it, as they share the kernel's mask bit.
         *
         * @param destination the refused destination.
         * @return true if the driver must be told: monitoring, and none is outstanding for the destination.
         */
        boolean awaitNotification(final InetSocketAddress destination)
        {
            return monitor && refusedDestinations.add(destination);
        }

        /**
         * A driver's client's reader, before it queues the driver's notification that the destination's port is
         * free: the next refusal is told to the driver again.
         *
         * @param destination the destination the notification names.
         */
        void notified(final InetSocketAddress destination)
        {
            refusedDestinations.remove(destination);
        }

        /**
         * Any thread: sets {@code RDS_CONG_MONITOR}; turning it off forgets the refused destinations.
         *
         * @param on the option's value.
         */
        void monitor(final boolean on)
        {
            monitor = on;
            if (!on)
            {
                refusedDestinations.clear();
            }
        }

        /** @return {@code RDS_CONG_MONITOR}; any thread. */
        boolean monitor()
        {
            return monitor;
        }

        /**
         * Agent: a congested port became free; notifies the socket's listener if a send to it was refused
         * while monitoring, once per refusal remembered.
         *
         * @param address the address whose port freed: a peer's, or a local one.
         * @param port    the port.
         * @param socket  the socket this is the send side of.
         */
        void onPortFreed(final InetAddress address, final int port, final Member socket)
        {
            if (refusedDestinations.isEmpty())
            {
                return;
            }
            for (final InetSocketAddress refused : refusedDestinations)
            {
                // removed before it is notified: a refusal's second look (onRefusalReturned) may take it too
                if (refused.getPort() == port && refused.getAddress().equals(address) &&
                    refusedDestinations.remove(refused))
                {
                    socket.notifyListener(new Notification(Notification.Kind.UNCONGESTED, refused));
                }
            }
        }
    }
}
