package org.rds4j.transport.ib.verbs;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;

/** A verbs or rdma_cm control call failed; carries the errno. Control path only. */
public final class VerbsException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int errno;

    public VerbsException(final String call, final int errno)
    {
        super(call + " failed: " + describe(errno));
        this.errno = errno;
    }

    public VerbsException(final String message)
    {
        super(message);
        this.errno = 0;
    }

    /** @return the errno, 0 if none. */
    public int errno()
    {
        return errno;
    }

    /** @return a failure of {@code call} with the calling thread's last errno. */
    static VerbsException lastError(final String call)
    {
        return new VerbsException(call, Native.getLastError());
    }

    /** Throws if {@code rc} is not 0, with the errno (a negative rc is taken as -errno when errno is unset). */
    static void check(final int rc, final String call)
    {
        if (rc != 0)
        {
            final int errno = Native.getLastError();
            throw new VerbsException(call, errno != 0 ? errno : Math.abs(rc));
        }
    }

    /** Throws if {@code pointer} is 0. @return the pointer. */
    static long check(final long pointer, final String call)
    {
        if (pointer == 0)
        {
            throw lastError(call);
        }
        return pointer;
    }

    static String describe(final int errno)
    {
        return "errno " + errno + " (" + new LastErrorException(errno).getMessage() + ")";
    }
}
