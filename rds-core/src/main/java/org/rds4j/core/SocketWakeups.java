package org.rds4j.core;

import java.util.ArrayList;

/**
 * Agent only: the sockets whose blocked senders or receivers the duty cycle wakes at its end, each once, so
 * that a cycle which moves or delivers many messages for a socket unparks its threads once, after all of them.
 */
final class SocketWakeups
{
    private final ArrayList<RdsSocketImpl> sockets = new ArrayList<>();

    /**
     * Schedules a wake-up of a socket's blocked senders for the end of this duty cycle.
     *
     * @param socket the socket.
     */
    void senders(final RdsSocketImpl socket)
    {
        final SocketAgentState state = socket.agentState();
        if (!state.wakeSendersPending)
        {
            list(socket, state);
            state.wakeSendersPending = true;
        }
    }

    /**
     * Schedules a wake-up of a socket's blocked receivers for the end of this duty cycle.
     *
     * @param socket the socket.
     */
    void receivers(final RdsSocketImpl socket)
    {
        final SocketAgentState state = socket.agentState();
        if (!state.wakeReceiversPending)
        {
            list(socket, state);
            state.wakeReceiversPending = true;
        }
    }

    private void list(final RdsSocketImpl socket, final SocketAgentState state)
    {
        if (!state.wakeSendersPending && !state.wakeReceiversPending)
        {
            sockets.add(socket);
        }
    }

    /**
     * At the end of the duty cycle: wakes what was scheduled, and forgets it.
     *
     * @return whether any socket's waiters were woken.
     */
    boolean wakeAll()
    {
        final boolean any = !sockets.isEmpty();
        for (int i = 0, n = sockets.size(); i < n; i++)
        {
            final RdsSocketImpl socket = sockets.get(i);
            final SocketAgentState state = socket.agentState();
            if (state.wakeSendersPending)
            {
                state.wakeSendersPending = false;
                socket.wakeSenders();
            }
            if (state.wakeReceiversPending)
            {
                state.wakeReceiversPending = false;
                socket.wakeReceivers();
            }
        }
        sockets.clear();
        return any;
    }
}
