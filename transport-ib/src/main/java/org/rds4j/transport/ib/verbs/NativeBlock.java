package org.rds4j.transport.ib.verbs;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

/**
 * A zeroed, page-aligned block of native memory (a direct {@link ByteBuffer}, freed by the garbage collector
 * once unreachable) with its address and an {@link UnsafeBuffer} view for reading and patching native
 * structs in place. Whoever registers it with the HCA must deregister it before dropping it.
 */
public final class NativeBlock
{
    private static final int PAGE = 4096;

    private final ByteBuffer memory;
    private final long address;
    private final UnsafeBuffer view;

    public NativeBlock(final int size)
    {
        memory = BufferUtil.allocateDirectAligned(Math.max(PAGE, (size + PAGE - 1) & -PAGE), PAGE);
        address = BufferUtil.address(memory);
        view = new UnsafeBuffer(memory);
    }

    /** @return the first byte's address. */
    public long address()
    {
        return address;
    }

    /** @return the block's size in bytes (rounded up to whole pages). */
    public int size()
    {
        return memory.capacity();
    }

    /** @return a view over the whole block; offsets are from {@link #address()}. */
    public UnsafeBuffer view()
    {
        return view;
    }

    /** @return the block as a direct buffer (position 0, limit capacity: duplicate before changing them). */
    public ByteBuffer byteBuffer()
    {
        return memory;
    }
}
