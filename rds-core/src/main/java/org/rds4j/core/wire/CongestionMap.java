package org.rds4j.core.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

/**
 * The congestion bitmap of one address: a bit per port, 8192 bytes, port {@code p} at bit {@code p % 8} of
 * byte {@code p / 8} (the kernel's little-endian bit order).
 * <p>
 * Single writer (the stack's agent); any thread may test a bit. {@link #version()} changes on every change so
 * the agent can tell which connections must be sent an update.
 */
public final class CongestionMap
{
    /** Bytes in a map, and the {@code len} of every congestion update. */
    public static final int BYTES = 8192;

    private final UnsafeBuffer bits;
    private volatile long version;

    /** A map in memory of its own, all ports clear. */
    public CongestionMap()
    {
        this(new UnsafeBuffer(ByteBuffer.allocateDirect(BYTES)));
    }

    /**
     * A map over given memory, which may be shared with other processes that read it.
     *
     * @param bits {@link #BYTES} bytes, 8-byte aligned; its current bits are the map's.
     */
    public CongestionMap(final UnsafeBuffer bits)
    {
        if (bits.capacity() != BYTES)
        {
            throw new IllegalArgumentException("a congestion map is " + BYTES + " bytes, not " + bits.capacity());
        }
        this.bits = bits;
    }

    /**
     * @param port 0..65535.
     * @return true if the port is marked congested. Safe from any thread.
     */
    public boolean isCongested(final int port)
    {
        return (bits.getByteVolatile(port >>> 3) & (1 << (port & 7))) != 0;
    }

    /**
     * Marks a port congested. Agent only.
     *
     * @param port 0..65535.
     * @return true if the bit changed.
     */
    public boolean set(final int port)
    {
        final int index = port >>> 3;
        final byte old = bits.getByte(index);
        final byte now = (byte)(old | (1 << (port & 7)));
        if (old == now)
        {
            return false;
        }
        bits.putByteVolatile(index, now);
        version++;
        return true;
    }

    /**
     * Clears a port's mark. Agent only.
     *
     * @param port 0..65535.
     * @return true if the bit changed.
     */
    public boolean clear(final int port)
    {
        final int index = port >>> 3;
        final byte old = bits.getByte(index);
        final byte now = (byte)(old & ~(1 << (port & 7)));
        if (old == now)
        {
            return false;
        }
        bits.putByteVolatile(index, now);
        version++;
        return true;
    }

    /**
     * Replaces the whole map with a received one. Agent only.
     *
     * @param source  the update's payload.
     * @param offset  its first byte.
     * @param cleared called with every port whose bit went from set to clear; may be null.
     * @return true if any bit changed.
     */
    public boolean replace(final DirectBuffer source, final int offset, final PortConsumer cleared)
    {
        boolean changed = false;
        for (int i = 0; i < BYTES; i += 8)
        {
            final long old = bits.getLong(i);
            final long now = source.getLong(offset + i);
            if (old != now)
            {
                changed = true;
                long freed = old & ~now;
                bits.putLongVolatile(i, now);
                while (freed != 0 && cleared != null)
                {
                    final int bit = Long.numberOfTrailingZeros(freed);
                    freed &= freed - 1;
                    cleared.accept(portOfBit(i, bit));
                }
            }
        }
        if (changed)
        {
            version++;
        }
        return changed;
    }

    /**
     * Copies the map into a buffer, e.g. the payload of an update.
     *
     * @param destination where.
     * @param offset      first byte written.
     */
    public void copyTo(final MutableDirectBuffer destination, final int offset)
    {
        destination.putBytes(offset, bits, 0, BYTES);
    }

    /** @return a number that changes whenever a bit changes. */
    public long version()
    {
        return version;
    }

    // agrona's getLong reads native (little-endian on every platform the JDK ships for x86/arm64) order, so
    // byte b of the long is map byte i + b; bit k of the long is port (i + k/8) * 8 + k % 8 = i*8 + k.
    private static int portOfBit(final int byteIndex, final int bitInLong)
    {
        if (java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN)
        {
            return byteIndex * 8 + bitInLong;
        }
        return (byteIndex + 7 - (bitInLong >>> 3)) * 8 + (bitInLong & 7);
    }

    /** Receives ports. */
    @FunctionalInterface
    public interface PortConsumer
    {
        /** @param port a port, 0..65535. */
        void accept(int port);
    }
}
