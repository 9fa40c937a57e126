package org.rds4j.jmh;

import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.rds4j.core.wire.CongestionMap;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The per-address congestion bitmap: bit operations on random-ish ports and {@link CongestionMap#replace} of a
 * whole 8 KiB map by a received update. Everything is allocated in {@link #setup()}; the measured methods
 * allocate nothing ({@code -prof gc} should show ~0 B/op).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class CongestionMapBenchmark
{
    /** Ports visited in turn; a power of two so the cursor wraps with a mask. */
    private static final int PORT_COUNT = 4096;
    private static final int PORT_MASK = PORT_COUNT - 1;
    /** The one bit in which the two update payloads differ. */
    private static final int FLIPPED_PORT = 40_000;

    /** About half its bits set, for {@link #isCongested()}. */
    private CongestionMap populated;
    /** Starts empty; {@link #setThenClear()} leaves it empty after every call. */
    private CongestionMap scratch;
    /** Target of {@link #replaceOneBitChanged()}; its state alternates between the two updates. */
    private CongestionMap replaced;
    /** Target of {@link #replaceUnchanged()}; always equal to {@code updates[1]}. */
    private CongestionMap unchanged;
    private int[] ports;
    private int cursor;

    /** Two full-size update payloads, identical except for {@link #FLIPPED_PORT}. */
    private UnsafeBuffer[] updates;
    private int updateCursor;
    /** Allocated once here; records the last freed port in a field so the callback has an observable effect. */
    private CongestionMap.PortConsumer clearedSink;
    private int lastCleared;

    /** Prepares the maps, the ports to test and the updates. */
    @Setup
    public void setup()
    {
        final SplittableRandom random = new SplittableRandom(0x5EED_C0DEL);

        ports = new int[PORT_COUNT];
        for (int i = 0; i < PORT_COUNT; i++)
        {
            ports[i] = random.nextInt(1 << 16);
        }

        populated = new CongestionMap();
        for (int port = 0; port < (1 << 16); port++)
        {
            if (random.nextBoolean())
            {
                populated.set(port);
            }
        }
        scratch = new CongestionMap();

        final UnsafeBuffer withBit = new UnsafeBuffer(ByteBuffer.allocateDirect(CongestionMap.BYTES));
        populated.copyTo(withBit, 0);
        withBit.putByte(FLIPPED_PORT >>> 3, (byte)(withBit.getByte(FLIPPED_PORT >>> 3) | (1 << (FLIPPED_PORT & 7))));
        final UnsafeBuffer withoutBit = new UnsafeBuffer(ByteBuffer.allocateDirect(CongestionMap.BYTES));
        withoutBit.putBytes(0, withBit, 0, CongestionMap.BYTES);
        withoutBit.putByte(FLIPPED_PORT >>> 3, (byte)(withBit.getByte(FLIPPED_PORT >>> 3) & ~(1 << (FLIPPED_PORT & 7))));
        updates = new UnsafeBuffer[] {withBit, withoutBit};

        replaced = new CongestionMap();
        replaced.replace(withoutBit, 0, null);
        unchanged = new CongestionMap();
        unchanged.replace(withoutBit, 0, null);
        clearedSink = port -> lastCleared = port;
    }

    private int nextPort()
    {
        return ports[cursor++ & PORT_MASK];
    }

    /**
     * Tests one port's bit (a volatile byte read), as a sender does before queueing.
     *
     * @return the bit.
     */
    @Benchmark
    public boolean isCongested()
    {
        return populated.isCongested(nextPort());
    }

    /**
     * Marks a port congested and clears it again: two bit changes, two version bumps.
     *
     * @return whether it cleared.
     */
    @Benchmark
    public boolean setThenClear()
    {
        final int port = nextPort();
        final boolean set = scratch.set(port);
        final boolean cleared = scratch.clear(port);
        return set & cleared;
    }

    /**
     * Replaces the whole 8 KiB map with an update that differs in exactly one bit; successive calls alternate
     * the bit on and off, so every other call reports a cleared port to the consumer.
     * @return whether the map changed.
     */
    @Benchmark
    public boolean replaceOneBitChanged()
    {
        return replaced.replace(updates[updateCursor++ & 1], 0, clearedSink);
    }

    /**
     * Replaces the map with an identical update: the 8 KiB compare with nothing to write.
     *
     * @return whether it changed.
     */
    @Benchmark
    public boolean replaceUnchanged()
    {
        return unchanged.replace(updates[1], 0, clearedSink);
    }
}
