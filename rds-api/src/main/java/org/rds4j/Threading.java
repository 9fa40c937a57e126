package org.rds4j;

/**
 * Who runs a stack's duty cycle (its commands, transport I/O, connection state machines, acks and
 * retransmissions); chosen with {@link RdsStackConfig.Builder#threading(Threading)}.
 */
public enum Threading
{
    /**
     * The default: the stack starts its own agent thread, {@code rds4j-agent-<name>}, which runs the duty
     * cycle and idles with the stack's idle strategy. Application threads hand it messages and commands and
     * are woken by it.
     */
    AGENT,
    /**
     * The stack starts no thread. Application threads run the duty cycle: {@link RdsStack#invoke()} runs one,
     * and every call that waits (a blocking send or receive, {@code bind}-time commands, {@code connections()},
     * {@code cancelSentTo}, {@code close}) runs duty cycles itself while it waits. A non-blocking
     * application must call {@link RdsStack#invoke()} in its loop, as an Aeron client calls its
     * {@code AgentInvoker}. Removes the hand-offs between application threads and the agent.
     */
    INVOKER
}
