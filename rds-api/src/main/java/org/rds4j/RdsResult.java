package org.rds4j;

/**
 * Result codes of the non-blocking hot path, and of {@link RdsException#code()}.
 * <p>
 * A call such as {@link RdsSocket#send(java.nio.ByteBuffer, java.net.InetSocketAddress)} returns a value
 * {@code >= 0} on success and one of these negative codes on failure; no exception is thrown for a
 * condition the caller is expected to handle (a full queue, a congested destination). Each code is the
 * negated Linux errno that the kernel's RDS returns in the same situation, so the documentation of
 * {@code net/rds} and {@code rds(7)} applies.
 */
public final class RdsResult
{
    /** Nothing can be queued now (send buffer or queue full); retry later or block. Linux {@code EAGAIN}. */
    public static final int EAGAIN = -11;
    /** An argument is invalid: a wildcard, broadcast or multicast address, port 1 as a bind target, a second bind. Linux {@code EINVAL}. */
    public static final int EINVAL = -22;
    /** The message is larger than {@link RdsSocket#MAX_MESSAGE_SIZE} or than the socket's send buffer. Linux {@code EMSGSIZE}. */
    public static final int EMSGSIZE = -90;
    /** The destination port is congested at the receiver; retry after an uncongested notification. Linux {@code ENOBUFS}. */
    public static final int ENOBUFS = -105;
    /** The socket is not bound. Linux {@code ENOTCONN}. */
    public static final int ENOTCONN = -107;
    /** A blocking call's timeout expired. Linux {@code ETIMEDOUT}. */
    public static final int ETIMEDOUT = -110;
    /** A blocking call's thread was interrupted; the interrupt status is left set. Linux {@code EINTR}. */
    public static final int EINTR = -4;
    /** The address is already bound by another socket. Linux {@code EADDRINUSE}. */
    public static final int EADDRINUSE = -98;
    /** No transport can carry traffic for this local address. Linux {@code EADDRNOTAVAIL}. */
    public static final int EADDRNOTAVAIL = -99;
    /**
     * The driver the stack is attached to is gone (it exited or was killed): every later call on the stack's
     * sockets fails the same way until the application opens a new stack. Linux {@code ECONNRESET}.
     */
    public static final int ECONNRESET = -104;
    /** The operation is not supported now (for example changing the transport after bind). Linux {@code EOPNOTSUPP}. */
    public static final int EOPNOTSUPP = -95;

    /**
     * The destination is outside the stack's allow-list ({@link RdsStackConfig#allowedPeers()}); nothing is sent.
     * Linux {@code EACCES}.
     */
    public static final int EACCES = -13;

    private RdsResult()
    {
    }

    /**
     * The symbolic name of a result, for logs and messages.
     *
     * @param result a value returned by an rds4j call.
     * @return {@code "OK"} for a non-negative value, the errno name for a known code, else {@code "E?<n>"}.
     */
    public static String name(final int result)
    {
        if (result >= 0)
        {
            return "OK";
        }
        switch (result)
        {
            case EAGAIN: return "EAGAIN";
            case EINVAL: return "EINVAL";
            case EMSGSIZE: return "EMSGSIZE";
            case ENOBUFS: return "ENOBUFS";
            case ENOTCONN: return "ENOTCONN";
            case ETIMEDOUT: return "ETIMEDOUT";
            case EINTR: return "EINTR";
            case EADDRINUSE: return "EADDRINUSE";
            case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
            case EOPNOTSUPP: return "EOPNOTSUPP";
            case ECONNRESET: return "ECONNRESET";
            case EACCES: return "EACCES";
            default: return "E?" + (-result);
        }
    }
}
