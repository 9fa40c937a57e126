package org.rds4j.transport.ib.verbs;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * libffi, direct-mapped, for {@link OpsCall.Ffi}: {@code ffi_call} calls a C function pointer with a
 * prepared call interface, and being itself a direct-mapped call with {@code long} arguments it allocates
 * nothing on the Java heap. Optional: without libffi the binding falls back to {@link com.sun.jna.Function}.
 */
final class LibFfi
{
    static final String[] LIBRARIES = {"libffi.so.8", "libffi.so.7"};
    static final NativeLibrary LIBRARY;

    static
    {
        NativeLibrary found = null;
        UnsatisfiedLinkError error = null;
        for (final String name : LIBRARIES)
        {
            try
            {
                found = NativeLibrary.getInstance(name);
                break;
            }
            catch (final UnsatisfiedLinkError e)
            {
                error = e;
            }
        }
        if (found == null)
        {
            throw error;
        }
        LIBRARY = found;
        Native.register(LibFfi.class, found);
    }

    private LibFfi()
    {
    }

    /** @param atypes {@code ffi_type **}. @return {@code FFI_OK} (0) on success. */
    static native int ffi_prep_cif(long cif, int abi, int nargs, long rtype, long atypes);

    /** @param rvalue at least sizeof(ffi_arg). @param avalue {@code void **}, one pointer to each argument's storage. */
    static native void ffi_call(long cif, long fn, long rvalue, long avalue);

    /** @return the address of a global {@code ffi_type}, e.g. {@code ffi_type_pointer}. */
    static long type(final String name)
    {
        return com.sun.jna.Pointer.nativeValue(LIBRARY.getGlobalVariableAddress(name));
    }
}
