package org.rds4j.core;

import org.agrona.DirectBuffer;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.Transport;
import org.rds4j.core.wire.CongestionMap;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/** A stack for connection-path tests: time and duty cycle set by the test; releases and callbacks counted. */
final class FakePathHost implements PathHost
{
    static final int GENERATION = 0x5eed;

    final StackCounters counters = new StackCounters();
    final MessagePool pool = new MessagePool(counters.poolAlloc);
    final RdsStackConfig config = RdsStackConfig.builder().name("fake").build();
    long nowNs = 1_000_000_000L;
    long cycle = 1;
    int released;
    int releasedSent;
    int bytesReleased;
    int peerUps;
    int peerDowns;
    int congestionMaps;

    /** Moves the clock and starts the next duty cycle. */
    void advance(final long ns)
    {
        nowNs += ns;
        cycle++;
    }

    @Override
    public long nowNs()
    {
        return nowNs;
    }

    @Override
    public long cycle()
    {
        return cycle;
    }

    @Override
    public StackCounters counters()
    {
        return counters;
    }

    @Override
    public RdsStackConfig config()
    {
        return config;
    }

    @Override
    public int generation()
    {
        return GENERATION;
    }

    @Override
    public MessagePool pool()
    {
        return pool;
    }

    @Override
    public void releaseMessage(final Message message)
    {
        released++;
        pool.release(message);
    }

    @Override
    public void releaseSent(final Message message)
    {
        releasedSent++;
        pool.release(message);
    }

    @Override
    public void releaseAcked(final Message message)
    {
        releaseSent(message);
    }

    @Override
    public void releaseAckedDone()
    {
    }

    /** Bytes of appended frames released. */
    long appendedBytesReleased;

    @Override
    public void releaseBytes(final Message message)
    {
        bytesReleased++;
    }

    @Override
    public void releaseAppendedBytes(final RdsSocketImpl socket, final long bytes)
    {
        appendedBytesReleased += bytes;
    }

    @Override
    public boolean isLoopback(final Transport transport)
    {
        return false;
    }

    @Override
    public void onPeerUp(final Connection connection)
    {
        peerUps++;
    }

    @Override
    public void onPeerDown(final Connection connection)
    {
        peerDowns++;
    }

    @Override
    public void deliver(
        final RdsSocketImpl socket, final InetSocketAddress sender, final DirectBuffer buffer, final int offset,
        final int length, final boolean batched)
    {
        throw new AssertionError("no socket is bound in these tests");
    }

    @Override
    public void batchEnd()
    {
    }

    @Override
    public void onPeerCongestionMap(
        final InetAddress peer, final CongestionMap peerMap, final DirectBuffer buffer, final int offset)
    {
        congestionMaps++;
    }

    @Override
    public RdsSocketImpl boundFor(final LocalEndpoint endpoint, final int port)
    {
        return null;
    }
}
