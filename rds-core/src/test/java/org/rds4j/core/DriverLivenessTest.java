package org.rds4j.core;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingConsumer;
import org.rds4j.RdsException;
import org.rds4j.RdsOptions;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.test.AgentGate;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;
import org.rds4j.core.test.Ports;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rds4j.core.RawDriverClient.body;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * A driver's side of its clients' lives: a client whose connection ends is forgotten at once (its ports free, its
 * queued bytes dropped and counted), a client that sends a malformed frame is cut off without harm to the others,
 * a driver that stops or whose agent hangs makes its clients' waiting and later calls fail with
 * {@code ECONNRESET}, and its files are its user's only. Clients here are raw connections speaking
 * {@link DriverProtocol}, or attached stacks.
 */
class DriverLivenessTest
{
    private static final InetAddress A_IP = ip("127.0.71.1");
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final DriverStacks stacks = new DriverStacks();

    @AfterEach
    void tearDown()
    {
        stacks.close();
    }

    @Test
    void aWriterThatFindsTheConnectionFullDoesNotWaitForTheReader() throws Exception
    {
        // a push handler run on the client's reader (a direct executor) holds it, as one that sends and waits for
        // the writers' lock would; meanwhile frames larger than the client's ring fill the connection
        final DriverServer driver = stacks.start(stacks.config("live-room"));
        try (RdsStack client = stacks.attach(driver, "live-room-client"))
        {
            final CountDownLatch holding = new CountDownLatch(1);
            final CountDownLatch release = new CountDownLatch(1);
            final AtomicReference<String> handlerThread = new AtomicReference<>();
            final AtomicBoolean handlerReturned = new AtomicBoolean();
            final RdsSocket pushed = client.openSocket().bind(new InetSocketAddress(A_IP, 7300));
            pushed.startDelivery(Runnable::run, (from, payload) ->
            {
                handlerThread.set(Thread.currentThread().getName());
                holding.countDown();
                awaitQuietly(release);
                handlerReturned.set(true);
            });
            final RdsSocket sender = client.openSocket().bind(new InetSocketAddress(A_IP, 7301));
            sender.setOption(RdsOptions.SO_SNDBUF, 16 << 20);
            sender.configureBlocking(false); // the driver's RELEASED frames wait behind the held reader
            try
            {
                assertEquals(8, sender.send(ByteBuffer.allocate(8), pushed.localAddress()));
                assertTrue(holding.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the handler runs");
                assertTrue(handlerThread.get().startsWith("rds4j-driver-client-"), handlerThread.get());

                final InetSocketAddress nobody = new InetSocketAddress(A_IP, 7302); // dropped by the driver's stack
                final Thread writer = new Thread(() ->
                {
                    try
                    {
                        for (int i = 0; i < 8; i++)
                        {
                            assertEquals(1 << 20, sender.send(ByteBuffer.allocate(1 << 20), nobody));
                        }
                    }
                    catch (final IOException ex)
                    {
                        throw new AssertionError(ex);
                    }
                }, "room-writer");
                writer.start();
                writer.join(WAIT.toMillis());
                assertFalse(writer.isAlive(), "8 frames of 1 MiB written while the reader was held");
                assertFalse(handlerReturned.get(), "the reader was still held");
            }
            finally
            {
                release.countDown();
            }
        }
    }

    private static void awaitQuietly(final CountDownLatch latch)
    {
        try
        {
            latch.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aClientWhoseConnectionEndsIsForgottenAtOnceAndItsPortsAreFree() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-a"));
        final InetSocketAddress port = new InetSocketAddress(A_IP, 7000);
        try (RdsStack other = stacks.attach(driver, "live-other"))
        {
            final RawDriverClient dead = new RawDriverClient(driver);
            dead.hello();
            assertEquals(0, dead.bind(port));
            final RdsException taken = assertThrows(RdsException.class, () -> other.openSocket().bind(port));
            assertEquals(RdsResult.EADDRINUSE, taken.code());

            dead.close(); // as a process killed with -9: the kernel closes its end
            final RdsSocket again = other.openSocket();
            Await.until(WAIT, () -> Ports.tryBind(again, port), () -> "port free after the client's end");
            assertEquals(1L, driver.counters().get("driver_clients_gone"));
            assertEquals(0L, driver.counters().get("driver_clients_cut_off"));
        }
    }

    @Test
    void aClientThatSendsAMalformedFrameIsCutOffAndTheOthersGoOn() throws Throwable
    {
        cutOffWhileAnotherGoesOn("live-b", 7001, bad ->
        {
            bad.write((byte)99, 1, body(4).putInt(1).flip());
            assertThrows(IOException.class, bad::readFrame, "the driver closes a client that breaks the protocol");
        });
    }

    /**
     * A raw client says HELLO and then misbehaves; the driver must cut it off (counted once), and a well-behaved
     * client attached all along still gets its own message back, byte for byte.
     */
    private void cutOffWhileAnotherGoesOn(final String name, final int port,
        final ThrowingConsumer<RawDriverClient> misbehave) throws Throwable
    {
        final DriverServer driver = stacks.start(stacks.config(name));
        try (RdsStack good = stacks.attach(driver, name + "-good"))
        {
            final RdsSocket socket = receiver(good, port);
            try (RawDriverClient bad = new RawDriverClient(driver))
            {
                bad.hello();
                misbehave.accept(bad);
            }
            // counted just after the driver closes the connection
            Await.until(WAIT, () -> driver.counters().get("driver_clients_cut_off") == 1L, () -> "" + driver.counters());
            final byte[] message = {1, 2, 3, 4, 5};
            assertEquals(5, socket.send(ByteBuffer.wrap(message), socket.localAddress()));
            final ByteBuffer dst = ByteBuffer.allocate(16);
            assertEquals(socket.localAddress(), socket.receive(dst));
            assertArrayEquals(message, java.util.Arrays.copyOf(dst.array(), dst.position()));
        }
    }

    /**
     * The session remembers the socket a frame named last (a stream's frames name the same one): a number closed
     * and opened again must name the new socket, and a closed number none, whether the conductor runs the frame (on
     * the connection) or the agent (from the ring).
     */
    @Test
    void aSocketNumberClosedAndOpenedAgainNamesTheNewSocket() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-reopen"));
        try (RdsStack good = stacks.attach(driver, "live-reopen-good"))
        {
            final RdsSocket receiver = receiver(good, 7009);
            try (RawDriverClient raw = new RawDriverClient(driver))
            {
                raw.hello();
                assertEquals(0, raw.bind(new InetSocketAddress(A_IP, 7008)));
                raw.write(DriverProtocol.SEND, 1, sendBody(receiver.localAddress(), (byte)1));
                expectFrom(receiver, 7008, (byte)1);

                raw.write(DriverProtocol.CLOSE, 1, body(0));
                raw.write(DriverProtocol.OPEN, 1, body(8).putInt(1 << 20).putInt(1 << 20).flip());
                final ByteBuffer bind = body(8 + DriverProtocol.ADDRESS).putInt(8).putInt(0);
                DriverProtocol.putAddress(new UnsafeBuffer(bind), 8, new InetSocketAddress(A_IP, 7010));
                raw.write(DriverProtocol.BIND, 1, bind.position(bind.capacity()).flip());
                ByteBuffer reply;
                do
                {
                    reply = raw.readFrame(); // after the close's last RELEASED report
                }
                while (reply.get(DriverProtocol.TYPE_OFFSET) != DriverProtocol.REPLY);
                assertEquals(8, reply.getInt(DriverProtocol.HEADER), "the call's number");
                assertEquals(0, reply.getInt(DriverProtocol.HEADER + 4), "the new socket 1 bound");
                raw.writeToRing(DriverProtocol.SEND, 1, sendBody(receiver.localAddress(), (byte)2));
                raw.write(DriverProtocol.SEND, 1, sendBody(receiver.localAddress(), (byte)3));
                expectFrom(receiver, 7010, (byte)2);
                expectFrom(receiver, 7010, (byte)3);

                raw.write(DriverProtocol.CLOSE, 1, body(0));
                raw.write(DriverProtocol.SEND, 1, sendBody(receiver.localAddress(), (byte)4));
                raw.readToEnd();
            }
            Await.until(WAIT, () -> driver.counters().get("driver_clients_cut_off") == 1L, () -> "" + driver.counters());
            assertEquals(0L, driver.counters().get("driver_clients_gone"), "cut off for the send on a closed socket");
        }
    }

    /** A socket of {@code stack} bound to {@code A_IP:port}, whose receive gives up after {@link #WAIT}. */
    private static RdsSocket receiver(final RdsStack stack, final int port) throws IOException
    {
        final RdsSocket socket = stack.openSocket().bind(new InetSocketAddress(A_IP, port));
        socket.setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        return socket;
    }

    private static ByteBuffer sendBody(final InetSocketAddress destination, final byte payload)
    {
        final ByteBuffer send = body(DriverProtocol.ADDRESS + 1);
        DriverProtocol.putAddress(new UnsafeBuffer(send), 0, destination);
        return send.put(DriverProtocol.ADDRESS, payload);
    }

    private static void expectFrom(final RdsSocket receiver, final int port, final byte payload) throws IOException
    {
        final ByteBuffer dst = ByteBuffer.allocate(16);
        assertEquals(new InetSocketAddress(A_IP, port), receiver.receive(dst));
        assertArrayEquals(new byte[] {payload}, java.util.Arrays.copyOf(dst.array(), dst.position()));
    }

    @Test
    void framesRunInTheOrderOfTheirNumbersWhetherInTheRingOrOnTheConnection() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-order"));
        try (RawDriverClient client = new RawDriverClient(driver))
        {
            client.hello();
            assertFalse(Files.exists(driver.directory().resolve("client-4242-1.ring")), "the client deleted its name");
            // the BIND (frame 2) is in the ring before the OPEN (frame 1) is on the connection: run the other way
            // round, the BIND would name a socket not yet open and cut the client off
            final ByteBuffer bind = body(8 + DriverProtocol.ADDRESS).putInt(7).putInt(0);
            DriverProtocol.putAddress(new UnsafeBuffer(bind), 8, new InetSocketAddress(A_IP, 7005));
            client.writeToRing(2, RawDriverClient.frame(DriverProtocol.BIND, 1, bind.position(bind.capacity()).flip()));
            client.writeSeq(1);
            client.write(RawDriverClient.frame(DriverProtocol.OPEN, 1, body(8).putInt(1 << 20).putInt(1 << 20).flip()));
            client.number = 2;
            final ByteBuffer reply = client.readFrame();
            assertEquals(DriverProtocol.REPLY, reply.get(DriverProtocol.TYPE_OFFSET));
            assertEquals(7, reply.getInt(DriverProtocol.HEADER));
            assertEquals(0, reply.getInt(DriverProtocol.HEADER + 4), "bound");
            assertEquals(7005, reply.getLong(DriverProtocol.HEADER + 8));

            // a malformed frame in the ring cuts the client off, as one on the connection does
            try
            {
                client.writeToRing((byte)99, 1, body(4).putInt(1).flip());
            }
            catch (final IOException cutOffAlready)
            {
                // the driver, awake, read the record and closed the connection before its doorbell was written
            }
            client.readToEnd();
        }
        Await.until(WAIT, () -> driver.counters().get("driver_clients_cut_off") == 1L, () -> "" + driver.counters());
        assertEquals(0L, driver.counters().get("driver_clients_gone"));
        try (RdsStack other = stacks.attach(driver, "live-order-other"))
        {
            final RdsSocket again = other.openSocket();
            Await.until(WAIT, () -> Ports.tryBind(again, new InetSocketAddress(A_IP, 7005)), () -> "the port freed");
        }
    }

    @Test
    void aRingWrittenOverCutsItsClientOffAndNoOtherNotices() throws Throwable
    {
        cutOffWhileAnotherGoesOn("live-scribble", 7006, bad ->
        {
            // a record at the ring's head that claims to be longer than the ring, and a tail that says it is there
            // to read
            bad.scribble(0, body(8).putInt(1 << 30).putInt(1).flip());
            bad.scribble(DriverRing.CAPACITY + RecordRing.TAIL_OFFSET,
                body(8).putLong(DriverRing.CAPACITY).flip());
            bad.write(RawDriverClient.frame(DriverProtocol.DOORBELL, 0, body(0)));
            bad.readToEnd();
        });
    }

    /**
     * A client writes over the positions of the ring the driver writes to it, and then makes the driver write to it
     * (replies, released bytes): the driver's writes land somewhere in that ring, the client loses its frames, and
     * the driver serves its other clients and ends this one's session as any other when it goes.
     */
    @Test
    void aClientThatWritesOverTheRingToItHarmsOnlyItself() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-down"));
        try (RdsStack good = stacks.attach(driver, "live-down-good"))
        {
            final RdsSocket socket = receiver(good, 7007);
            final long[][] positions = {{Long.MAX_VALUE, 3}, {-1, 1L << 40}, {DriverRing.DOWN_CAPACITY * 5L + 3, 0}};
            for (final long[] headAndTail : positions)
            {
                try (RawDriverClient bad = new RawDriverClient(driver))
                {
                    bad.hello();
                    bad.scribbleDown(DriverRing.DOWN_CAPACITY + RecordRing.HEAD_OFFSET,
                        body(8).putLong(headAndTail[0]).flip());
                    bad.scribbleDown(DriverRing.DOWN_CAPACITY + RecordRing.TAIL_OFFSET,
                        body(8).putLong(headAndTail[1]).flip());
                    for (int id = 1; id <= 50; id++)
                    {
                        bad.write(DriverProtocol.OPEN, id, body(8).putInt(1 << 20).putInt(1 << 20).flip());
                        final ByteBuffer bind = body(8 + DriverProtocol.ADDRESS).putInt(id).putInt(0);
                        DriverProtocol.putAddress(new UnsafeBuffer(bind), 8, new InetSocketAddress(A_IP, 7100 + id));
                        bad.write(DriverProtocol.BIND, id, bind.position(bind.capacity()).flip());
                        bad.write(DriverProtocol.QUERY, 0, body(8).putInt(id).putInt(DriverProtocol.QUERY_CLIENTS)
                            .flip());
                    }
                }
            }
            Await.until(WAIT, () -> driver.counters().get("driver_clients_gone") == positions.length,
                () -> "" + driver.counters());
            assertEquals(0L, driver.counters().get("driver_clients_cut_off"));
            final byte[] message = {9, 8, 7};
            assertEquals(3, socket.send(ByteBuffer.wrap(message), socket.localAddress()));
            final ByteBuffer dst = ByteBuffer.allocate(16);
            assertEquals(socket.localAddress(), socket.receive(dst));
            assertArrayEquals(message, java.util.Arrays.copyOf(dst.array(), dst.position()));
            // the ports the bad clients bound were freed with their sessions
            final RdsSocket again = good.openSocket();
            Await.until(WAIT, () -> Ports.tryBind(again, new InetSocketAddress(A_IP, 7150)), () -> "port 7150 freed");
        }
    }

    /** Rings a dead driver's clients never mapped (both kinds) are deleted when the next driver starts there. */
    @Test
    void aDriverDeletesTheRingsADeadOneLeftBehind() throws Exception
    {
        final DriverServer first = stacks.start(stacks.config("live-left"));
        final Path directory = first.directory();
        first.close();
        final Path[] left = {directory.resolve("client-77-1.ring"), directory.resolve("client-77-1.ring.down")};
        for (final Path file : left)
        {
            Files.write(file, new byte[] {1});
        }
        final Path other = Files.write(directory.resolve("notes.txt"), new byte[] {1});
        try (DriverServer second = DriverServer.start(stacks.config("live-left"), directory, false))
        {
            for (final Path file : left)
            {
                assertFalse(Files.exists(file), file + " deleted");
            }
            assertTrue(Files.exists(other), "only rings are deleted");
        }
    }

    @Test
    void aFrameBeforeHelloOrATooLongOneCutsTheClientOff() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-c"));
        try (RawDriverClient early = new RawDriverClient(driver))
        {
            early.write(DriverProtocol.OPEN, 1, body(8).putInt(1000).putInt(1000).flip());
            assertThrows(IOException.class, early::readFrame);
        }
        try (RawDriverClient huge = new RawDriverClient(driver))
        {
            huge.hello();
            final ByteBuffer header = body(4).putInt(DriverProtocol.MAX_FRAME + 1).flip();
            huge.write(header);
            assertThrows(IOException.class, huge::readFrame);
        }
        Await.until(WAIT, () -> driver.counters().get("driver_clients_cut_off") == 2L, () -> "" + driver.counters());
    }

    @Test
    void aClientThatReportsMoreBytesTakenThanItWasHandedIsCutOff() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-f"));
        try (RawDriverClient greedy = new RawDriverClient(driver))
        {
            greedy.hello();
            assertEquals(0, greedy.bind(new InetSocketAddress(A_IP, 7003)));
            // nothing delivered yet: its socket's receive-buffer count would go below zero
            greedy.write(DriverProtocol.CONSUMED, 1, body(8).putLong(1).flip());
            greedy.readToEnd(); // returns when the driver closes the connection
        }
        Await.until(WAIT, () -> driver.counters().get("driver_clients_cut_off") == 1L, () -> "" + driver.counters());
        assertEquals(0L, driver.counters().get("driver_clients_gone"));
    }

    @Test
    void aClientThatIgnoresItsSendBufferIsCutOff() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-g"));
        try (RawDriverClient flood = new RawDriverClient(driver))
        {
            flood.hello();
            assertEquals(0, flood.bind(new InetSocketAddress(A_IP, 7004))); // SO_SNDBUF 1 MiB
            // three 1 MiB messages to a peer that never acks: a client that admits as it must stops after the
            // second (its queued bytes then reach SO_SNDBUF); the driver refuses to hold a third
            final ByteBuffer send = body(DriverProtocol.ADDRESS + (1 << 20));
            DriverProtocol.putAddress(new UnsafeBuffer(send), 0, new InetSocketAddress(ip("127.0.9.9"), 7000));
            for (int i = 0; i < 3; i++)
            {
                flood.write(DriverProtocol.SEND, 1, send.clear());
            }
            flood.readToEnd();
        }
        Await.until(WAIT, () -> driver.counters().get("driver_clients_cut_off") == 1L, () -> "" + driver.counters());
    }

    /** A driver that holds each socket to 256 KiB of send and receive buffer. */
    private DriverServer smallBufferDriver(final String name)
    {
        return stacks.start(stacks.config(name).toBuilder()
            .maxSocketBufferBytes(256 << 10).sendBufferBytes(256 << 10).receiveBufferBytes(256 << 10).build());
    }

    @Test
    void aClientIsHeldToTheDriversLargestSocketBuffer() throws Exception
    {
        final DriverServer driver = smallBufferDriver("live-h");
        // this process's own defaults (1 MiB buffers, 64 MiB at most) are larger than the driver allows
        try (RdsStack client = stacks.attach(driver, "live-h-client"))
        {
            final RdsSocket socket = client.openSocket().bind(new InetSocketAddress(A_IP, 7005));
            assertEquals(256 << 10, socket.getOption(RdsOptions.SO_SNDBUF), "the default, lowered at open");
            assertEquals(256 << 10, socket.getOption(RdsOptions.SO_RCVBUF));
            socket.setOption(RdsOptions.SO_RCVBUF, 8 << 20);
            socket.setOption(RdsOptions.SO_SNDBUF, 8 << 20);
            assertEquals(256 << 10, socket.getOption(RdsOptions.SO_RCVBUF));
            assertEquals(256 << 10, socket.getOption(RdsOptions.SO_SNDBUF));
            socket.configureBlocking(false);
            final InetSocketAddress peer = new InetSocketAddress(ip("127.0.9.9"), 7000);
            assertEquals(RdsResult.EMSGSIZE, socket.send(ByteBuffer.allocate((256 << 10) + 1), peer));
            // admitted by the client against the lowered buffer, so the driver keeps it
            assertEquals(256 << 10, socket.send(ByteBuffer.allocate(256 << 10), peer));
            assertEquals(RdsResult.EAGAIN, socket.send(ByteBuffer.allocate(1), peer));
        }
        assertEquals(0L, driver.counters().get("driver_clients_cut_off"));
    }

    @Test
    void aClientThatOpensWithBuffersBeyondTheDriversBoundIsCutOffPastThem() throws Exception
    {
        final DriverServer driver = smallBufferDriver("live-i");
        try (RawDriverClient flood = new RawDriverClient(driver))
        {
            flood.hello();
            assertEquals(0, flood.bind(new InetSocketAddress(A_IP, 7006))); // asks for SO_SNDBUF 1 MiB
            // 200 KiB messages to a peer that never acks: the socket's buffer is 256 KiB, so the driver holds at
            // most 512 KiB before it refuses; with the 1 MiB asked for it would have taken ten of them
            final ByteBuffer send = body(DriverProtocol.ADDRESS + (200 << 10));
            DriverProtocol.putAddress(new UnsafeBuffer(send), 0, new InetSocketAddress(ip("127.0.9.9"), 7000));
            for (int i = 0; i < 4; i++)
            {
                flood.write(DriverProtocol.SEND, 1, send.clear());
            }
            flood.readToEnd();
        }
        Await.until(WAIT, () -> driver.counters().get("driver_clients_cut_off") == 1L, () -> "" + driver.counters());
    }

    @Test
    void whenTheDriverStopsWaitingAndLaterCallsFailWithECONNRESET() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-d"));
        final RdsStack client = stacks.attach(driver, "live-client");
        try
        {
            final RdsSocket socket = client.openSocket().bind(new InetSocketAddress(A_IP, 7002));
            final AtomicReference<Object> outcome = new AtomicReference<>("not returned");
            final Thread receiver = blockedReceiver(socket, outcome);

            driver.close();
            receiver.join(WAIT.toMillis());
            assertFalse(receiver.isAlive(), "a blocked receive ends when the driver goes");
            assertTrue(outcome.get() instanceof RdsException, "got " + outcome.get());
            assertEquals(RdsResult.ECONNRESET, ((RdsException)outcome.get()).code());
            final RdsException send = assertThrows(RdsException.class,
                () -> socket.send(ByteBuffer.allocate(1), socket.localAddress()));
            assertEquals(RdsResult.ECONNRESET, send.code());
            final RdsException open = assertThrows(RdsException.class, client::openSocket);
            assertEquals(RdsResult.ECONNRESET, open.code());
        }
        finally
        {
            client.close();
        }
    }

    @Test
    void anIdleDriverWithoutAnInfoFileBeatsEveryHeartbeatPeriod() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-beat")); // infoFile(false)
        final DriverHeartbeat heartbeat = DriverHeartbeat.open(driver.directory());
        final long first = heartbeat.millis();
        final long period = RdsStackConfig.DRIVER_HEARTBEAT_PERIOD.toMillis();
        // ten beats and more, each new heartbeat at most a period and a margin after the one before
        long last = first;
        while (last < first + 10 * period)
        {
            final long before = last;
            Await.until(Duration.ofMillis(period + 400), () -> heartbeat.millis() > before,
                () -> "a beat after " + before);
            last = heartbeat.millis();
        }
    }

    @Test
    void aClientLetsADriverWhoseAgentHangsGoAfterItsDriverTimeoutAndTheDriverFreesItsPortOnceItRuns()
        throws Exception
    {
        final AgentGate gate = new AgentGate();
        final DriverServer driver = stacks.startGated(stacks.config("live-hang"), gate);
        letGoWhileHeld(driver, "live-hang", 7003, () -> gate.hold = true, () -> gate.held, () -> gate.hold = false);
    }

    @Test
    void aClientLetsADriverWhoseConductorHangsGoThoughItsAgentRuns() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-stuck"));
        final CountDownLatch stuck = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        // a step of the conductor that does not return, as a client's frame that hangs it would
        letGoWhileHeld(driver, "live-stuck", 7004, () -> driver.execute(() ->
        {
            stuck.countDown();
            try
            {
                release.await();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }), () -> stuck.getCount() == 0, release::countDown);
    }

    /**
     * A client of {@code driver}, with a 500 ms {@code driverTimeout} and a receive blocked on port {@code port}: not
     * let go over three timeouts while the driver runs; once {@code hold} has stopped the driver ({@code held}
     * says when), let go with ECONNRESET no sooner than the timeout allows, and its port free once {@code release}
     * has let the driver run again.
     */
    private void letGoWhileHeld(final DriverServer driver, final String name, final int port, final Runnable hold,
        final BooleanSupplier held, final Runnable release) throws Exception
    {
        final Duration timeout = Duration.ofMillis(500);
        final InetSocketAddress address = new InetSocketAddress(A_IP, port);
        try (RdsStack client = RdsStack.open(stacks.config(name + "-client").toBuilder()
            .driverDirectory(driver.directory().toString()).driverTimeout(timeout).build()))
        {
            final RdsSocket socket = client.openSocket().bind(address);
            final AtomicReference<Object> outcome = new AtomicReference<>("not returned");
            final Thread receiver = blockedReceiver(socket, outcome);
            // a running driver is not let go, over three timeouts
            assertFalse(Await.within(timeout.multipliedBy(3), () -> !receiver.isAlive()), "got " + outcome.get());

            hold.run();
            Await.until(WAIT, held::getAsBoolean, () -> "the driver held");
            final long heldAt = System.nanoTime();
            receiver.join(WAIT.toMillis());
            final long failedMs = (System.nanoTime() - heldAt) / 1_000_000;
            assertFalse(receiver.isAlive(), "a blocked receive ends when the driver hangs");
            final RdsException lost = assertInstanceOf(RdsException.class, outcome.get());
            assertEquals(RdsResult.ECONNRESET, lost.code());
            assertTrue(lost.getMessage().contains("has not run for") && lost.getMessage().contains("stopped or hung"),
                lost.getMessage());
            // the last beat was at most a period before the hang: not let go sooner than that allows
            assertTrue(failedMs >= timeout.minus(RdsStackConfig.DRIVER_HEARTBEAT_PERIOD).toMillis(), failedMs + " ms");
            final RdsException send = assertThrows(RdsException.class,
                () -> socket.send(ByteBuffer.allocate(1), socket.localAddress()));
            assertEquals(RdsResult.ECONNRESET, send.code());
            System.out.printf("%s: the client failed its blocked receive %d ms after the driver was held "
                + "(driverTimeout %d ms)%n", name, failedMs, timeout.toMillis());

            release.run();
            try (RdsStack other = stacks.attach(driver, name + "-other"))
            {
                final RdsSocket again = other.openSocket();
                Await.until(WAIT, () -> Ports.tryBind(again, address), () -> "the let-go client's port free");
            }
        }
    }

    private static Thread blockedReceiver(final RdsSocket socket, final AtomicReference<Object> outcome)
    {
        final Thread receiver = new Thread(() ->
        {
            try
            {
                outcome.set(socket.receive(ByteBuffer.allocate(8)));
            }
            catch (final Throwable t)
            {
                outcome.set(t);
            }
        }, "blocked-receiver");
        receiver.start();
        Await.until(WAIT, () -> Await.blockedIn(receiver, "receiveBlocking"), () -> "receiver blocked");
        return receiver;
    }

    @Test
    void theDriversFilesAreItsUsersOnlyAndOneDriverRunsPerDirectory() throws Exception
    {
        final DriverServer driver = stacks.start(stacks.config("live-e"));
        final Path directory = driver.directory();
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)));
        for (final String file : new String[] {DriverProtocol.SOCKET_FILE, CongestionBoard.FILE, DriverHeartbeat.FILE,
            "driver.lock"})
        {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(directory.resolve(file))),
                file);
        }
        final IOException second = assertThrows(IOException.class,
            () -> DriverServer.start(RdsStackConfig.builder().name("second").infoFile(false).build(), directory, false));
        assertTrue(second.getMessage().contains("already running"), second.getMessage());
    }

    @Test
    void attachingWhereNoDriverRunsSaysSo(@org.junit.jupiter.api.io.TempDir final Path empty)
    {
        final RdsStackConfig config = RdsStackConfig.builder().name("nobody").infoFile(false)
            .driverDirectory(empty.toString()).build();
        final java.io.UncheckedIOException ex = assertThrows(java.io.UncheckedIOException.class, () -> RdsStack.open(config));
        assertTrue(ex.getMessage().startsWith("no driver runs in " + empty), ex.getMessage());
    }
}
