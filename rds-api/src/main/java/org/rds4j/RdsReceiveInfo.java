package org.rds4j;

import java.net.InetSocketAddress;

/**
 * What {@link RdsSocket#receive(java.nio.ByteBuffer, RdsReceiveInfo)} took: the sender, the message's full length
 * and whether it was truncated (the kernel's {@code msg_name}, {@code MSG_TRUNC} return and flag).
 * <p>
 * A reusable holder, made once by the application ({@code new RdsReceiveInfo()}) and filled by each receive, so
 * that receiving allocates nothing; one thread at a time.
 */
public final class RdsReceiveInfo
{
    private InetSocketAddress sender;
    private int length;
    private boolean truncated;

    /** An empty holder: no sender, length 0. */
    public RdsReceiveInfo()
    {
    }

    /**
     * For {@link RdsSocket} implementations: a message was taken.
     *
     * @param sender    its sender.
     * @param length    its payload's full length.
     * @param truncated whether only part of it fitted in the buffer (the rest is discarded).
     */
    public void set(final InetSocketAddress sender, final int length, final boolean truncated)
    {
        this.sender = sender;
        this.length = length;
        this.truncated = truncated;
    }

    /** For {@link RdsSocket} implementations: nothing was taken. */
    public void clear()
    {
        set(null, 0, false);
    }

    /** @return the sender of the message last taken, {@code null} if the last receive took none. */
    public InetSocketAddress sender()
    {
        return sender;
    }

    /** @return the full payload length of the message last taken, even where it was longer than the buffer. */
    public int length()
    {
        return length;
    }

    /**
     * @return whether the message last taken was longer than the buffer's room: only its first bytes were copied
     *         and the rest was discarded (the kernel's {@code MSG_TRUNC} flag).
     */
    public boolean truncated()
    {
        return truncated;
    }

    @Override
    public String toString()
    {
        return "RdsReceiveInfo[" + sender + ", " + length + (truncated ? " bytes, truncated]" : " bytes]");
    }
}
