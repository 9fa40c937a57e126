package org.rds4j.transport.tcp;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * The libc calls the TCP transport makes where the JDK has no equivalent, bound once through JNA's direct mapping
 * (no per-call reflection). Loading this class throws {@link UnsatisfiedLinkError} or {@link NoClassDefFoundError}
 * where libc or JNA cannot be had; callers catch that and keep the JDK's way. Pointers are passed as addresses
 * ({@code long}); ioctl is variadic in C and is called with fixed integer arguments, which the Linux ABIs pass
 * alike.
 */
final class LibC
{
    /** {@code EAGAIN} (Linux): a non-blocking socket has no room. */
    static final int EAGAIN = 11;
    /** {@code EINTR}: a signal came first; nothing was done. */
    static final int EINTR = 4;
    /** {@code open} flags: read only, and not inherited by a child process. */
    static final int O_RDONLY_CLOEXEC = 0x80000;

    static
    {
        Native.register(LibC.class, NativeLibrary.getInstance("c"));
    }

    private LibC()
    {
    }

    static native int ioctl(int fd, long request, long argp);

    static native int getsockname(int fd, long addr, long addrLength);

    static native int getpeername(int fd, long addr, long addrLength);

    static native int open(String path, int flags);

    static native int close(int fd);

    /** {@code sendfile(2)}: {@code offset} is the address of an {@code off_t} that the call moves past what it sent. */
    static native long sendfile(int outFd, int inFd, long offset, long count);
}
