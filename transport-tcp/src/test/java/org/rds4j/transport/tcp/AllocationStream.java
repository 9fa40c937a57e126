package org.rds4j.transport.tcp;

import org.rds4j.RdsClaim;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.core.test.Await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Messages of one size from {@code tx}, counted as they reach {@code rx}, for the allocation tests
 * ({@link SteadyStateAllocationTest}, {@link DriverAllocationTest}). Allocates nothing as it streams.
 */
final class AllocationStream
{
    private static final long DRAIN_TIMEOUT_NS = 10_000_000_000L;

    private final RdsSocket tx;
    private final RdsSocket rx;
    private final ByteBuffer payload;
    private final RdsMessageHandler handler;
    private final RdsClaim claim = new RdsClaim();
    private long sent;
    private long received;

    AllocationStream(final RdsSocket tx, final RdsSocket rx, final int size)
    {
        this.tx = tx;
        this.rx = rx;
        this.payload = ByteBuffer.allocateDirect(size);
        this.handler = (from, message) -> received++;
    }

    /**
     * Sends to an address where nobody listens until the send buffer is full.
     *
     * @param dead the address.
     * @return messages admitted.
     */
    long fillWindowToDeadPeer(final InetSocketAddress dead) throws IOException
    {
        long admitted = 0;
        while (true)
        {
            payload.clear();
            final int result = tx.send(payload, dead);
            if (result >= 0)
            {
                admitted++;
            }
            else
            {
                assertEquals(RdsResult.EAGAIN, result, RdsResult.name(result));
                if (tx.sendQueuedBytes() >= tx.getOption(RdsOptions.SO_SNDBUF))
                {
                    return admitted;
                }
                Thread.onSpinWait(); // the hand-off queue is full: the agent is taking messages
            }
        }
    }

    /**
     * Sends to {@code rx}, which does not read, until its port is congested, and waits until the receiving
     * stack has all that was sent: the deepest backlog its socket's queue can see (messages keep coming after
     * the port is congested, up to the sender's send buffer), which it grows to and keeps. Then reads all.
     */
    void fillReceiveBufferAndDrain() throws IOException
    {
        while (true)
        {
            payload.clear();
            final int result = tx.send(payload, rx.localAddress());
            if (result >= 0)
            {
                sent++;
            }
            else if (result == RdsResult.ENOBUFS)
            {
                break;
            }
            else
            {
                assertEquals(RdsResult.EAGAIN, result, RdsResult.name(result));
                Thread.onSpinWait(); // the send buffer is full until the receiving stack acks
            }
        }
        Await.until(() -> tx.sendQueuedBytes() == 0, "the congested port's messages acked");
        drain();
    }

    /** Sends {@code count} messages to {@code rx}, reading as it goes, then reads the rest. */
    void send(final long count) throws IOException
    {
        for (long i = 0; i < count; i++)
        {
            payload.clear();
            int result;
            while ((result = tx.send(payload, rx.localAddress())) < 0)
            {
                assertTrue(result == RdsResult.EAGAIN || result == RdsResult.ENOBUFS, RdsResult.name(result));
                rx.poll(handler, 1024);
                payload.clear();
            }
            sent++;
            rx.poll(handler, 16);
        }
        drain();
    }

    /** As {@link #send}, through {@link RdsSocket#tryClaim}: each payload written in place and committed. */
    void claim(final long count) throws IOException
    {
        final int size = payload.capacity();
        for (long i = 0; i < count; i++)
        {
            int result;
            while ((result = tx.tryClaim(size, rx.localAddress(), claim)) < 0)
            {
                assertTrue(result == RdsResult.EAGAIN || result == RdsResult.ENOBUFS, RdsResult.name(result));
                rx.poll(handler, 1024);
            }
            claim.buffer().putLong(claim.offset(), i);
            claim.commit();
            sent++;
            rx.poll(handler, 16);
        }
        drain();
    }

    /** @return messages sent so far. */
    long sent()
    {
        return sent;
    }

    /** @return messages received so far. */
    long received()
    {
        return received;
    }

    private void drain() throws IOException
    {
        final long deadline = System.nanoTime() + DRAIN_TIMEOUT_NS;
        while (received < sent)
        {
            if (System.nanoTime() - deadline > 0)
            {
                fail((sent - received) + " messages not received"); // a message built only then: it allocates
            }
            rx.poll(handler, 1024);
        }
        assertEquals(sent, received, "messages received");
    }
}
