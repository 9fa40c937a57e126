package org.rds4j.core;

import org.agrona.DirectBuffer;

import java.net.InetSocketAddress;

/**
 * What waits on a socket besides the threads blocked in its calls: a selector's key ({@link SelectorImpl}) or
 * push delivery ({@link PushDelivery}). A socket has at most one. It is told whenever the socket's blocked
 * receivers or senders would be woken (the duty cycle delivered, acked or notified something; the socket
 * closed), and looks at the socket's state itself: a signal says only that something may have changed.
 */
interface SocketWatcher
{
    /**
     * Something the watcher may wait for changed. Called by the thread running the duty cycle, at its end, and
     * by application threads (close); never blocks, and allocates nothing on the duty cycle's path.
     */
    void signal();

    /**
     * The thread running the duty cycle, with a received message for the socket while its receive queue holds
     * nothing: the watcher may take the message itself, past the queue, if it would only pass it on (a driver's
     * session, which writes it for its client); then the queue only counts its bytes ({@link ReceiveQueue#offerHeld}).
     *
     * @return true if the watcher took the message.
     */
    default boolean deliverPast(
        final InetSocketAddress sender, final DirectBuffer buffer, final int offset, final int length)
    {
        return false;
    }
}
