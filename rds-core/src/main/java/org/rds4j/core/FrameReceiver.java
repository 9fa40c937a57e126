package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;

/**
 * The generic receive path of one connection, as the kernel's {@code rds_recv_incoming}: takes a validated
 * frame from one of its paths and dispatches it: the congestion map to the stack, the piggybacked ack and the
 * sequence rules to the path, then the probe, ping and pong, or the payload to the socket bound to its port.
 * Agent thread only.
 */
final class FrameReceiver
{
    private final PathHost host;
    private final StackCounters counters;
    private final Connection connection;
    /** The peer's sending ports as socket addresses, made once each. */
    private final Int2ObjectHashMap<InetSocketAddress> senderAddresses = new Int2ObjectHashMap<>();
    // A stream's frames mostly come from one port to one socket: the last of each, to skip the maps' lookups.
    private int recentSport = -1;
    private InetSocketAddress recentSender;
    private int recentDport = -1;
    private RdsSocketImpl recentSocket;

    /**
     * @param host       the stack.
     * @param connection the connection whose frames it takes.
     */
    FrameReceiver(final PathHost host, final Connection connection)
    {
        this.host = host;
        this.counters = host.counters();
        this.connection = connection;
    }

    /**
     * A transport received a complete frame on {@code path} that passed {@link RdsHeader#validate}.
     *
     * @param path   the path it came on.
     * @param buffer holds the frame.
     * @param offset of its header; the payload follows it.
     * @param batched the frame is one of a batch the transport ends ({@link PathHost#batchEnd}).
     */
    void onFrame(final ConnPath path, final DirectBuffer buffer, final int offset, final boolean batched)
    {
        path.onFrameArrived();
        // each field read once (every read of a buffer is bounds checked): the flags, ack, sequence, and the length
        // with both ports in one word
        final int flags = RdsHeader.flags(buffer, offset);
        if ((flags & RdsHeader.FLAG_CONG_BITMAP) != 0)
        {
            counters.congUpdateReceived.incrementOrdered();
            host.onPeerCongestionMap(connection.remoteAddress(), connection.peerMap(), buffer, offset + RdsHeader.LENGTH);
            return;
        }
        final long ack = RdsHeader.ack(buffer, offset);
        if (ack != 0)
        {
            path.onPeerAck(ack);
        }
        final long sequence = RdsHeader.sequence(buffer, offset);
        final long lengthAndPorts = RdsHeader.lengthAndPorts(buffer, offset);
        if (RdsHeader.isAckOnly(sequence, lengthAndPorts, flags))
        {
            counters.recvAckOnly.incrementOrdered();
            return;
        }

        final long length = RdsHeader.lengthOf(lengthAndPorts);
        // sequence 0 marks an unsequenced frame (the handshake probe): it moves neither acks nor nextRx
        if (sequence != 0 && !path.acks().accept(sequence, flags, length, host.nowNs(), host.cycle()))
        {
            return;
        }

        final int sport = RdsHeader.sportOf(lengthAndPorts);
        final int dport = RdsHeader.dportOf(lengthAndPorts);
        if (dport == 0)
        {
            if (sport == RdsHeader.PROBE_PORT)
            {
                path.onHandshake(RdsHeader.generation(buffer, offset));
                if (sequence != 0)
                {
                    // a heartbeat or a kernel's probe, which waits for the pong; rds4j's handshake probe needs none
                    path.sender().queueControl(0, RdsHeader.PROBE_PORT);
                }
            }
            else if (sport != 0)
            {
                counters.recvPing.incrementOrdered();
                path.sender().queueControl(0, sport);
                counters.sendPong.incrementOrdered();
            }
            return;
        }
        if (dport == RdsHeader.PROBE_PORT)
        {
            path.onHandshake(RdsHeader.generation(buffer, offset));
            return;
        }
        final RdsSocketImpl socket = socketFor(dport);
        if (socket == null)
        {
            counters.recvDropNoSock.incrementOrdered();
            return;
        }
        host.deliver(socket, senderAddress(sport), buffer, offset + RdsHeader.LENGTH, (int)length, batched);
    }

    private RdsSocketImpl socketFor(final int dport)
    {
        final RdsSocketImpl recent = recentSocket;
        if (recent != null && dport == recentDport && recent.isOpen())
        {
            return recent; // an open socket keeps its port: no other can have it meanwhile
        }
        RdsSocketImpl socket = connection.local.sockets.get(dport);
        if (socket == null || !socket.isOpen())
        {
            // a bind may be on its way to the stack: a bound port has its socket from the moment bind returns
            final RdsSocketImpl bound = host.boundFor(connection.local, dport);
            if (bound != null)
            {
                socket = bound;
            }
        }
        if (socket != null)
        {
            recentSocket = socket;
            recentDport = dport;
        }
        return socket;
    }

    private InetSocketAddress senderAddress(final int sport)
    {
        if (sport == recentSport)
        {
            return recentSender;
        }
        InetSocketAddress address = senderAddresses.get(sport);
        if (address == null)
        {
            address = new InetSocketAddress(connection.remoteAddress(), sport);
            senderAddresses.put(sport, address);
        }
        recentSport = sport;
        recentSender = address;
        return address;
    }
}
