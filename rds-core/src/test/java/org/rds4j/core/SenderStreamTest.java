package org.rds4j.core;

import org.agrona.BitUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.MemoryStacks;
import org.rds4j.core.test.Payloads;
import org.rds4j.core.wire.RdsHeader;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A blocking sender streaming small messages runs a duty cycle itself once they pile up unread in its socket's send
 * ring to {@link AgentCalls#SENDER_STREAM_BYTES} of records; larger messages it leaves to the agent. The sending
 * stack's agent is kept out of the way by a call that waits without leading (the agent thread is then dormant and
 * no thread runs a duty cycle), so every cycle counted is one a sender ran. A first message to a dead peer, never
 * acked, keeps every later send from being alone in the send buffer (which would run a cycle anyway). On a
 * {@link org.rds4j.core.test.MemoryNetwork}, addresses 127.0.14.x; 127.0.14.9 has no stack.
 */
class SenderStreamTest
{
    private static final InetSocketAddress DEAD = new InetSocketAddress(ip("127.0.14.9"), 7000);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final MemoryStacks stacks = new MemoryStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void aSenderOfSmallMessagesRunsACycleOnceAQueueOfFramesHasPiledUp() throws Exception
    {
        final int payload = 64;
        // the most messages that stay queued: one more makes the sender run a cycle
        final int below = (AgentCalls.SENDER_STREAM_BYTES - 1) / record(payload);
        assertEquals(255, below);
        streamsWhileTheAgentIsDormant(payload, below);
    }

    @Test
    void atTheLargestSmallSizeTheRuleStillHolds() throws Exception
    {
        final int payload = AgentCalls.SENDER_STREAM_MAX_PAYLOAD;
        final int below = (AgentCalls.SENDER_STREAM_BYTES - 1) / record(payload);
        assertEquals(30, below);
        streamsWhileTheAgentIsDormant(payload, below);
    }

    @Test
    void largeMessagesAreLeftToTheAgent() throws Exception
    {
        final CoreStack a = stacks.open("ss-large-a");
        final CoreStack b = stacks.open("ss-large-b");
        final RdsSocket tx = socket(a, "127.0.14.1");
        final RdsSocket rx = socket(b, "127.0.14.2");
        final int payload = AgentCalls.SENDER_STREAM_MAX_PAYLOAD + 1;
        holdTheAgent(a, tx);
        final ByteBuffer src = ByteBuffer.allocate(payload);
        final long cycles = counter(a, "send_caller_cycles");
        final long queued = counter(a, "send_queued");
        final int count = 200; // over six times the frames that make a sender of smaller messages run a cycle
        for (int n = 0; n < count; n++)
        {
            assertEquals(payload, tx.send(Payloads.fill(src, 1, n, payload), rx.localAddress()));
        }
        assertEquals(0, counter(a, "send_caller_cycles") - cycles, "no cycle on the sending thread");
        assertEquals(0, counter(a, "send_queued") - queued, "every message waits for the agent");
        a.calls().endWait();
        receiveInOrder(rx, tx.localAddress(), count, payload);
    }

    /** @return the bytes a message takes in its socket's send ring: its frame, rounded up to a record's alignment. */
    private static int record(final int payload)
    {
        return BitUtil.align(RdsHeader.LENGTH + payload, SendRing.ALIGN);
    }

    /**
     * Sends {@code below} messages (none runs a cycle), then one more (it runs one, which queues all of them to
     * the connection), then {@code below} again, and checks that all arrive in order once the agent is back.
     */
    private void streamsWhileTheAgentIsDormant(final int payload, final int below) throws Exception
    {
        final CoreStack a = stacks.open("ss-" + payload + "-a");
        final CoreStack b = stacks.open("ss-" + payload + "-b");
        final RdsSocket tx = socket(a, "127.0.14.1");
        final RdsSocket rx = socket(b, "127.0.14.2");
        holdTheAgent(a, tx);
        final ByteBuffer src = ByteBuffer.allocate(payload);
        final long cycles = counter(a, "send_caller_cycles");
        final long queued = counter(a, "send_queued");
        int n = 0;
        for (; n < below; n++)
        {
            assertEquals(payload, tx.send(Payloads.fill(src, 1, n, payload), rx.localAddress()));
        }
        assertEquals(0, counter(a, "send_caller_cycles") - cycles, "below the pile, no cycle");
        assertEquals(0, counter(a, "send_queued") - queued, "all wait in the socket's send ring");
        assertEquals(payload, tx.send(Payloads.fill(src, 1, n++, payload), rx.localAddress()));
        assertEquals(1, counter(a, "send_caller_cycles") - cycles, "the sender ran one cycle");
        assertEquals(below + 1, counter(a, "send_queued") - queued, "which queued every message to the connection");
        for (int i = 0; i < below; i++, n++)
        {
            assertEquals(payload, tx.send(Payloads.fill(src, 1, n, payload), rx.localAddress()));
        }
        assertEquals(1, counter(a, "send_caller_cycles") - cycles);
        assertEquals(below + 1, counter(a, "send_queued") - queued);
        a.calls().endWait();
        receiveInOrder(rx, tx.localAddress(), n, payload);
    }

    /**
     * Connects {@code tx}'s stack to the receiver, sends one message to the dead peer, then begins a wait that never
     * leads: the agent thread goes dormant and runs no duty cycle until {@link AgentCalls#endWait()}.
     */
    private static void holdTheAgent(final CoreStack a, final RdsSocket tx) throws Exception
    {
        final long queued = counter(a, "send_queued");
        assertEquals(8, tx.send(ByteBuffer.allocate(8), DEAD));
        Await.until(WAIT, () -> counter(a, "send_queued") == queued + 1, () -> "the dead peer's message queued");
        a.calls().beginWait();
        final Thread agent = Await.thread("rds4j-agent-" + a.config().name());
        Await.until(WAIT, () -> Await.idling(agent) && !Await.blockedIn(agent, "lead"), () -> "the agent dormant");
    }

    private static RdsSocket socket(final CoreStack stack, final String address) throws Exception
    {
        return stack.openSocket().bind(new InetSocketAddress(ip(address), 4000)).setOption(RdsOptions.SO_RCVTIMEO, WAIT);
    }

    private static long counter(final CoreStack stack, final String name)
    {
        return stack.counters().get(name);
    }

    private static void receiveInOrder(final RdsSocket rx, final InetSocketAddress from, final int count, final int length)
        throws Exception
    {
        final ByteBuffer dst = ByteBuffer.allocate(length + 1);
        for (int n = 0; n < count; n++)
        {
            dst.clear();
            assertEquals(from, rx.receive(dst), "message " + n);
            dst.flip();
            assertEquals(length, dst.remaining());
            assertEquals(n, Payloads.sequence(dst), "in order");
            assertTrue(Payloads.verify(dst), "every byte of message " + n);
        }
    }
}
