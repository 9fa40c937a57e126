package org.rds4j.core;

/**
 * A request from an application thread to the stack's agent, executed on the agent thread in the order
 * sent. Only control operations travel this way (bind, close, cancel, snapshots); messages go through
 * each socket's own queues.
 */
@FunctionalInterface
interface StackCommand
{
    void execute(StackAgent agent);
}
