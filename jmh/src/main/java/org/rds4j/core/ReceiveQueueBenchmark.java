package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rds4j.core.wire.RdsHeader;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A socket's receive queue alone, on one thread, in cache: what a delivered message costs the stack's side
 * ({@link ReceiveQueue#offer}: the receive ring's record written, the bytes counted) and the application's
 * ({@link ReceiveQueue#takeInto}: the take lock, the record read and copied out, the bytes counted), without the
 * transport, the frame's rules or any thread hand-off. One operation is one message offered and taken; each invocation
 * offers a batch of {@value #MESSAGES} payloads that lie in one read buffer as whole RDS frames (as a TCP read holds
 * them), then takes them all: {@code offerAndTake} offers each payload as a record of its own, {@code offerRunsAndTake}
 * copies the frames into runs as long as a record carries ({@link ReceiveQueue#openRun}, {@code appendToRun},
 * {@code closeRun}), as the stack does for a TCP read's frames (docs/receive-runs.md). In the package of the queue, whose classes are not public. {@code -prof gc}
 * should show ~0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class ReceiveQueueBenchmark
{
    /** Messages per invocation: at 1 KiB about half of the default 256 KiB ring, so that none waits outside it. */
    static final int MESSAGES = 128;
    private static final int RING = 256 << 10;

    /** Payload bytes per message. */
    @Param({"64", "1024"})
    public int size;

    private final StackCounters counters = new StackCounters();
    private Path directory;
    private ReceiveQueue queue;
    private UnsafeBuffer frames;
    private ByteBuffer dst;
    private final InetSocketAddress sender = new InetSocketAddress("10.1.2.3", 4000);

    /**
     * Maps the queue's ring in /dev/shm, as a stack's default info directory has it.
     *
     * @throws IOException if the directory cannot be made.
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        directory = Files.createTempDirectory(Path.of("/dev/shm"), "rds4j-jmh-rq");
        queue = new ReceiveQueue(new MessagePool(counters.poolAlloc), new UncongestedSocket(RING), () -> { }, directory,
            RING);
        final int frame = RdsHeader.LENGTH + size;
        frames = new UnsafeBuffer(ByteBuffer.allocateDirect(MESSAGES * frame));
        for (int i = 0; i < MESSAGES; i++)
        {
            RdsHeader.write(frames, i * frame, i + 1, 0, size, 4000, 4001, 0, 0);
            frames.setMemory(i * frame + RdsHeader.LENGTH, size, (byte)i);
        }
        dst = ByteBuffer.allocateDirect(size);
    }

    /**
     * Frees the ring and its directory.
     *
     * @throws IOException if the directory cannot be deleted.
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        queue.releaseAll();
        Files.deleteIfExists(directory);
    }

    /**
     * Offers a batch, then takes it.
     *
     * @return what was taken, for the JIT not to drop the copies.
     */
    @Benchmark
    @OperationsPerInvocation(MESSAGES)
    public long offerAndTake()
    {
        final int frame = RdsHeader.LENGTH + size;
        for (int i = 0; i < MESSAGES; i++)
        {
            queue.offer(sender, frames, i * frame + RdsHeader.LENGTH, size, counters);
        }
        return takeAll();
    }

    /**
     * Offers a batch in runs, then takes it.
     *
     * @return what was taken, for the JIT not to drop the copies.
     */
    @Benchmark
    @OperationsPerInvocation(MESSAGES)
    public long offerRunsAndTake()
    {
        final int frame = RdsHeader.LENGTH + size;
        int runFrames = 0;
        for (int i = 0; i < MESSAGES; i++)
        {
            if (runFrames > 0 && queue.appendToRun(frames, i * frame, frame))
            {
                runFrames++;
                continue;
            }
            if (runFrames > 0)
            {
                queue.closeRun(runFrames);
            }
            if (!queue.openRun(sender, frames, i * frame, frame))
            {
                throw new IllegalStateException("the ring is sized for the batch");
            }
            runFrames = 1;
        }
        queue.closeRun(runFrames);
        return takeAll();
    }

    private long takeAll()
    {
        long taken = 0;
        for (int i = 0; i < MESSAGES; i++)
        {
            dst.clear();
            taken += queue.takeInto(dst, null).getPort() + dst.position();
        }
        return taken;
    }
}
