package org.rds4j.core;

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
}
