package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.DriverServer;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.ThreadMeter;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A steady stream through a driver allocates nothing per message, on any thread that handles it: the sending and
 * polling application thread, both clients' readers, and the driver's conductor and agent ({@link ThreadMeter}
 * counts every heap byte). Two clients of one driver, each with a socket on an address of its own.
 * <p>
 * One exception, bounded by the backlog and not by the count of messages: a socket whose receive ring is full (the
 * driver's, when its client's reader falls behind for a moment; the client's, when the application does) queues
 * messages in pooled messages, and a pool grows to the deepest such backlog a run meets ({@code pool_alloc}),
 * which the warm-up cannot force: the driver hands messages to its client as fast as the client reads them, so
 * neither backlog forms while the application does not read. So the pools may grow, each by at most the deepest
 * backlog a socket can hold (its receive buffer and the sender's send buffer), and beyond their messages nothing is
 * allocated.
 */
class DriverAllocationTest
{
    private static final int TCP_PORT = 27040;
    private static final long MESSAGES = 600_000;
    /**
     * As in {@link SteadyStateAllocationTest}: one 16-byte object per message would make 16. A queue that grows once
     * to a deeper backlog than the warm-up saw (about 190 KiB, seen now and then) stays well under it.
     */
    private static final double MAX_HEAP_BYTES_PER_MESSAGE = 1.0;
    /** More than a pooled message's heap objects (the message, its buffer views): what each may cost. */
    private static final long POOLED_MESSAGE_HEAP_BYTES = 512;

    @Test
    void aSteadyStreamThroughADriverAllocatesNothingPerMessage(@TempDir final Path directory) throws Exception
    {
        final RdsStackConfig config = RdsStackConfig.builder()
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build()).build();
        try (DriverServer driver = DriverServer.start(config.toBuilder().name("dalloc-drv").build(), directory, false);
             RdsStack a = RdsStack.open(config.toBuilder().name("dalloc-a").driverDirectory(directory.toString()).build());
             RdsStack b = RdsStack.open(config.toBuilder().name("dalloc-b").driverDirectory(directory.toString()).build()))
        {
            final RdsSocket tx = a.openSocket().bind(new InetSocketAddress("127.0.8.1", 5000));
            final RdsSocket rx = b.openSocket().bind(new InetSocketAddress("127.0.8.2", 5000));
            tx.configureBlocking(false);
            rx.configureBlocking(false);
            // the driver's agent and conductor, each client's reader, and this thread, which sends and polls
            final ThreadMeter threads = ThreadMeter.ofStacks("dalloc-drv", "dalloc-a", "dalloc-b")
                .and(Thread.currentThread());
            for (final int size : new int[] {64, 1024})
            {
                final AllocationStream stream = new AllocationStream(tx, rx, size);
                // the pools grow to the deepest backlog the queues can see, twice (the second for the caches of
                // the threads that release, as in SteadyStateAllocationTest); then the JIT settles
                stream.fillReceiveBufferAndDrain();
                stream.fillReceiveBufferAndDrain();
                stream.send(MESSAGES);
                // each client's count is the driver's and its own, summed: the receiving client's own is b's less a's
                final long driverPooled = driver.stack().counters().get("pool_alloc");
                final long clientPooled = b.counters().get("pool_alloc") - a.counters().get("pool_alloc");
                final ThreadMeter.AllocationStart start = threads.startAllocation();
                stream.send(MESSAGES);
                final long[] heap = threads.allocatedSince(start);
                final long driverGrew = driver.stack().counters().get("pool_alloc") - driverPooled;
                final long clientGrew = b.counters().get("pool_alloc") - a.counters().get("pool_alloc") - clientPooled;
                final long beyondPools = Arrays.stream(heap).sum() -
                    (driverGrew + clientGrew) * POOLED_MESSAGE_HEAP_BYTES;
                final double heapPerMessage = beyondPools / (double)MESSAGES;
                final String figures = String.format("%d B messages through a driver: %.4f heap bytes allocated per " +
                    "message beyond pooled messages by %s (bytes: %s; pooled messages made: driver %d, client %d)",
                    size, heapPerMessage, threads, Arrays.toString(heap), driverGrew, clientGrew);
                System.out.println(figures);
                assertEquals(stream.sent(), stream.received(), "every message arrived");
                assertTrue(heapPerMessage < MAX_HEAP_BYTES_PER_MESSAGE, figures);
                // the deepest backlog: a receive buffer, and what the sender had in flight when the port congested
                final long backlog = (config.receiveBufferBytes() + config.sendBufferBytes()) / size;
                assertTrue(driverGrew <= backlog && clientGrew <= backlog, "a pool grows by a backlog at most: " + figures);
                Await.until(() -> tx.sendQueuedBytes() == 0, "all acked");
            }
        }
    }
}
