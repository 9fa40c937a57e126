package org.rds4j.core;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Fuzzes what a driver does with a client's frames ({@link DriverProtocol#checkClientFrame}, then
 * {@link DriverSession}): per input, a new raw connection says HELLO, sends the input's bytes (cut into chunks,
 * each its own write), then shuts its output and reads until the driver ends the connection. One driver serves
 * every input, on a {@link DriverStacks} memory network, with one well-behaved client attached throughout.
 * <p>
 * Oracle, after each input: the driver counted the raw client once, as cut off (a malformed frame) or gone (its
 * connection ended), and attached once; nothing else. It ended the connection within {@link RawDriverClient#WAIT}
 * (a hang is a finding). The well-behaved client's message to its own address comes back with exactly its
 * bytes (the stack and the client's session are unharmed). A new connection is still welcomed (no exception
 * ended the conductor).
 * <p>
 * Well-formed frames are allowed, so inputs reach the deeper code: binds, options, sends (to the raw client's own
 * port, the well-behaved client's, nowhere), cancels, congestion waits, queries. The hand-made corpus in
 * {@code src/test/resources/org/rds4j/core/DriverProtocolFuzzTestInputs/frames/} holds such sequences and broken
 * ones; regression mode (every {@code mvn verify}) runs them; fuzzing mode: {@code JAZZER_FUZZ=1}, see
 * docs/protocol.md, "Fuzzing".
 */
class DriverProtocolFuzzTest
{
    /** The well-behaved client's address; the corpus sends to it too. */
    private static final InetSocketAddress GOOD = new InetSocketAddress(ip("127.0.72.1"), 7000);

    private static DriverStacks stacks;
    private static DriverServer driver;
    private static RdsStack client;
    private static RdsSocket good;
    /** What the driver's counters must say after the inputs so far. */
    private static long attached;
    private static long ended;
    private static long round;

    @BeforeAll
    static void startDriver() throws IOException
    {
        stacks = new DriverStacks();
        driver = stacks.start(stacks.config("fuzz-driver"));
        client = RdsStack.open(stacks.config("fuzz-good").toBuilder()
            .driverDirectory(driver.directory().toString()).build());
        good = client.openSocket();
        // room for what raw clients send it too (a corpus input sends 300 KB), so its own message is never refused
        good.setOption(RdsOptions.SO_RCVBUF, 8 << 20);
        good.setOption(RdsOptions.SO_RCVTIMEO, RawDriverClient.WAIT);
        good.setOption(RdsOptions.SO_SNDTIMEO, RawDriverClient.WAIT);
        good.bind(GOOD);
        attached = driver.clientsAttached.get();
        ended = endedCount();
    }

    @AfterAll
    static void stopDriver()
    {
        client.close();
        stacks.close();
    }

    /**
     * @param input byte 0 says how the rest is cut (0: one write; else write {@code i} is
     *              {@code 1 + (b0 * i * 7919) % 700} bytes); the rest is what the client sends after its HELLO.
     *              Plain bytes, so hand-made corpus files are a one-byte prefix and frames.
     */
    @FuzzTest(maxDuration = "60s")
    void frames(final byte[] input) throws IOException
    {
        try
        {
            runInput(input);
        }
        catch (final IOException | RuntimeException | Error failed)
        {
            // a new driver for the inputs that follow (regression mode runs them all), not this one's remains
            stopDriver();
            startDriver();
            throw failed;
        }
    }

    private static void runInput(final byte[] input) throws IOException
    {
        final int cut = input.length > 0 ? input[0] & 0xFF : 0;
        try (RawDriverClient raw = new RawDriverClient(driver))
        {
            raw.hello();
            try
            {
                int position = 1;
                int chunk = 0;
                while (position < input.length)
                {
                    final int left = input.length - position;
                    final int size = cut == 0 ? left : Math.min(left, 1 + (cut * ++chunk * 7919) % 700);
                    raw.write(ByteBuffer.wrap(input, position, size));
                    position += size;
                }
                raw.channel.shutdownOutput();
            }
            catch (final IOException cutOff)
            {
                // the driver closed the connection before it had all: it found a malformed frame
            }
            raw.readToEnd();
        }
        expectEnded("the raw client");

        final byte[] message = ByteBuffer.allocate(16).putLong(++round).putLong(~round).array();
        assertEquals(message.length, good.send(ByteBuffer.wrap(message), GOOD));
        final ByteBuffer received = ByteBuffer.allocate(1 << 20);
        InetSocketAddress sender;
        do
        {
            received.clear();
            // a raw client may have sent to this port too: its messages come from its own
            sender = good.receive(received);
        }
        while (!GOOD.equals(sender));
        assertArrayEquals(message, Arrays.copyOf(received.array(), received.position()), "round " + round);

        try (RawDriverClient probe = new RawDriverClient(driver))
        {
            probe.hello();
        }
        expectEnded("the probe");
    }

    /** A client said HELLO and its connection ended: counted once as attached and once as cut off or gone. */
    private static void expectEnded(final String who)
    {
        attached++;
        ended++;
        Await.until(RawDriverClient.WAIT, () -> endedCount() >= ended, () -> who + " counted: " + driver.counters());
        assertEquals(ended, endedCount(), () -> who + " counted once: " + driver.counters());
        assertEquals(attached, driver.clientsAttached.get(), () -> who + " attached once: " + driver.counters());
    }

    private static long endedCount()
    {
        return driver.clientsCutOff.get() + driver.clientsGone.get();
    }
}
