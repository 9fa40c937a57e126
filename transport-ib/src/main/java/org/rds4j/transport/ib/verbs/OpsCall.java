package org.rds4j.transport.ib.verbs;

import com.sun.jna.Function;
import com.sun.jna.Pointer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One call site of a C function known only by its address: the data-path verbs {@code post_send},
 * {@code post_recv}, {@code poll_cq} and {@code req_notify_cq}, which {@code verbs.h} defines as static inline
 * functions that call through {@code context->ops}. There is no symbol to direct-map, so the binding reads
 * the function pointer from the {@code struct ibv_context} at the offset {@link VerbsLayout} records (checked
 * against the header at build time) and calls it, exactly as the inline function does.
 * <p>
 * Two ways to call, both set up once per call site with their argument storage preallocated:
 * <ul>
 *   <li>{@link Ffi} (the default): a direct-mapped {@code ffi_call} (libffi, the library JNA itself calls
 *       through) with an {@code ffi_cif} prepared once per signature and the argument values and the return
 *       slot in native memory patched in place. It allocates nothing on the Java heap per call.</li>
 *   <li>{@link Jna}: {@link Function#invokeInt(Object[])} with preallocated {@link Pointer} and
 *       {@link Integer} arguments whose values are set in place ({@link Pointer#nativeValue(Pointer, long)}).
 *       JNA copies the argument array on every call (32 bytes measured), so this is the fallback when libffi
 *       cannot be loaded, or when {@code -Drds4j.ib.opsCall=jna} asks for it.</li>
 * </ul>
 * Why not the others: a C shim library would need a compiler or a prebuilt binary per platform; the
 * provider's own symbols (e.g. {@code rxe_post_send}) are not exported; Java 17's foreign linker is an
 * incubator module. An instance is not thread safe: one call site per thread (the agent's).
 */
public abstract class OpsCall
{
    /** The C signatures of the four data-path verbs; all return {@code int}. */
    public enum Signature
    {
        /** {@code post_send(qp, wr, bad_wr)}, {@code post_recv(qp, wr, bad_wr)}. */
        PTR_PTR_PTR(3),
        /** {@code poll_cq(cq, num_entries, wc)}. */
        PTR_INT_PTR(3),
        /** {@code req_notify_cq(cq, solicited_only)}. */
        PTR_INT(2);

        final int arity;

        Signature(final int arity)
        {
            this.arity = arity;
        }

        boolean isInt(final int argument)
        {
            return argument == 1 && this != PTR_PTR_PTR;
        }
    }

    /**
     * The mechanism {@link #create} uses: {@code ffi} if libffi loads, else {@code jna}; forced by
     * {@code -Drds4j.ib.opsCall}, a diagnostic switch of the verbs layer (per JVM), not a stack setting.
     */
    public static String defaultMechanism()
    {
        final String forced = System.getProperty("rds4j.ib.opsCall");
        if (forced != null)
        {
            return forced;
        }
        return Ffi.available() ? "ffi" : "jna";
    }

    /** @return a call site for {@code function} (a C function pointer), by {@link #defaultMechanism()}. */
    public static OpsCall create(final long function, final Signature signature)
    {
        return create(defaultMechanism(), function, signature);
    }

    /** @param mechanism {@code ffi} or {@code jna}. */
    public static OpsCall create(final String mechanism, final long function, final Signature signature)
    {
        if (function == 0)
        {
            throw new VerbsLayoutException("null function pointer for a " + signature + " call");
        }
        switch (mechanism)
        {
            case "ffi":
                return new Ffi(function, signature);
            case "jna":
                return new Jna(function, signature);
            default:
                throw new IllegalArgumentException("rds4j.ib.opsCall must be ffi or jna, not " + mechanism);
        }
    }

    protected final long function;
    protected final Signature signature;

    OpsCall(final long function, final Signature signature)
    {
        this.function = function;
        this.signature = signature;
    }

    /** @return {@code ffi} or {@code jna}. */
    public abstract String mechanism();

    /** Sets a pointer argument (index 0 to arity - 1). */
    public abstract void pointer(int index, long value);

    /** Sets an {@code int} argument. */
    public abstract void integer(int index, int value);

    /** Calls the function with the arguments set so far (they stay set). */
    public abstract int invoke();

    /** libffi's {@code ffi_call}: no Java allocation per call. */
    public static final class Ffi extends OpsCall
    {
        private static final long[] CIFS = new long[Signature.values().length];
        private static final Object LOCK = new Object();
        private static volatile Boolean available;
        private static NativeBlock cifMemory;

        /** Per call site: argument storage (8 bytes each), the avalue array, the return slot. */
        private final NativeBlock block;
        private final UnsafeBuffer view;
        private final long cif;
        private final long avalue;
        private final long rvalue;

        static boolean available()
        {
            Boolean result = available;
            if (result == null)
            {
                try
                {
                    cif(Signature.PTR_INT);
                    result = Boolean.TRUE;
                }
                catch (final UnsatisfiedLinkError | NoClassDefFoundError | VerbsLayoutException e)
                {
                    result = Boolean.FALSE;
                }
                available = result;
            }
            return result;
        }

        /** Prepares (once) and returns the shared, read-only {@code ffi_cif} of a signature. */
        private static long cif(final Signature signature)
        {
            synchronized (LOCK)
            {
                if (cifMemory == null)
                {
                    VerbsLayout.checkPlatform();
                    final long pointerType = LibFfi.type("ffi_type_pointer");
                    final long sint32Type = LibFfi.type("ffi_type_sint32");
                    final int slot = 128; // one ffi_cif (32 bytes) plus its argument type array (3 x 8)
                    final NativeBlock memory = new NativeBlock(slot * Signature.values().length);
                    for (final Signature s : Signature.values())
                    {
                        final long cif = memory.address() + (long)slot * s.ordinal();
                        final long atypes = cif + 64;
                        for (int i = 0; i < s.arity; i++)
                        {
                            memory.view().putLong((int)(atypes - memory.address()) + 8 * i, s.isInt(i) ? sint32Type : pointerType);
                        }
                        final int rc = LibFfi.ffi_prep_cif(cif, VerbsLayout.FFI_DEFAULT_ABI, s.arity, sint32Type, atypes);
                        if (rc != VerbsLayout.FFI_OK)
                        {
                            throw new VerbsLayoutException("ffi_prep_cif(" + s + ") returned " + rc);
                        }
                        CIFS[s.ordinal()] = cif;
                    }
                    cifMemory = memory;
                }
                return CIFS[signature.ordinal()];
            }
        }

        Ffi(final long function, final Signature signature)
        {
            super(function, signature);
            cif = cif(signature);
            block = new NativeBlock(64);
            view = block.view();
            avalue = block.address() + 32;
            rvalue = block.address() + 56;
            for (int i = 0; i < signature.arity; i++)
            {
                view.putLong(32 + 8 * i, block.address() + 8L * i);
            }
        }

        @Override
        public String mechanism()
        {
            return "ffi";
        }

        @Override
        public void pointer(final int index, final long value)
        {
            view.putLong(8 * index, value);
        }

        @Override
        public void integer(final int index, final int value)
        {
            view.putInt(8 * index, value);
        }

        @Override
        public int invoke()
        {
            LibFfi.ffi_call(cif, function, rvalue, avalue);
            return (int)view.getLong(56); // an int return is widened to ffi_arg (8 bytes)
        }
    }

    /** JNA's {@link Function}: 32 bytes of garbage per call (JNA copies the argument array). */
    public static final class Jna extends OpsCall
    {
        private final Function jnaFunction;
        private final Object[] arguments;
        private final Integer[] ints = new Integer[3];

        Jna(final long function, final Signature signature)
        {
            super(function, signature);
            jnaFunction = Function.getFunction(new Pointer(function));
            arguments = new Object[signature.arity];
            for (int i = 0; i < signature.arity; i++)
            {
                arguments[i] = signature.isInt(i) ? Integer.valueOf(0) : new Pointer(0);
            }
        }

        @Override
        public String mechanism()
        {
            return "jna";
        }

        @Override
        public void pointer(final int index, final long value)
        {
            Pointer.nativeValue((Pointer)arguments[index], value);
        }

        @Override
        public void integer(final int index, final int value)
        {
            if (ints[index] == null || ints[index] != value)
            {
                ints[index] = value; // boxed once per distinct value; call sites keep theirs constant
                arguments[index] = ints[index];
            }
        }

        @Override
        public int invoke()
        {
            return jnaFunction.invokeInt(arguments);
        }
    }
}
