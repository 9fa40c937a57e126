package org.rds4j.core;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.DriverStacks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Fuzzes what a driver does with a client's frames ({@link DriverProtocol#checkClientFrame}, then
 * {@link DriverSession}): per input, a new raw connection says HELLO, sends the input's frames, numbered, on the
 * connection (cut into chunks, each its own write) or into its ring, then shuts its output and reads until the
 * driver ends the connection. Bytes that are not a whole frame go as they are: on the connection, or written over
 * the memory of its ring and of the ring the driver writes to it. One driver serves every input, on a
 * {@link DriverStacks} memory network, with one well-behaved client attached throughout.
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
        client = stacks.attach(driver, "fuzz-good");
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
     * @param input byte 0 says where the frames go (its top two bits: 0 each after its SEQ on the connection, 1 into
     *              the ring where they fit, 2 alternately, 3 the bytes as they are on the connection, unnumbered) and
     *              how the connection's bytes are cut (its low six bits {@code c}: 0, one write; else write {@code i}
     *              is {@code 1 + (c * i * 7919) % 700} bytes); the rest is what the client sends after its HELLO.
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
        final int route = input.length > 0 ? (input[0] & 0xFF) >> 6 : 0;
        final int cut = input.length > 0 ? input[0] & 0x3F : 0;
        try (RawDriverClient raw = new RawDriverClient(driver))
        {
            raw.hello();
            try
            {
                final ByteArrayOutputStream connection = new ByteArrayOutputStream();
                int position = Math.min(1, input.length);
                int frame = 0;
                while (position < input.length && route != 3)
                {
                    final int left = input.length - position;
                    final int length = left >= 4 ? ByteBuffer.wrap(input, position, 4).order(LITTLE_ENDIAN).getInt() : 0;
                    if (length < 4 || length > left)
                    {
                        break;
                    }
                    final ByteBuffer bytes = ByteBuffer.wrap(input, position, length);
                    final boolean toRing = route == 1 || (route == 2 && frame % 2 == 1);
                    final int n = ++raw.number;
                    if (toRing && raw.ring.offer(n, new UnsafeBuffer(bytes.slice()), length, null))
                    {
                        writeCut(raw, connection.toByteArray(), cut); // what came before it on the connection
                        connection.reset();
                        raw.ring.takeDoorbell();
                        raw.write(RawDriverClient.frame(DriverProtocol.DOORBELL, 0, RawDriverClient.body(0)));
                    }
                    else
                    {
                        connection.write(RawDriverClient.frame(DriverProtocol.SEQ, 0,
                            RawDriverClient.body(8).putInt(n).putInt(0).flip()).array());
                        connection.write(input, position, length);
                    }
                    position += length;
                    frame++;
                }
                if (route == 1 || route == 2)
                {
                    // the rest over the rings' memory: the driver must survive reading whatever it says,
                    writeCut(raw, connection.toByteArray(), cut);
                    connection.reset();
                    // at the offset its first four bytes say, modulo the room
                    final int room = DriverRing.fileBytes(DriverRing.CAPACITY); // the smaller of the two
                    final int left = Math.min(input.length - position, room);
                    if (left > 4)
                    {
                        final int at = ByteBuffer.wrap(input, position, 4).order(LITTLE_ENDIAN).getInt();
                        final int offset = Math.floorMod(at, room - left + 5);
                        raw.scribble(offset, ByteBuffer.wrap(input, position + 4, left - 4));
                        // and the same over the ring to it, which the driver writes its replies into
                        raw.scribbleDown(offset, ByteBuffer.wrap(input, position + 4, left - 4));
                    }
                    raw.write(RawDriverClient.frame(DriverProtocol.DOORBELL, 0, RawDriverClient.body(0)));
                }
                else
                {
                    connection.write(input, position, input.length - position);
                }
                writeCut(raw, connection.toByteArray(), cut);
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

    private static void writeCut(final RawDriverClient raw, final byte[] bytes, final int cut) throws IOException
    {
        int position = 0;
        int chunk = 0;
        while (position < bytes.length)
        {
            final int left = bytes.length - position;
            final int size = cut == 0 ? left : Math.min(left, 1 + (cut * ++chunk * 7919) % 700);
            raw.write(ByteBuffer.wrap(bytes, position, size));
            position += size;
        }
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
