package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rds4j.RdsClaim;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.MemoryStacks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * {@link RdsSocket#tryClaim}: a payload written in the stack's own buffer and committed arrives byte for byte; a
 * claim takes send-buffer room and a place in the socket's hand-off queue until it is committed or aborted, so a
 * commit never fails; the results are a non-blocking send's.
 */
class ClaimTest
{
    private static final InetAddress A_IP = ip("127.0.31.1");
    private static final InetAddress B_IP = ip("127.0.31.2");
    private static final InetSocketAddress DEAD = new InetSocketAddress(ip("127.0.31.99"), 7000);
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final MemoryStacks stacks = new MemoryStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    private RdsSocket socket(final String stack, final InetAddress ip, final int port) throws Exception
    {
        final RdsSocket socket = stacks.open(stack).openSocket().bind(new InetSocketAddress(ip, port));
        socket.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        return socket;
    }

    @Test
    void aCommittedClaimArrivesAsWrittenInPlace() throws Exception
    {
        final RdsSocket a = socket("claim-a", A_IP, 4000);
        final RdsSocket b = socket("claim-b", B_IP, 4000);
        final RdsClaim claim = new RdsClaim();
        assertEquals(300, a.tryClaim(300, b.localAddress(), claim));
        assertTrue(claim.isClaimed());
        assertEquals(300, claim.length());
        final ByteBuffer room = claim.buffer();
        assertEquals(300, room.remaining(), "positioned at the payload, its limit at the payload's end");
        for (int i = 0; i < 300; i++)
        {
            room.put(claim.offset() + i, (byte)(i * 7));
        }
        assertEquals(300, a.sendQueuedBytes(), "the claim holds its room");
        claim.commit();
        assertFalse(claim.isClaimed());
        assertThrows(IllegalStateException.class, claim::buffer);
        assertThrows(IllegalStateException.class, claim::commit);

        final ByteBuffer in = ByteBuffer.allocate(1000);
        assertEquals(a.localAddress(), b.receive(in));
        in.flip();
        final byte[] expected = new byte[300];
        for (int i = 0; i < 300; i++)
        {
            expected[i] = (byte)(i * 7);
        }
        final byte[] got = new byte[in.remaining()];
        in.get(got);
        assertArrayEquals(expected, got);
    }

    @Test
    void anAbortedClaimSendsNothingAndFreesItsRoom() throws Exception
    {
        final RdsSocket a = socket("abort-a", A_IP, 4001);
        final RdsSocket b = socket("abort-b", B_IP, 4001);
        final RdsClaim claim = new RdsClaim();
        assertEquals(100, a.tryClaim(100, b.localAddress(), claim));
        claim.buffer().put(claim.offset(), (byte)1);
        claim.abort();
        assertEquals(0, a.sendQueuedBytes());
        assertFalse(claim.isClaimed());
        // the claim is reusable: the next message is the first to arrive
        assertEquals(5, a.tryClaim(5, b.localAddress(), claim));
        claim.buffer().put(claim.offset(), (byte)2);
        claim.commit();
        final ByteBuffer in = ByteBuffer.allocate(100);
        assertEquals(a.localAddress(), b.receive(in));
        assertEquals(5, in.position());
        assertEquals(2, in.get(0));
        b.configureBlocking(false);
        assertNull(b.receive(in.clear()), "nothing else arrived");
    }

    @Test
    void aClaimHasTheResultsOfANonBlockingSend() throws Exception
    {
        final RdsStack stack = stacks.open("results");
        final RdsClaim claim = new RdsClaim();
        final RdsSocket unbound = stack.openSocket();
        assertEquals(RdsResult.ENOTCONN, unbound.tryClaim(10, DEAD, claim));
        final RdsSocket a = stack.openSocket().bind(new InetSocketAddress(A_IP, 4002));
        assertEquals(RdsResult.EINVAL, a.tryClaim(10, new InetSocketAddress("0.0.0.0", 7000), claim));
        assertEquals(RdsResult.EMSGSIZE, a.tryClaim(RdsSocket.MAX_MESSAGE_SIZE + 1, DEAD, claim));
        a.setOption(RdsOptions.SO_SNDBUF, 4096);
        assertEquals(RdsResult.EMSGSIZE, a.tryClaim(4097, DEAD, claim));
        assertFalse(claim.isClaimed());
        // a blocking socket's claim does not wait: a full send buffer is EAGAIN at once
        assertTrue(a.isBlocking());
        assertEquals(4096, a.tryClaim(4096, DEAD, claim));
        final RdsClaim second = new RdsClaim();
        assertEquals(RdsResult.EAGAIN, a.tryClaim(1, DEAD, second));
        assertThrows(IllegalStateException.class, () -> a.tryClaim(1, DEAD, claim), "a claim holds one message");
        claim.commit();
        a.close();
        assertThrows(ClosedChannelException.class, () -> a.tryClaim(1, DEAD, second));
    }

    @Test
    void aClaimCommittedAfterCloseIsDroppedAndFreesItsRoom() throws Exception
    {
        final RdsSocket a = socket("late-a", A_IP, 4005);
        final RdsSocket b = socket("late-b", B_IP, 4005);
        final RdsClaim claim = new RdsClaim();
        assertEquals(100, a.tryClaim(100, b.localAddress(), claim));
        a.close();
        claim.commit();
        assertFalse(claim.isClaimed());
        assertEquals(0, a.sendQueuedBytes(), "dropped as close drops what was queued, not left counted");
    }

    @Test
    void outstandingClaimsHoldPlacesInTheHandOffQueueSoACommitNeverFails() throws Exception
    {
        final RdsStack stack = stacks.open(stacks.config("slots").toBuilder().socketQueueCapacity(64).build());
        final RdsSocket a = stack.openSocket().bind(new InetSocketAddress(A_IP, 4003));
        final RdsSocket b = socket("slots-b", B_IP, 4003);
        final List<RdsClaim> claims = new ArrayList<>();
        while (true)
        {
            final RdsClaim claim = new RdsClaim();
            final int result = a.tryClaim(8, b.localAddress(), claim);
            if (result < 0)
            {
                assertEquals(RdsResult.EAGAIN, result, RdsResult.name(result));
                break;
            }
            claim.buffer().putLong(claim.offset(), claims.size());
            claims.add(claim);
        }
        assertEquals(64, claims.size(), "one place per claim, the queue's capacity in all");
        a.configureBlocking(false);
        // a send needs no place: it is a record of the send ring, which the stack reads past the open claims
        assertEquals(8, a.send(ByteBuffer.allocate(8).putLong(0, -1), b.localAddress()));
        final ByteBuffer in = ByteBuffer.allocate(8);
        assertEquals(a.localAddress(), b.receive(in.clear()));
        assertEquals(-1, in.getLong(0), "the send, committed first, arrives first");
        for (int i = claims.size() - 1; i >= 0; i--)
        {
            claims.get(i).commit();
        }
        for (long i = 63; i >= 0; i--)
        {
            assertEquals(a.localAddress(), b.receive(in.clear()));
            assertEquals(i, in.getLong(0), "in the order committed");
        }
    }

    @Test
    void threadsClaimingOnOneSocketEachArriveInOrder() throws Exception
    {
        final RdsSocket a = socket("threads-a", A_IP, 4004);
        final RdsSocket b = socket("threads-b", B_IP, 4004);
        final int threads = 4;
        final int perThread = 5_000;
        final Map<Integer, Throwable> failures = new ConcurrentHashMap<>();
        final Thread[] senders = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            final int id = t;
            senders[t] = new Thread(() ->
            {
                final RdsClaim claim = new RdsClaim();
                try
                {
                    for (int i = 0; i < perThread; )
                    {
                        if (a.tryClaim(16, b.localAddress(), claim) < 0)
                        {
                            Thread.yield(); // the send buffer is full until the receiver acks
                            continue;
                        }
                        claim.buffer().putInt(claim.offset(), id).putLong(claim.offset() + 4, i++);
                        claim.commit();
                    }
                }
                catch (final Throwable ex)
                {
                    failures.put(id, ex);
                }
            }, "claimer-" + t);
            senders[t].start();
        }
        final long[] next = new long[threads];
        final ByteBuffer in = ByteBuffer.allocate(16);
        for (int n = 0; n < threads * perThread; n++)
        {
            assertEquals(a.localAddress(), b.receive(in.clear()), "message " + n);
            final int id = in.getInt(0);
            assertEquals(next[id]++, in.getLong(4), "thread " + id + "'s messages in order, once each");
        }
        for (final Thread sender : senders)
        {
            sender.join(WAIT.toMillis());
        }
        assertTrue(failures.isEmpty(), failures.toString());
        for (int t = 0; t < threads; t++)
        {
            assertEquals(perThread, next[t]);
        }
    }
}
