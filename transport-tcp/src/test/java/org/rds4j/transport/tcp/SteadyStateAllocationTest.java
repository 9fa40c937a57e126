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
 * The send path recycles its messages: once a full send window has been in flight, sending as much again
 * allocates no new message on the sending stack ({@code pool_alloc} stays flat).
 */
class SteadyStateAllocationTest
{
    private static final int TCP_PORT = 27020;

    @Test
    void sendingAfterWarmUpAllocatesNoMessages() throws Exception
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
                final ByteBuffer payload = ByteBuffer.allocateDirect(size);
                final int window = (int)(config.sendBufferBytes() / size);
                final long warmUp = 4L * window;
                send(tx, rx, handler, payload, warmUp);
                final long allocatedAfterWarmUp = a.counters().get("pool_alloc");
                send(tx, rx, handler, payload, 4L * window);
                assertEquals(allocatedAfterWarmUp, a.counters().get("pool_alloc"),
                    size + " B: the sender allocated messages after warm-up");
                assertTrue(allocatedAfterWarmUp > 0, "warm-up did allocate");
            }
            Await.until(() -> tx.sendQueuedBytes() == 0, "all acked");
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
