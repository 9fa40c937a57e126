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
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void echoesTheExactBytesFromItsAddress() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26415, "127.0.0.4", "127.0.0.5");
        final InetSocketAddress echoAddress = new InetSocketAddress(InetAddress.getByName("127.0.0.4"), 4000);
        final InetSocketAddress clientAddress = new InetSocketAddress(InetAddress.getByName("127.0.0.5"), 4001);
        final byte[] big = new byte[10_000];
        new Random(42).nextBytes(big);
        final byte[][] payloads = {"hello rds4j".getBytes(StandardCharsets.US_ASCII), big};

        try (RdsStack echoStack = RdsStack.open(config("echo", tcpPort));
            RdsStack clientStack = RdsStack.open(config("client", tcpPort)))
        {
            final RdsSocket echoSocket = echoStack.openSocket();
            echoSocket.bind(echoAddress);
            final StringWriter log = new StringWriter();
            final PrintWriter logWriter = new PrintWriter(log, true);
            final AtomicLong served = new AtomicLong(-1);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread echo = new Thread(() ->
            {
                try
                {
                    served.set(EchoCommand.serve(echoSocket, logWriter));
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

            echoSocket.close(); // stops the loop
            echo.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(echo.isAlive(), "the echo loop did not stop when its socket closed");
            assertNull(failure.get(), () -> "echo loop failed: " + failure.get());
            assertEquals(payloads.length, served.get());
            assertTrue(log.toString().contains("from 127.0.0.5:4001, 11 bytes"), log.toString());
            assertTrue(log.toString().contains("from 127.0.0.5:4001, 10000 bytes"), log.toString());
        }
    }

    private static RdsStackConfig config(final String name, final int tcpPort)
    {
        return RdsStackConfig.builder().name(name)
            .transportConfig(TcpConfig.builder().tcpPort(tcpPort).build()).build();
    }
}
