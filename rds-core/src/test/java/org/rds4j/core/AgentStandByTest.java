package org.rds4j.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rds4j.RdsReceiveInfo;
import org.rds4j.RdsSelector;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.MemoryNetwork;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * An agent that stands by for an application's blocking calls ({@link AgentTurns}) takes over as soon as a
 * non-blocking call finds nothing ({@link Invoker#foundNothing}): the application polls now, and nothing else
 * would read what arrives until the stand-by period ends. The receiving stack's periods are an hour here, and its
 * network does not wake it for a frame (as TCP's bytes wait in the kernel), so only the hand-over delivers within
 * the test's deadline; each kind of look is tried. The same for a driver's client, whose reader thread stands by as
 * an embedded agent does. Uses 127.0.77.x.
 */
class AgentStandByTest
{
    private static final long HOUR_NS = TimeUnit.HOURS.toNanos(1);
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final MemoryNetwork network = new MemoryNetwork();
    private final DriverStacks drivers = new DriverStacks();
    private RdsStack polling;
    private RdsStack sending;

    /** A non-blocking look at a socket: the message's text, or null if it found none. */
    enum Look
    {
        RECEIVE
        {
            @Override
            String take(final RdsSocket socket, final RdsSelector selector) throws IOException
            {
                final ByteBuffer dst = ByteBuffer.allocate(64);
                return socket.receive(dst) == null ? null : text(dst.flip());
            }
        },
        RECEIVE_WITH_INFO
        {
            @Override
            String take(final RdsSocket socket, final RdsSelector selector) throws IOException
            {
                final ByteBuffer dst = ByteBuffer.allocate(64);
                return socket.receive(dst, new RdsReceiveInfo()) < 0 ? null : text(dst.flip());
            }
        },
        POLL
        {
            @Override
            String take(final RdsSocket socket, final RdsSelector selector) throws IOException
            {
                final AtomicReference<String> taken = new AtomicReference<>();
                socket.poll((sender, payload) -> taken.set(text(payload)), 1);
                return taken.get();
            }
        },
        SELECT_NOW
        {
            @Override
            String take(final RdsSocket socket, final RdsSelector selector) throws IOException
            {
                return selector.selectNow() == 0 ? null : RECEIVE.take(socket, selector);
            }
        };

        abstract String take(RdsSocket socket, RdsSelector selector) throws IOException;
    }

    @AfterEach
    void tearDown()
    {
        if (sending != null)
        {
            sending.close();
        }
        if (polling != null)
        {
            polling.close();
        }
        drivers.close();
    }

    @ParameterizedTest
    @EnumSource(Look.class)
    void aNonBlockingLookThatFindsNothingEndsTheAgentsStandBy(final Look look) throws Exception
    {
        // a stack learns of a frame only in a duty cycle: what it sends does not wake the polling stack's agent,
        // which would take that for work handed over and lead
        network.wakes(false);
        polling = CoreStack.open(config("standby-p"), network.options().agentStandBy(HOUR_NS, HOUR_NS));
        sending = CoreStack.open(config("standby-s"), network.options());
        standByThenPoll(look, ip("127.0.77.1"), ip("127.0.77.2"));
    }

    /** A driver's client: its reader thread stands by as an embedded agent does, and the doorbell does not reach it. */
    @ParameterizedTest
    @EnumSource(Look.class)
    void aNonBlockingLookThatFindsNothingEndsTheDriverReadersStandBy(final Look look) throws Exception
    {
        final DriverServer driver = drivers.start(drivers.config("standby-d"));
        polling = DriverStack.open(drivers.config("standby-dp").toBuilder()
            .driverDirectory(driver.directory().toString()).build(), new AgentTurns(HOUR_NS, HOUR_NS));
        sending = drivers.attach(driver, "standby-ds");
        standByThenPoll(look, ip("127.0.77.3"), ip("127.0.77.4"));
    }

    /**
     * A blocking receive on {@link #polling} that waits, and returns: the stack's agent (or reader) then stands by, for
     * an hour. Then the socket turns non-blocking, {@link #sending} sends again, and {@code look} must get the
     * message within the deadline.
     */
    private void standByThenPoll(final Look look, final InetAddress pollingIp, final InetAddress sendingIp)
        throws Exception
    {
        final RdsSocket socket = polling.openSocket().bind(new InetSocketAddress(pollingIp, 7000));
        final RdsSocket sender = sending.openSocket().bind(new InetSocketAddress(sendingIp, 7000));
        final RdsSelector selector = polling.openSelector();

        final AtomicReference<Object> first = new AtomicReference<>();
        final Thread receiver = new Thread(() ->
        {
            try
            {
                final ByteBuffer dst = ByteBuffer.allocate(64);
                socket.receive(dst);
                first.set(text(dst.flip()));
            }
            catch (final IOException ex)
            {
                first.set(ex);
            }
        }, "blocked-receiver");
        receiver.start();
        Await.until(WAIT, () -> Await.blockedIn(receiver, "receiveBlocking"), () -> "the receive waits");
        sender.send(ByteBuffer.wrap("first".getBytes(StandardCharsets.US_ASCII)), socket.localAddress());
        receiver.join(WAIT.toMillis());
        assertEquals("first", first.get());

        socket.configureBlocking(false);
        selector.register(socket, RdsSelector.OP_READ, null);
        sender.send(ByteBuffer.wrap("second".getBytes(StandardCharsets.US_ASCII)), socket.localAddress());
        final AtomicReference<String> second = new AtomicReference<>();
        Await.until(WAIT, () -> second.get() != null || set(second, look, socket, selector),
            () -> look + ": the message, with the agent (or reader) standing by for an hour unless a look hands over");
        assertEquals("second", second.get());
    }

    private static boolean set(final AtomicReference<String> into, final Look look, final RdsSocket socket,
        final RdsSelector selector)
    {
        try
        {
            into.set(look.take(socket, selector));
            return into.get() != null;
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static String text(final ByteBuffer payload)
    {
        return StandardCharsets.US_ASCII.decode(payload).toString();
    }

    private static RdsStackConfig config(final String name)
    {
        return RdsStackConfig.builder().name(name).infoFile(false).build();
    }
}
