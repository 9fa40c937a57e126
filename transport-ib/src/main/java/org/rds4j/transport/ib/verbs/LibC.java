package org.rds4j.transport.ib.verbs;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/** The few libc functions the binding needs: poll and fcntl for the event fds, the dl* calls for {@link AbiCheck}. */
final class LibC
{
    static final int POLLIN = 0x1;
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 0x800;
    static final int RTLD_NOW = 0x2;
    static final int RTLD_NOLOAD = 0x4;
    /** sizeof(Dl_info): dli_fname, dli_fbase, dli_sname, dli_saddr. */
    static final int DL_INFO_SIZE = 32;

    static
    {
        Native.register(LibC.class, NativeLibrary.getInstance("c"));
    }

    private LibC()
    {
    }

    /** @param fds {@code struct pollfd *} (int fd, short events, short revents: 8 bytes each). */
    static native int poll(long fds, long nfds, int timeoutMs);

    static native int fcntl(int fd, int cmd, int arg);

    static native long dlopen(String file, int mode);

    static native long dlvsym(long handle, String symbol, String version);

    static native long dlsym(long handle, String symbol);

    static native int dladdr(long addr, long info);

    static native int dlclose(long handle);

    static final int EFD_NONBLOCK = 0x800;
    static final int EFD_CLOEXEC = 0x80000;

    static native int eventfd(int initval, int flags);

    static native long read(int fd, long buf, long count);

    static native long write(int fd, long buf, long count);

    static native int close(int fd);
}
