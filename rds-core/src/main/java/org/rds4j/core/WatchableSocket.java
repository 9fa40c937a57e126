package org.rds4j.core;

import org.rds4j.RdsSocket;

/**
 * A socket a selector ({@link SelectorImpl}) or push delivery ({@link PushDelivery}) can watch: an embedded one
 * ({@link RdsSocketImpl}) or one of a driver's, used from a client process ({@link DriverSocket}).
 */
interface WatchableSocket extends RdsSocket
{
    /**
     * @return {@link org.rds4j.RdsSelector#OP_ERROR} alone if the socket is closed (or its stack gone); else
     *         {@link org.rds4j.RdsSelector#OP_READ} if a message or notification is queued, or-ed with
     *         {@link org.rds4j.RdsSelector#OP_WRITE} if the send buffer has room. Any thread.
     */
    int readyOps();

    /** @return whether a message or a notification is queued; any thread. */
    boolean hasQueued();

    /**
     * Sets the socket's watcher, if it has none.
     *
     * @return the watcher it has: {@code watching} if set now, another one, or null if the socket is closed.
     */
    SocketWatcher watch(SocketWatcher watching);

    /** Removes the watcher if it is {@code watching}. */
    void unwatch(SocketWatcher watching);

    /** @return how a call of the socket's stack waits: where a select on the socket waits. */
    Waiting waiting();

    /** How the threads of a stack's calls wait: on an embedded stack they drive it ({@link AgentCalls}). */
    interface Waiting
    {
        /** @return the stack's name, for messages. */
        String name();

        /** A call begins to wait. */
        void beginWait();

        /** It ends. */
        void endWait();

        /**
         * One step of a wait: returns when something may have changed, at the deadline, or on an interrupt.
         *
         * @param timeoutNs  the call's timeout, 0 for none.
         * @param deadlineNs when it expires, on {@link System#nanoTime()}.
         * @return 0 to look again, or a negative result ({@code ETIMEDOUT}, {@code EINTR}).
         */
        int await(long timeoutNs, long deadlineNs);

        /** A blocking send, or a drain, begins to wait for room in its socket's send buffer. */
        void beginRoomWait();

        /** It ends. */
        void endRoomWait();

        /**
         * One step of a wait for room: as {@link #await}, but the embedded stack's agent keeps the duty cycle
         * ({@link AgentCalls#awaitRoom}).
         *
         * @param timeoutNs  the call's timeout, 0 for none.
         * @param deadlineNs when it expires, on {@link System#nanoTime()}.
         * @return 0 to look again, or a negative result ({@code ETIMEDOUT}, {@code EINTR}).
         */
        int awaitRoom(long timeoutNs, long deadlineNs);

        /**
         * A non-blocking call (a receive, a poll, a {@code selectNow}) found nothing: the application polls, so a
         * thread that stands by for its blocking calls drives the stack now ({@link Invoker#foundNothing}).
         */
        void foundNothing();

        /** @return whether the stack is closed (or gone): its sockets are then closed. */
        boolean isStackClosed();

        /** An application thread changed what a waiting call waits for: wakes whoever may not see it otherwise. */
        void wakeWaiting();
    }
}
