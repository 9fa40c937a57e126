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
import org.rds4j.core.wire.RdsHeader;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The 48-byte {@code struct rds_header}: writing one, reading every field, the RFC 1071 checksum and the
 * receive-side {@link RdsHeader#validate}. All buffers are allocated in {@link #setup()}; the measured methods
 * allocate nothing ({@code -prof gc} should show ~0 B/op).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class RdsHeaderBenchmark
{
    /** Where {@link #encode()} writes; rewritten on every call. */
    private UnsafeBuffer txBuffer;
    /** A checksummed, valid header written once in setup, only read by the decode/checksum/validate methods. */
    private UnsafeBuffer rxBuffer;
    private int offset;

    // header fields kept in non-final fields so the JIT cannot fold them into constants
    private long sequence;
    private long ack;
    private int length;
    private int sport;
    private int dport;
    private int flags;
    private int credit;

    /** Prepares the buffers and a checksummed header to decode and validate. */
    @Setup
    public void setup()
    {
        txBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
        rxBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
        offset = 0;

        sequence = 0x0123_4567_89ABL;
        ack = 0x0123_4567_0000L;
        length = 1400;
        sport = 4000;
        dport = 18634;
        flags = RdsHeader.FLAG_ACK_REQUIRED;
        credit = 17;

        RdsHeader.write(rxBuffer, offset, sequence, ack, length, sport, dport, flags, credit);
        RdsHeader.writeChecksum(rxBuffer, offset);
        final int result = RdsHeader.validate(rxBuffer, offset);
        if (result != RdsHeader.VALID)
        {
            throw new IllegalStateException("setup header does not validate: " + RdsHeader.describeValidation(result));
        }
        if (RdsHeader.checksumField(rxBuffer, offset) == 0)
        {
            throw new IllegalStateException("setup header has no checksum, validate would skip verifying it");
        }
    }

    /** Writes a whole header (fields, padding, zero checksum, zeroed extension space). */
    @Benchmark
    public void encode()
    {
        RdsHeader.write(txBuffer, offset, sequence++, ack, length, sport, dport, flags, credit);
    }

    /** Writes a whole header and then its checksum: what a sender that checksums headers does per message. */
    @Benchmark
    public void encodeWithChecksum()
    {
        RdsHeader.write(txBuffer, offset, sequence++, ack, length, sport, dport, flags, credit);
        RdsHeader.writeChecksum(txBuffer, offset);
    }

    /**
     * Reads every field of a header.
     *
     * @return the fields' sum, so the reads are not dead code.
     */
    @Benchmark
    public long decode()
    {
        final UnsafeBuffer buffer = rxBuffer;
        final int at = offset;
        return RdsHeader.sequence(buffer, at) +
            RdsHeader.ack(buffer, at) +
            RdsHeader.length(buffer, at) +
            RdsHeader.sport(buffer, at) +
            RdsHeader.dport(buffer, at) +
            RdsHeader.flags(buffer, at) +
            RdsHeader.credit(buffer, at) +
            RdsHeader.checksumField(buffer, at);
    }

    /**
     * The RFC 1071 checksum over the 48 header bytes.
     *
     * @return the checksum.
     */
    @Benchmark
    public int computeChecksum()
    {
        return RdsHeader.computeChecksum(rxBuffer, offset);
    }

    /**
     * The receive-side check: length bound, congestion-update shape, checksum verification.
     *
     * @return the verdict.
     */
    @Benchmark
    public int validate()
    {
        return RdsHeader.validate(rxBuffer, offset);
    }
}
