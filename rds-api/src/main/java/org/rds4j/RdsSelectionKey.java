package org.rds4j;

/**
 * A socket's registration with an {@link RdsSelector}: its interest set, its readiness when last selected and
 * an attachment. Valid until cancelled, by {@link #cancel()}, by the selector's close or after it reported
 * the socket closed ({@link RdsSelector#OP_ERROR}).
 */
public interface RdsSelectionKey
{
    /** @return the registered socket. */
    RdsSocket socket();

    /** @return the selector this key is of. */
    RdsSelector selector();

    /** @return the interest set. */
    int interestOps();

    /**
     * Changes the interest set; a select in progress sees the change. Any thread.
     *
     * @param ops {@link RdsSelector#OP_READ}, {@link RdsSelector#OP_WRITE}, {@link RdsSelector#OP_ERROR}, or-ed.
     * @return this key.
     * @throws IllegalArgumentException if {@code ops} has other bits.
     * @throws java.nio.channels.CancelledKeyException if the key is cancelled.
     */
    RdsSelectionKey interestOps(int ops);

    /**
     * @return the operations the socket was ready for when a select last put this key in the selected-key set:
     *         a subset of the interest set, plus {@link RdsSelector#OP_ERROR} when the socket was closed.
     */
    int readyOps();

    /** @return whether {@link #readyOps()} has {@link RdsSelector#OP_READ}. */
    default boolean isReadable()
    {
        return (readyOps() & RdsSelector.OP_READ) != 0;
    }

    /** @return whether {@link #readyOps()} has {@link RdsSelector#OP_WRITE}. */
    default boolean isWritable()
    {
        return (readyOps() & RdsSelector.OP_WRITE) != 0;
    }

    /** @return whether {@link #readyOps()} has {@link RdsSelector#OP_ERROR}: the socket is closed. */
    default boolean isError()
    {
        return (readyOps() & RdsSelector.OP_ERROR) != 0;
    }

    /** @return the object given at registration (or by {@link #attach}), possibly null. */
    Object attachment();

    /**
     * @param attachment the new attachment, possibly null.
     * @return the previous one.
     */
    Object attach(Object attachment);

    /**
     * Deregisters the socket; it may be registered again afterwards, with this selector or another.
     * Idempotent. The key leaves the selected-key set when the application removes it.
     */
    void cancel();

    /** @return false once cancelled. */
    boolean isValid();
}
