package org.rds4j.transport.tcp;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.ThreadMeter;

import java.net.InetSocketAddress;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A steady stream allocates nothing per message, on any thread that handles it: the sending and polling
 * application thread and both stacks' agents ({@link ThreadMeter} counts every heap byte, not only pooled
 * messages). And the send path recycles its messages: a socket never has more messages in flight than its send
 * buffer admits (bytes queued below {@code SO_SNDBUF}, so at most {@code SO_SNDBUF / size + 1}); once it has held
 * that many, and the threads that release them have stocked their per-thread caches (at most
 * {@code MessagePool.MAGAZINE_BYTES} of messages per size class each), sending any amount more allocates no
 * message on the sending stack: {@code pool_alloc} grows by at most one cache's worth over 500,000 messages.
 * A blocking sender of small messages, which writes its frames into the connection's send memory itself (the
 * append), allocates nothing per message either.
 */
class SteadyStateAllocationTest
{
    private static final int TCP_PORT = 27020;
    private static final InetSocketAddress DEAD = new InetSocketAddress("127.0.7.9", 5000);
    private static final long MESSAGES = 500_000;
    /**
     * Near zero: what the stacks allocate now and then (timers, info file snapshots), spread over the stream;
     * 0.0002-0.07 measured here. The stream is long enough that a queue that grows once to a deeper backlog than
     * the warm-up saw (a connection's send queue doubling to 64 KiB, a socket's receive queue to 128 KiB) stays
     * well under the bound. One 16-byte object per message, the smallest there is, would make 16.
     */
    private static final double MAX_HEAP_BYTES_PER_MESSAGE = 1.0;
    /**
     * The most messages one thread's magazine holds ({@code MessagePool}). A cancel runs on whichever thread
     * drives the stack at that moment (the agent, or this thread waiting in the call), so the warm-up may end
     * with the agent's magazine not yet stocked; the measured stream then stocks it, once.
     */
    private static final long MAGAZINE_MAX_MESSAGES = 1024;

    /**
     * A blocking sender streaming 64 B messages appends nearly all of them (a message alone in its send buffer goes
     * the usual way); the sending thread, which also polls the receiving socket, and both agents allocate nothing per
     * message. Appending, the sender outruns the polls, so what the socket's receive ring cannot hold waits in pooled
     * messages: without the warm-up's full receive buffer, the pool grew during the measurement (8 B per message on
     * JDK 25).
     */
    @Test
    @Timeout(60) // a send blocked for good is interrupted (EINTR), and the test fails instead of hanging
    void aBlockingSenderThatAppendsAllocatesNothingPerMessage() throws Exception
    {
        final RdsStackConfig config = RdsStackConfig.builder()
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT + 1).build()).build();
        try (RdsStack a = RdsStack.open(config.toBuilder().name("alloc-append-a").build());
             RdsStack b = RdsStack.open(config.toBuilder().name("alloc-append-b").build()))
        {
            final RdsSocket tx = a.openSocket().bind(new InetSocketAddress("127.0.7.3", 5000));
            final RdsSocket rx = b.openSocket().bind(new InetSocketAddress("127.0.7.4", 5000));
            rx.configureBlocking(false);
            // a quarter of the receive buffer: a blocking send to a congested port waits for it to drain, and only this
            // thread drains it, so the most that can wait unread (what is in flight) must stay short of congesting it
            tx.setOption(RdsOptions.SO_SNDBUF, rx.getOption(RdsOptions.SO_RCVBUF) / 4);
            final ThreadMeter threads = ThreadMeter.ofStacks("alloc-append-a", "alloc-append-b")
                .and(Thread.currentThread());
            final AllocationStream stream = new AllocationStream(tx, rx, 64);
            // the receiving pool grows to the deepest backlog its socket may hold (as below), sent non-blocking, since
            // a blocking send to a congested port waits; then the JIT settles and the send memory is mapped
            tx.configureBlocking(false);
            stream.fillReceiveBufferAndDrain();
            stream.fillReceiveBufferAndDrain();
            tx.configureBlocking(true);
            stream.send(MESSAGES);
            final long appendedBefore = a.counters().get("send_appended");
            final ThreadMeter.AllocationStart start = threads.startAllocation();
            stream.send(MESSAGES);
            final long[] heap = threads.allocatedSince(start);
            final long appended = a.counters().get("send_appended") - appendedBefore;
            final double heapPerMessage = Arrays.stream(heap).sum() / (double)MESSAGES;
            final String figures = String.format("64 B messages sent blocking, %d of %d appended: %.4f heap bytes " +
                "allocated per message by %s (bytes: %s)", appended, MESSAGES, heapPerMessage, threads,
                Arrays.toString(heap));
            System.out.println(figures);
            assertTrue(appended >= MESSAGES * 9 / 10, figures);
            assertTrue(heapPerMessage < MAX_HEAP_BYTES_PER_MESSAGE, figures);
        }
    }

    @Test
    void aSteadyStreamAllocatesNothingPerMessage() throws Exception
    {
        final RdsStackConfig config = RdsStackConfig.builder()
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build()).build();
        try (RdsStack a = RdsStack.open(config.toBuilder().name("alloc-a").build());
             RdsStack b = RdsStack.open(config.toBuilder().name("alloc-b").build()))
        {
            final RdsSocket tx = a.openSocket().bind(new InetSocketAddress("127.0.7.1", 5000));
            final RdsSocket rx = b.openSocket().bind(new InetSocketAddress("127.0.7.2", 5000));
            tx.configureBlocking(false);
            rx.configureBlocking(false);
            // every thread that touches a message: both agents, and this thread, which sends and polls
            final ThreadMeter threads = ThreadMeter.ofStacks("alloc-a", "alloc-b").and(Thread.currentThread());
            for (final int size : new int[] {64, 1024})
            {
                final AllocationStream stream = new AllocationStream(tx, rx, size);
                final long window = stream.fillWindowToDeadPeer(DEAD);
                assertEquals(config.sendBufferBytes() / size, window, "messages admitted: bytes queued below SO_SNDBUF");
                assertEquals(window, tx.cancelSentTo(DEAD));
                // the thread that ran the cancel kept what it freed first in its own cache: a second full window
                // makes up for those when that was the agent, out of this thread's reach
                assertEquals(window, stream.fillWindowToDeadPeer(DEAD));
                assertEquals(window, tx.cancelSentTo(DEAD));
                // the receiving stack's pool grows to what its socket may hold: fill the receive buffer until the
                // port is congested, twice (the second for the receiving agent's cache, as above)
                stream.fillReceiveBufferAndDrain();
                stream.fillReceiveBufferAndDrain();
                // and a stream as long as the measured one: the connection takes its zero-copy send ring once it
                // has sent enough in bulk, and the JIT settles
                stream.send(MESSAGES);
                final long allocatedAfterWarmUp = a.counters().get("pool_alloc");
                final ThreadMeter.AllocationStart start = threads.startAllocation();
                stream.send(MESSAGES);
                final long[] heap = threads.allocatedSince(start);
                final double heapPerMessage = Arrays.stream(heap).sum() / (double)MESSAGES;
                final String figures = String.format("%d B messages: %.4f heap bytes allocated per message by %s (bytes: %s)",
                    size, heapPerMessage, threads, Arrays.toString(heap));
                System.out.println(figures);
                final long allocatedMeasuring = a.counters().get("pool_alloc") - allocatedAfterWarmUp;
                assertTrue(allocatedMeasuring <= MAGAZINE_MAX_MESSAGES, size + " B: the sender allocated " +
                    allocatedMeasuring + " messages in " + MESSAGES + " after a full window had been recycled");
                assertTrue(heapPerMessage < MAX_HEAP_BYTES_PER_MESSAGE, figures);
                // and the zero-copy path: claim, write in place, commit
                stream.claim(MESSAGES / 5);
                final ThreadMeter.AllocationStart claimStart = threads.startAllocation();
                stream.claim(MESSAGES);
                final long[] claimHeap = threads.allocatedSince(claimStart);
                final double claimHeapPerMessage = Arrays.stream(claimHeap).sum() / (double)MESSAGES;
                final String claimFigures = String.format("%d B claimed messages: %.4f heap bytes allocated per " +
                    "message by %s (bytes: %s)", size, claimHeapPerMessage, threads, Arrays.toString(claimHeap));
                System.out.println(claimFigures);
                assertTrue(claimHeapPerMessage < MAX_HEAP_BYTES_PER_MESSAGE, claimFigures);
                Await.until(() -> tx.sendQueuedBytes() == 0, "all acked");
            }
        }
    }
}
