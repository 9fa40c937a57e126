package org.rds4j.transport.ib.verbs;

import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The calls through function pointers, on the host, against C functions with the data-path verbs' exact
 * signatures (src/test/c/ops_call_target.c): arguments arrive in order and intact with both mechanisms, and
 * the ffi mechanism allocates nothing per call.
 */
class OpsCallTest
{
    private static NativeLibrary target;

    @BeforeAll
    static void compile() throws Exception
    {
        assumeFalse(NativeTestSupport.skipped(), "rds4j.ib.skipNativeTests is set");
        final Path library = NativeTestSupport.gcc("libops_call_target.so", "-shared", "-fPIC",
            NativeTestSupport.SOURCES.resolve("ops_call_target.c").toString());
        target = NativeLibrary.getInstance(library.toString());
    }

    private static long function(final String name)
    {
        return Pointer.nativeValue(target.getFunction(name));
    }

    @Test
    void ffiArgumentsAndResults()
    {
        assumeTrue(OpsCall.Ffi.available(), "libffi not found");
        check("ffi");
    }

    @Test
    void jnaArgumentsAndResults()
    {
        check("jna");
    }

    private static void check(final String mechanism)
    {
        final NativeBlock memory = new NativeBlock(4096);
        final long base = memory.address();
        memory.view().putLong(0, 7); // the "qp"/"cq" tag the functions add
        // a chain of three fake WRs at 64, 96, 128
        memory.view().putLong(64 + 8, base + 96);
        memory.view().putLong(96 + 8, base + 128);
        memory.view().putLong(128 + 8, 0);

        final OpsCall post = OpsCall.create(mechanism, function("fake_post"), OpsCall.Signature.PTR_PTR_PTR);
        post.pointer(0, base);
        post.pointer(2, base + 256);
        post.pointer(1, base + 64);
        assertEquals(3 + 7, post.invoke());
        assertEquals(base + 128, memory.view().getLong(256));
        post.pointer(1, base + 128);
        assertEquals(1 + 7, post.invoke());

        final OpsCall poll = OpsCall.create(mechanism, function("fake_poll"), OpsCall.Signature.PTR_INT_PTR);
        poll.pointer(0, base);
        poll.integer(1, 5);
        poll.pointer(2, base + 1024);
        assertEquals(57, poll.invoke());
        assertEquals(1004, memory.view().getLong(1024 + 4 * 8));

        final OpsCall notify = OpsCall.create(mechanism, function("fake_notify"), OpsCall.Signature.PTR_INT);
        notify.pointer(0, base);
        notify.integer(1, 1);
        assertEquals(107, notify.invoke());
        notify.integer(1, 0);
        assertEquals(7, notify.invoke());
    }

    @Test
    void ffiCallsAllocateNothing()
    {
        assumeTrue(OpsCall.Ffi.available(), "libffi not found");
        final NativeBlock memory = new NativeBlock(4096);
        memory.view().putLong(0, 7);
        final OpsCall poll = OpsCall.create("ffi", function("fake_poll"), OpsCall.Signature.PTR_INT_PTR);
        poll.pointer(0, memory.address());
        poll.integer(1, 16);
        poll.pointer(2, memory.address() + 1024);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long thread = Thread.currentThread().getId();
        long sum = 0;
        for (int i = 0; i < 20_000; i++)
        {
            sum += poll.invoke();
        }
        final long before = threads.getThreadAllocatedBytes(thread);
        for (int i = 0; i < 100_000; i++)
        {
            sum += poll.invoke();
        }
        final long allocated = threads.getThreadAllocatedBytes(thread) - before;
        assertEquals(120_000L * 167, sum);
        // the measurement itself may allocate a little; 100,000 calls at even 1 byte each would be 100 KB
        assertTrue(allocated < 10_000, allocated + " bytes allocated by 100,000 calls");
    }

    private static void assertTrue(final boolean condition, final String message)
    {
        org.junit.jupiter.api.Assertions.assertTrue(condition, message);
    }
}
