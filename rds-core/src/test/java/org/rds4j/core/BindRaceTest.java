package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.core.test.AgentGate;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A bind returns before the stack's agent has put the socket into its table of ports (the agent runs it as a
 * command, at the start of its next duty cycle): a message the agent reads in between must still reach the socket,
 * as a kernel socket has its port from the moment bind returns. A driver's client met this as a lost message: its
 * bind's reply comes back at once, and the peer's message could reach the driver's agent within the duty cycle it
 * was in when the bind was queued.
 */
class BindRaceTest
{
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final MemoryStacks stacks = new MemoryStacks();
    private final AgentGate gate = new AgentGate();

    @AfterEach
    void tearDown()
    {
        gate.hold = false;
        stacks.close();
    }

    /**
     * The receiving stack's agent is held while the sender's frame reaches its transport; then, in its next duty
     * cycle, after it has run its commands and before it reads its transport, it binds the socket itself (so the bind
     * is a command for the cycle after). The frame it then reads is for that socket's port.
     */
    @Test
    void aMessageReadBeforeTheAgentRanTheBindReachesTheSocket() throws Exception
    {
        final AtomicReference<Runnable> inNextCycle = new AtomicReference<>();
        final AgentExtension runInCycle = new AgentExtension()
        {
            @Override
            public int doWork()
            {
                final Runnable task = inNextCycle.getAndSet(null);
                if (task != null)
                {
                    task.run();
                }
                return 0;
            }

            @Override
            public void stopping()
            {
            }
        };
        final CoreStack receiving = stacks.open(stacks.config("race-b"),
            stacks.network().options().idleStrategy(gate).agentExtension(runInCycle));
        final CoreStack sending = stacks.open("race-a");
        final RdsSocket from = sending.openSocket().bind(new InetSocketAddress(ip("127.0.90.1"), 100));
        final RdsSocket first = receiving.openSocket().bind(new InetSocketAddress(ip("127.0.90.2"), 200));
        first.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        // the connection up, and each side's table of the other's congestion map
        assertEquals(1, from.send(ByteBuffer.wrap(new byte[] {7}), first.localAddress()));
        assertEquals(from.localAddress(), first.receive(ByteBuffer.allocate(8)));

        final RdsSocket late = receiving.openSocket();
        final InetSocketAddress latePort = new InetSocketAddress(ip("127.0.90.2"), 300);
        gate.hold = true;
        Await.until(WAIT, () -> gate.held, () -> "the receiving agent held");
        final long transmitted = sending.counters().get("send_transmitted");
        final byte[] message = {1, 2, 3, 4};
        assertEquals(4, from.send(ByteBuffer.wrap(message), latePort));
        // transmitted: the frame is in the receiving transport's inbox, read in the agent's next cycle
        Await.until(WAIT, () -> sending.counters().get("send_transmitted") > transmitted, () -> "the frame sent");
        final AtomicReference<IOException> failed = new AtomicReference<>();
        inNextCycle.set(() ->
        {
            try
            {
                late.bind(latePort);
            }
            catch (final IOException ex)
            {
                failed.set(ex);
            }
        });
        gate.hold = false;
        Await.until(WAIT, () -> late.localAddress() != null || failed.get() != null, () -> "bound in the cycle");
        assertNull(failed.get());

        late.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        final ByteBuffer dst = ByteBuffer.allocate(8);
        assertEquals(from.localAddress(), late.receive(dst), "the message reached the socket");
        assertArrayEquals(message, java.util.Arrays.copyOf(dst.array(), dst.position()));
        assertEquals(0L, receiving.counters().get("recv_drop_no_sock"));
    }
}
