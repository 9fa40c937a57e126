package org.rds4j.faults;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rds4j.RdsException;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.Ports;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A driver that stops without dying: a {@link DriverNode} in a child process frozen with SIGSTOP, which keeps its
 * clients' connections open. Its client in this JVM, with a short {@code driverTimeout}, sees the driver's heartbeat
 * stand still: a thread blocked in {@code receive} (no timeout), one in a call (bind) and one in a send too large
 * for the ring, which waits for room on the connection, all fail with ECONNRESET within the timeout and a margin,
 * naming the cause, and so do later calls; an attach to the stopped driver fails too. Once the driver continues
 * (SIGCONT) it reads the let-go client's end and frees its ports. And a client of a running, idle driver is not
 * let go.
 */
class DriverStopTest
{
    private static final int TCP_PORT = 28060;
    private static final String HOST = "127.0.25.1";
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** Past the timeout: the reader looks every quarter of it while nothing arrives, and the machine is small. */
    private static final Duration MARGIN = Duration.ofSeconds(1);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path temp;
    private final List<ChildNode> children = new ArrayList<>();
    private final List<RdsStack> stacks = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        stacks.forEach(RdsStack::close);
        children.forEach(ChildNode::close);
    }

    private ChildNode driver() throws IOException
    {
        return ChildNode.startDriver(children, "DriverStopTest-driver", HOST, temp.resolve("driver"), TCP_PORT);
    }

    private RdsStackConfig clientConfig(final String name)
    {
        return RdsStackConfig.builder().name(name).infoFile(false).driverDirectory(temp.resolve("driver").toString())
            .driverTimeout(TIMEOUT).build();
    }

    private RdsStack attach(final String name)
    {
        final RdsStack stack = RdsStack.open(clientConfig(name));
        stacks.add(stack);
        return stack;
    }

    @Test
    void aStoppedDriversClientFailsItsWaitingAndLaterCallsAndTheDriverFreesItsPortsWhenItContinues() throws Exception
    {
        final ChildNode driver = driver();
        final RdsStack client = attach("stop-client");
        final InetSocketAddress receiving = new InetSocketAddress(ip(HOST), 5000);
        final InetSocketAddress sending = new InetSocketAddress(ip(HOST), 5001);
        final RdsSocket receiver = client.openSocket().bind(receiving);
        final RdsSocket sender = client.openSocket().bind(sending);
        final BlockedCall receive = new BlockedCall("blocked-receive", () -> receiver.receive(ByteBuffer.allocate(64)),
            "receiveBlocking");

        final long beforeFreeze = System.nanoTime();
        driver.freeze();
        final long frozenAt = System.nanoTime();
        final BlockedCall call = new BlockedCall("blocked-call",
            () -> client.openSocket().bind(new InetSocketAddress(ip(HOST), 5002)), "await");
        // over the ring's largest record: it goes on the connection, which holds less and is not read
        final BlockedCall send = new BlockedCall("blocked-send",
            () -> sender.send(ByteBuffer.allocate(RdsSocket.MAX_MESSAGE_SIZE), receiving), "awaitRoom");

        long slowestMs = 0;
        for (final BlockedCall blocked : List.of(receive, call, send))
        {
            final RdsException lost = blocked.failure(frozenAt + TIMEOUT.plus(MARGIN).toNanos());
            assertEquals(RdsResult.ECONNRESET, lost.code(), lost.getMessage());
            assertTrue(lost.getMessage().contains("(pid " + driver.pid() + ") has not run for") &&
                lost.getMessage().endsWith("ms: stopped or hung"), lost.getMessage());
            // the driver's last beat was at most a heartbeat period before it stopped, which was after beforeFreeze
            assertTrue(blocked.endedNs - beforeFreeze >= TIMEOUT.minus(RdsStackConfig.DRIVER_HEARTBEAT_PERIOD).toNanos(),
                blocked.name + " ended " + (blocked.endedNs - beforeFreeze) / 1_000_000 + " ms after the stop");
            slowestMs = Math.max(slowestMs, TimeUnit.NANOSECONDS.toMillis(blocked.endedNs - frozenAt));
        }
        final RdsException later = assertThrows(RdsException.class,
            () -> receiver.send(ByteBuffer.allocate(8), sending));
        assertEquals(RdsResult.ECONNRESET, later.code());
        assertTrue(later.getMessage().endsWith("stopped or hung"), later.getMessage());
        assertEquals(RdsResult.ECONNRESET, assertThrows(RdsException.class, client::openSocket).code());

        // a stopped driver accepts a connection, but never answers its HELLO
        final long attachAt = System.nanoTime();
        final UncheckedIOException attach = assertThrows(UncheckedIOException.class,
            () -> RdsStack.open(clientConfig("stop-late")));
        final long attachMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - attachAt);
        assertTrue(attach.getMessage().endsWith("did not answer within " + TIMEOUT.toMillis() + " ms: stopped or hung"),
            attach.getMessage());
        assertTrue(attachMs < TIMEOUT.plus(MARGIN).toMillis(), attachMs + " ms");

        driver.resume();
        final long resumedAt = System.nanoTime();
        final RdsStack other = attach("stop-other");
        final RdsSocket again = other.openSocket();
        Await.until(WAIT, () -> Ports.tryBind(again, receiving), () -> "the let-go client's port " + receiving + " free");
        final long freedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumedAt);
        other.openSocket().bind(sending);
        System.out.printf("FIGURES DriverStopTest: driverTimeout %d ms; a blocked receive, call and send failed at "
                + "most %d ms after SIGSTOP (receive %d, call %d, send %d); an attach failed after %d ms; the client's "
                + "ports free %d ms after SIGCONT%n", TIMEOUT.toMillis(), slowestMs, receive.endedMs(frozenAt),
            call.endedMs(frozenAt), send.endedMs(frozenAt), attachMs, freedMs);
    }

    @Test
    void aClientOfARunningIdleDriverIsNotLetGo() throws Exception
    {
        driver();
        final RdsStack client = attach("idle-client");
        final RdsSocket socket = client.openSocket().bind(new InetSocketAddress(ip(HOST), 5010));
        final BlockedCall receive = new BlockedCall("idle-receive", () -> socket.receive(ByteBuffer.allocate(64)),
            "receiveBlocking");
        assertFalse(Await.within(TIMEOUT.multipliedBy(4), () -> !receive.thread.isAlive()),
            "the receive ended: " + receive.outcome);
        assertEquals(8, socket.send(ByteBuffer.allocate(8), socket.localAddress()));
        receive.thread.join(WAIT.toMillis());
        assertEquals(socket.localAddress(), receive.outcome, "the receive got the message");
    }

    /** A call on a thread of its own, blocked in it once constructed: what it returned or threw, and when. */
    private static final class BlockedCall
    {
        final String name;
        final Thread thread;
        volatile Object outcome;
        volatile long endedNs;

        BlockedCall(final String name, final Callable<?> call, final String blockedIn)
        {
            this.name = name;
            thread = new Thread(() ->
            {
                try
                {
                    outcome = call.call();
                }
                catch (final Throwable t)
                {
                    outcome = t;
                }
                endedNs = System.nanoTime();
            }, name);
            thread.start();
            Await.until(WAIT, () -> Await.blockedIn(thread, blockedIn), () -> name + " blocked in " + blockedIn);
        }

        /** Waits until the deadline for the call to end, and returns what it threw. */
        RdsException failure(final long deadlineNs) throws InterruptedException
        {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime())));
            assertFalse(thread.isAlive(), name + " still blocked at the deadline");
            return assertInstanceOf(RdsException.class, outcome, name + " returned " + outcome);
        }

        long endedMs(final long sinceNs)
        {
            return TimeUnit.NANOSECONDS.toMillis(endedNs - sinceNs);
        }
    }
}
