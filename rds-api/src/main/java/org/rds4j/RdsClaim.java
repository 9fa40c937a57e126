package org.rds4j;

import java.nio.ByteBuffer;

/**
 * A message being written in place: {@link RdsSocket#tryClaim} hands it the stack's own buffer for the payload,
 * the application writes the payload there and {@link #commit() commits} it, and the stack sends those bytes
 * without copying them from an application buffer first (as Aeron's {@code BufferClaim}). {@link #abort()}
 * gives the room back instead.
 * <p>
 * A claim is a reusable holder, made once by the application ({@code new RdsClaim()}) and used for one message
 * at a time, by one thread at a time: sending with it allocates nothing. Between {@link RdsSocket#tryClaim}
 * and {@link #commit()} or {@link #abort()}, the claimed bytes count against the socket's send buffer as a
 * queued message does.
 */
public final class RdsClaim
{
    /** How an {@link RdsSocket} implementation completes the claims it grants; not for applications. */
    public interface Owner
    {
        /**
         * Sends the claimed message.
         *
         * @param token what the implementation gave with the claim.
         */
        void commit(Object token);

        /**
         * Drops the claimed message and frees its room.
         *
         * @param token what the implementation gave with the claim.
         */
        void abort(Object token);
    }

    private Owner owner;
    private Object token;
    private ByteBuffer buffer;
    private int offset;
    private int length;

    /** An empty claim, to be filled by {@link RdsSocket#tryClaim}. */
    public RdsClaim()
    {
    }

    /**
     * For {@link RdsSocket} implementations: the claim is granted.
     *
     * @param owner  completes it.
     * @param token  the implementation's own reference to the message.
     * @param buffer holds the payload's room, from {@code offset}; positioned there, its limit at the room's end.
     * @param offset where the payload starts in {@code buffer}.
     * @param length the claimed length.
     * @throws IllegalStateException if the claim already holds a message.
     */
    public void grant(final Owner owner, final Object token, final ByteBuffer buffer, final int offset, final int length)
    {
        if (this.owner != null)
        {
            throw new IllegalStateException("the claim already holds a message: commit or abort it first");
        }
        this.owner = owner;
        this.token = token;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
    }

    /** @return true between a successful {@link RdsSocket#tryClaim} and {@link #commit()} or {@link #abort()}. */
    public boolean isClaimed()
    {
        return owner != null;
    }

    /**
     * @return the buffer that holds the payload's room: write the message from {@link #offset()} for
     *         {@link #length()} bytes, with absolute puts or with relative ones from its position (where the room
     *         starts; its limit is where it ends). The message is always the whole claimed length: bytes not
     *         written are whatever the stack's buffer held. Valid until {@link #commit()} or {@link #abort()}.
     * @throws IllegalStateException if nothing is claimed.
     */
    public ByteBuffer buffer()
    {
        if (owner == null)
        {
            throw new IllegalStateException("nothing claimed");
        }
        return buffer;
    }

    /** @return where the payload starts in {@link #buffer()}. */
    public int offset()
    {
        return offset;
    }

    /** @return the claimed length: the message's size. */
    public int length()
    {
        return length;
    }

    /**
     * Sends the message: it is queued as a {@link RdsSocket#send} that returned the claimed length would have
     * queued it. Never blocks, never fails: the room was taken at the claim.
     *
     * @throws IllegalStateException if nothing is claimed.
     */
    public void commit()
    {
        final Object message = token;
        release().commit(message);
    }

    /**
     * Drops the message without sending it and frees its room in the send buffer.
     *
     * @throws IllegalStateException if nothing is claimed.
     */
    public void abort()
    {
        final Object message = token;
        release().abort(message);
    }

    private Owner release()
    {
        final Owner current = owner;
        if (current == null)
        {
            throw new IllegalStateException("nothing claimed");
        }
        owner = null;
        token = null;
        buffer = null;
        return current;
    }
}
