package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The send path recycles its messages: a socket never has more messages in flight than its send buffer admits
 * (bytes queued below {@code SO_SNDBUF}, so at most {@code SO_SNDBUF / size + 1}); once it has held that
 * many, and the threads that release them have stocked their per-thread caches (at most
 * {@code MessagePool.MAGAZINE_BYTES} of messages per size class each), sending any amount more allocates no
 * message on the sending stack ({@code pool_alloc} stays flat).
 */
class SteadyStateAllocationTest
{
    private static final int TCP_PORT = 27020;
    private static final InetSocketAddress DEAD = new InetSocketAddress("127.0.7.9", 5000);

    @Test
    void sendingAfterAFullWindowAllocatesNoMessages() throws Exception
    {
        final RdsStackConfig config = RdsStackConfig.builder().tcpPort(TCP_PORT).build();
        try (RdsStack a = RdsStack.open(config.toBuilder().name("alloc-a").build());
             RdsStack b = RdsStack.open(config.toBuilder().name("alloc-b").build()))
        {
            final RdsSocket tx = a.openSocket().bind(new InetSocketAddress("127.0.7.1", 5000));
            final RdsSocket rx = b.openSocket().bind(new InetSocketAddress("127.0.7.2", 5000));
            tx.configureBlocking(false);
            rx.configureBlocking(false);
            final long[] received = {0};
            final RdsMessageHandler handler = (from, payload) -> received[0]++;
            for (final int size : new int[] {64, 1024})
            {
                Await.until(() -> tx.sendQueuedBytes() == 0, "the previous phase acked");
                final ByteBuffer payload = ByteBuffer.allocateDirect(size);
                final long window = fillWindowToDeadPeer(tx, payload);
                assertEquals(config.sendBufferBytes() / size, window, "messages admitted: bytes queued below SO_SNDBUF");
                assertEquals(window, tx.cancelSentTo(DEAD));
                // the agent thread kept what it freed first in its own cache, out of this thread's reach: a second
                // full window makes up for those, and the agent frees all of that one to the shared queue
                assertEquals(window, fillWindowToDeadPeer(tx, payload));
                assertEquals(window, tx.cancelSentTo(DEAD));
                final long allocatedAfterWarmUp = a.counters().get("pool_alloc");
                send(tx, rx, handler, payload, 8 * window);
                assertEquals(allocatedAfterWarmUp, a.counters().get("pool_alloc"),
                    size + " B: the sender allocated messages after a full window had been recycled");
            }
            Await.until(() -> tx.sendQueuedBytes() == 0, "all acked");
        }
    }

    /** Sends to an address where nobody listens until the send buffer is full. @return messages admitted. */
    private static long fillWindowToDeadPeer(final RdsSocket tx, final ByteBuffer payload) throws Exception
    {
        long admitted = 0;
        while (true)
        {
            payload.clear();
            final int result = tx.send(payload, DEAD);
            if (result >= 0)
            {
                admitted++;
            }
            else
            {
                assertEquals(RdsResult.EAGAIN, result, RdsResult.name(result));
                if (tx.sendQueuedBytes() >= tx.getOption(org.rds4j.RdsOptions.SO_SNDBUF))
                {
                    return admitted;
                }
                Thread.onSpinWait(); // the hand-off queue is full: the agent is taking messages
            }
        }
    }

    private static void send(
        final RdsSocket tx, final RdsSocket rx, final RdsMessageHandler handler, final ByteBuffer payload, final long count)
        throws Exception
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
            rx.poll(handler, 16);
        }
    }
}
