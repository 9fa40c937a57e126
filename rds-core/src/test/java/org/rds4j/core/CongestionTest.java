package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * {@link Congestion} with plain objects: the exact thresholds that mark and release a local port, what a
 * peer's update frees, whom that notifies (only monitors refused by the port, once) and wakes, and the
 * send-side check.
 */
class CongestionTest
{
    private static final InetAddress LOCAL = ip("10.1.0.1");
    private static final InetAddress PEER = ip("10.1.0.2");
    private static final InetAddress OTHER_PEER = ip("10.1.0.3");
    private static final int RCVBUF = 1000;

    private final StackCounters counters = new StackCounters();
    private final LocalEndpoint endpoint = new LocalEndpoint(LOCAL);
    private final Map<InetAddress, CongestionMap> maps = new HashMap<>();
    private final List<FakeSocket> sockets = new ArrayList<>();
    private final Congestion congestion = new Congestion(sockets);
    private final UnsafeBuffer update = new UnsafeBuffer(ByteBuffer.allocateDirect(CongestionMap.BYTES));

    CongestionTest()
    {
        maps.put(LOCAL, endpoint.congestionMap); // as the stack's: a send to a local port tests the endpoint's map
    }

    /** A bound socket whose receive queue the test fills and drains by setting a number. */
    private final class FakeSocket implements Congestion.Member
    {
        private final InetSocketAddress local;
        private final SocketAgentState state = new SocketAgentState();
        private final Congestion.Sender sender = new Congestion.Sender(maps::get, counters.sendCongBlocked);
        private final List<Notification> notifications = new ArrayList<>();
        private long queued;
        private int receiveBuffer = RCVBUF;
        private int senderWakeUps;

        FakeSocket(final int port)
        {
            this.local = new InetSocketAddress(LOCAL, port);
            sockets.add(this);
        }

        @Override
        public LocalEndpoint endpoint()
        {
            return endpoint;
        }

        @Override
        public InetSocketAddress localAddress()
        {
            return local;
        }

        @Override
        public long receiveQueuedBytes()
        {
            return queued;
        }

        @Override
        public int receiveBufferBytes()
        {
            return receiveBuffer;
        }

        @Override
        public SocketAgentState agentState()
        {
            return state;
        }

        @Override
        public Congestion.Sender congestion()
        {
            return sender;
        }

        @Override
        public void wakeSenders()
        {
            senderWakeUps++;
        }

        @Override
        public void notifyListener(final Notification notification)
        {
            notifications.add(notification);
        }

        /** As the agent's deliver: the queue grows by {@code bytes}. */
        void receive(final long bytes)
        {
            queued += bytes;
            congestion.onReceived(this, queued);
        }

        /** As a non-blocking send that returns ENOBUFS to its caller ({@link SocketBase#refusalReturned}). */
        void refusedBy(final InetSocketAddress destination)
        {
            if (sender.onRefusalReturned(destination))
            {
                notifications.add(new Notification(Notification.Kind.UNCONGESTED, destination));
            }
        }
    }

    private static Notification uncongested(final InetAddress address, final int port)
    {
        return new Notification(Notification.Kind.UNCONGESTED, new InetSocketAddress(address, port));
    }

    /** Applies a peer's update with exactly these ports congested. */
    private void peerUpdate(final InetAddress peer, final int... congestedPorts)
    {
        final CongestionMap sent = new CongestionMap();
        for (final int port : congestedPorts)
        {
            sent.set(port);
        }
        sent.copyTo(update, 0);
        congestion.onPeerMap(peer, maps.computeIfAbsent(peer, a -> new CongestionMap()), update, 0);
    }

    @Test
    void aPortIsMarkedWhenTheQueueExceedsReceiveBufferNotWhenItReachesIt()
    {
        final FakeSocket socket = new FakeSocket(5000);
        socket.receive(RCVBUF);
        assertFalse(endpoint.congestionMap.isCongested(5000), "queue == SO_RCVBUF");
        assertFalse(socket.state.congested);
        assertFalse(congestion.hasCongestedSockets());

        socket.receive(1);
        assertTrue(endpoint.congestionMap.isCongested(5000), "queue == SO_RCVBUF + 1");
        assertTrue(socket.state.congested);
        assertTrue(congestion.hasCongestedSockets());
        assertFalse(endpoint.congestionMap.isCongested(5001));

        final long version = endpoint.congestionMap.version();
        socket.receive(RCVBUF);
        assertEquals(version, endpoint.congestionMap.version(), "a marked port is marked once");
    }

    @Test
    void aPortIsReleasedWhenTheQueueFallsBelowHalfOfReceiveBufferNotAtHalf()
    {
        final FakeSocket socket = new FakeSocket(5000);
        socket.receive(RCVBUF + 1);

        socket.queued = RCVBUF / 2;
        assertFalse(Congestion.mayRelease(socket, socket.queued), "a reader at half does not wake the agent");
        assertEquals(0, congestion.releaseDrainedPorts());
        assertTrue(endpoint.congestionMap.isCongested(5000), "queue == SO_RCVBUF / 2");

        socket.queued = RCVBUF / 2 - 1;
        assertTrue(Congestion.mayRelease(socket, socket.queued), "a reader below half wakes the agent");
        assertEquals(1, congestion.releaseDrainedPorts());
        assertFalse(endpoint.congestionMap.isCongested(5000), "queue == SO_RCVBUF / 2 - 1");
        assertFalse(socket.state.congested);
        assertFalse(congestion.hasCongestedSockets());
        assertFalse(Congestion.mayRelease(socket, 0), "nothing to release");
        assertEquals(0, congestion.releaseDrainedPorts());
    }

    @Test
    void anOddReceiveBufferHalvesDown()
    {
        final FakeSocket socket = new FakeSocket(5000);
        socket.receiveBuffer = 1001;
        socket.receive(1002);
        socket.queued = 500;
        assertEquals(0, congestion.releaseDrainedPorts(), "1001 / 2 is 500");
        socket.queued = 499;
        assertEquals(1, congestion.releaseDrainedPorts());
    }

    @Test
    void releasingALocalPortWakesEverySenderAndNotifiesOnlyMonitorsRefusedByIt()
    {
        final FakeSocket receiver = new FakeSocket(5000);
        final FakeSocket stillFull = new FakeSocket(5001);
        final FakeSocket refused = new FakeSocket(6000);
        final FakeSocket refusedElsewhere = new FakeSocket(6001);
        final FakeSocket notMonitoring = new FakeSocket(6002);
        receiver.receive(RCVBUF + 1);
        stillFull.receive(RCVBUF + 1);
        refused.sender.monitor(true);
        refusedElsewhere.sender.monitor(true);
        refused.refusedBy(receiver.local);
        refusedElsewhere.refusedBy(stillFull.local);
        notMonitoring.refusedBy(receiver.local);

        receiver.queued = 0;
        assertEquals(1, congestion.releaseDrainedPorts());
        assertEquals(List.of(uncongested(LOCAL, 5000)), refused.notifications);
        assertEquals(List.of(), refusedElsewhere.notifications);
        assertEquals(List.of(), notMonitoring.notifications);
        assertEquals(List.of(), receiver.notifications);
        for (final FakeSocket socket : sockets)
        {
            assertEquals(1, socket.senderWakeUps, socket.local.toString());
        }
    }

    @Test
    void unbindReleasesAMarkedPortOnce()
    {
        final FakeSocket receiver = new FakeSocket(5000);
        final FakeSocket sender = new FakeSocket(6000);
        receiver.receive(RCVBUF + 1);
        sender.sender.monitor(true);
        sender.refusedBy(receiver.local);

        sockets.remove(receiver); // the agent forgets the socket first
        congestion.onUnbind(receiver);
        assertFalse(endpoint.congestionMap.isCongested(5000));
        assertFalse(receiver.state.congested);
        assertFalse(congestion.hasCongestedSockets());
        assertEquals(List.of(uncongested(LOCAL, 5000)), sender.notifications);
        assertEquals(1, sender.senderWakeUps);
        assertEquals(0, receiver.senderWakeUps);

        congestion.onUnbind(receiver);
        assertEquals(1, sender.notifications.size());
        assertEquals(1, sender.senderWakeUps);
    }

    @Test
    void aPeerUpdateNotifiesEachFreedRefusedDestinationOnceAndWakesSendersOnChange()
    {
        final FakeSocket a = new FakeSocket(6000);
        final FakeSocket b = new FakeSocket(6001);
        a.sender.monitor(true);
        b.sender.monitor(true);
        peerUpdate(OTHER_PEER, 7);
        peerUpdate(PEER, 7, 9);
        assertEquals(2, a.senderWakeUps, "a change wakes senders (one per peer's update)");
        assertTrue(a.sender.refuses(new InetSocketAddress(PEER, 7)));
        a.refusedBy(new InetSocketAddress(PEER, 7));
        a.refusedBy(new InetSocketAddress(PEER, 7));
        b.refusedBy(new InetSocketAddress(OTHER_PEER, 7));

        peerUpdate(PEER, 9);
        assertEquals(List.of(uncongested(PEER, 7)), a.notifications, "port 7 freed");
        assertEquals(List.of(), b.notifications, "b was refused by another peer's port 7");
        assertEquals(3, a.senderWakeUps);
        assertEquals(3, b.senderWakeUps);

        peerUpdate(PEER, 9);
        assertEquals(1, a.notifications.size(), "no change, no notification");
        assertEquals(3, a.senderWakeUps, "no change, no wake-up");

        peerUpdate(PEER, 7);
        peerUpdate(PEER);
        assertEquals(1, a.notifications.size(), "a refusal is notified once; 7 was not refused again");
        assertEquals(5, b.senderWakeUps);
    }

    /**
     * A refusal remembered only after the update that freed its port (a driver's conductor runs the client's
     * {@code CONG_WAIT} late; an application thread is descheduled between its test and its record): the update
     * found nothing to notify, so the refusal's second look does, once, and it is not remembered for a later change.
     */
    @Test
    void aRefusalReturnedAfterItsPortFreedIsNotifiedAtOnceAndOnlyOnce()
    {
        final FakeSocket socket = new FakeSocket(6000);
        final InetSocketAddress peer7 = new InetSocketAddress(PEER, 7);
        socket.sender.monitor(true);
        peerUpdate(PEER, 7);
        assertTrue(socket.sender.refuses(peer7));
        peerUpdate(PEER);
        assertEquals(List.of(), socket.notifications, "nothing remembered yet");

        socket.refusedBy(peer7);
        assertEquals(List.of(uncongested(PEER, 7)), socket.notifications);
        peerUpdate(PEER, 7);
        peerUpdate(PEER);
        assertEquals(1, socket.notifications.size(), "taken back at once: the next change notifies nothing");

        peerUpdate(PEER, 7);
        socket.refusedBy(peer7);
        assertEquals(1, socket.notifications.size(), "still congested: remembered, not notified");
        peerUpdate(PEER);
        assertEquals(2, socket.notifications.size(), "then notified by the update that frees it");
    }

    @Test
    void onlyARefusalSeenWhileMonitoringIsRememberedAndTurningTheMonitorOffForgets()
    {
        final FakeSocket socket = new FakeSocket(6000);
        peerUpdate(PEER, 7, 8);
        socket.refusedBy(new InetSocketAddress(PEER, 7));
        socket.sender.monitor(true);
        socket.refusedBy(new InetSocketAddress(PEER, 8));
        socket.sender.monitor(false);
        assertFalse(socket.sender.monitor());
        peerUpdate(PEER);
        assertEquals(List.of(), socket.notifications);
    }

    @Test
    void theSenderRefusesOnlyMarkedPortsOfTheDestinationsPeerAndCountsEachRefusal()
    {
        final FakeSocket socket = new FakeSocket(6000);
        final InetSocketAddress peer7 = new InetSocketAddress(PEER, 7);
        assertFalse(socket.sender.refuses(peer7), "no map known for the peer");
        peerUpdate(PEER, 7);
        peerUpdate(OTHER_PEER, 8);
        assertTrue(socket.sender.refuses(peer7));
        assertTrue(socket.sender.refuses(peer7));
        assertFalse(socket.sender.refuses(new InetSocketAddress(PEER, 8)));
        assertFalse(socket.sender.refuses(new InetSocketAddress(OTHER_PEER, 7)), "another peer's map");
        assertTrue(socket.sender.refuses(new InetSocketAddress(OTHER_PEER, 8)));
        assertTrue(socket.sender.refuses(peer7), "back to the first peer");
        assertEquals(4, counters.sendCongBlocked.get());
        peerUpdate(PEER);
        assertFalse(socket.sender.refuses(peer7));
        assertEquals(4, counters.sendCongBlocked.get());
    }
}
