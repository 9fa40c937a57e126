package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.transport.tcp.TcpConfig;

class EchoCommandTest
{
    /** One thread serves two sockets through a selector: each answers from its own address, byte for byte. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void echoesTheExactBytesFromEachOfItsAddresses() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26415, "127.0.0.4", "127.0.0.5");
        final InetSocketAddress[] echoAddresses = {
            new InetSocketAddress(InetAddress.getByName("127.0.0.4"), 4000),
            new InetSocketAddress(InetAddress.getByName("127.0.0.4"), 4002)};
        final InetSocketAddress clientAddress = new InetSocketAddress(InetAddress.getByName("127.0.0.5"), 4001);
        final byte[] big = new byte[10_000];
        new Random(42).nextBytes(big);
        final byte[][] payloads = {"hello rds4j".getBytes(StandardCharsets.US_ASCII), big};

        try (RdsStack echoStack = RdsStack.open(config("echo", tcpPort));
            RdsStack clientStack = RdsStack.open(config("client", tcpPort)))
        {
            final List<RdsSocket> echoSockets = new ArrayList<>();
            for (final InetSocketAddress address : echoAddresses)
            {
                echoSockets.add(echoStack.openSocket().bind(address));
            }
            final StringWriter log = new StringWriter();
            final PrintWriter logWriter = new PrintWriter(log, true);
            final AtomicLong served = new AtomicLong(-1);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread echo = new Thread(() ->
            {
                try
                {
                    served.set(EchoCommand.serve(echoStack, echoSockets, logWriter));
                }
                catch (final Throwable t)
                {
                    failure.set(t);
                }
            }, "echo-loop");
            echo.setDaemon(true);
            echo.start();

            final RdsSocket client = clientStack.openSocket();
            client.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
            client.bind(clientAddress);
            for (final InetSocketAddress echoAddress : echoAddresses)
            {
                for (final byte[] payload : payloads)
                {
                    assertEquals(payload.length, client.send(ByteBuffer.wrap(payload), echoAddress));
                    final ByteBuffer reply = ByteBuffer.allocate(payload.length + 1);
                    final InetSocketAddress from = client.receive(reply); // blocks at most SO_RCVTIMEO
                    assertNotNull(from, "no reply within 10 s; echo log:\n" + log);
                    assertEquals(echoAddress, from);
                    reply.flip();
                    final byte[] got = new byte[reply.remaining()];
                    reply.get(got);
                    assertArrayEquals(payload, got);
                }
            }

            // the loop ends when every socket is closed, not before
            echoSockets.get(0).close();
            assertEquals(1, client.send(ByteBuffer.wrap(new byte[] {9}), echoAddresses[1]));
            assertEquals(echoAddresses[1], client.receive(ByteBuffer.allocate(2)), "the other socket still answers");
            assertTrue(echo.isAlive());
            echoSockets.get(1).close();
            echo.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(echo.isAlive(), "the echo loop did not stop when its sockets closed");
            assertNull(failure.get(), () -> "echo loop failed: " + failure.get());
            assertEquals(2 * payloads.length + 1, served.get());
            assertTrue(log.toString().contains("from 127.0.0.5:4001, 11 bytes"), log.toString());
            assertTrue(log.toString().contains("from 127.0.0.5:4001, 10000 bytes"), log.toString());
        }
    }

    /** {@code rds echo} with two {@code --bind}s answers on both, and stops when its thread is interrupted. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theCommandServesEveryBind() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26425, "127.0.0.6", "127.0.0.7");
        final AtomicReference<CliRun> run = new AtomicReference<>();
        final Thread echo = new Thread(() -> run.set(CliRun.run("echo", "--tcp-port", String.valueOf(tcpPort),
            "--bind", "127.0.0.6:4000", "--bind", "127.0.0.6:4001")), "echo-command");
        echo.setDaemon(true);
        echo.start();
        try (RdsStack clientStack = RdsStack.open(config("client", tcpPort)))
        {
            final RdsSocket client = clientStack.openSocket();
            client.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofSeconds(10));
            client.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.7"), 4001));
            for (final int port : new int[] {4000, 4001})
            {
                final InetSocketAddress echoAddress = new InetSocketAddress(InetAddress.getByName("127.0.0.6"), port);
                final ByteBuffer reply = ByteBuffer.allocate(8);
                // the command may not be bound yet: a message to a port nobody holds is dropped, so ask again
                InetSocketAddress from = null;
                for (int attempt = 0; attempt < 50 && from == null; attempt++)
                {
                    assertEquals(1, client.send(ByteBuffer.wrap(new byte[] {(byte)port}), echoAddress));
                    client.setOption(RdsOptions.SO_RCVTIMEO, Duration.ofMillis(200));
                    reply.clear();
                    from = client.receive(reply);
                }
                assertEquals(echoAddress, from, "no reply from " + echoAddress);
                assertEquals(1, reply.position());
                assertEquals((byte)port, reply.get(0));
            }
        }
        echo.interrupt();
        echo.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(echo.isAlive(), "rds echo did not stop when interrupted");
        assertEquals(0, run.get().code(), run.get().report());
        assertTrue(run.get().out().contains("echo: bound to 127.0.0.6:4000, 127.0.0.6:4001 (tcp port " + tcpPort),
            run.get().report());
        assertTrue(run.get().out().contains("echo: stopped after "), run.get().report());
    }

    private static RdsStackConfig config(final String name, final int tcpPort)
    {
        return RdsStackConfig.builder().name(name)
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build()).build();
    }
}
