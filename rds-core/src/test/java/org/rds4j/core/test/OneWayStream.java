package org.rds4j.core.test;

import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A one-way stream between two bound sockets: a sender thread sends {@code messages} of {@code size} bytes, each
 * numbered in its first four, as fast as its blocking sends return, while the calling thread takes them in a
 * blocking {@code receive} and checks each one's sender, length and number (so exactly once and in order). Each
 * receive times out after 5 s (a lost message fails the run). Tests only.
 */
public final class OneWayStream
{
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private OneWayStream()
    {
    }

    /**
     * @param from     the sender thread's socket.
     * @param to       the calling thread's socket.
     * @param messages how many.
     * @param size     bytes of each, at least 4.
     * @throws Exception if a call fails, or (an assertion) a message is missing or wrong.
     */
    public static void run(final RdsSocket from, final RdsSocket to, final int messages, final int size) throws Exception
    {
        to.setOption(RdsOptions.SO_RCVTIMEO, TIMEOUT);
        final AtomicReference<Exception> failed = new AtomicReference<>();
        final Thread sender = new Thread(() ->
        {
            final ByteBuffer message = ByteBuffer.allocate(size);
            try
            {
                for (int i = 0; i < messages; i++)
                {
                    message.clear();
                    message.putInt(0, i);
                    from.send(message, to.localAddress());
                }
            }
            catch (final Exception ex)
            {
                failed.set(ex);
            }
        }, "one-way-sender");
        sender.start();
        final ByteBuffer received = ByteBuffer.allocate(size + 1);
        for (int i = 0; i < messages; i++)
        {
            received.clear();
            // a lost message: the receive times out (SO_RCVTIMEO) and throws
            assertEquals(from.localAddress(), to.receive(received), "message " + i);
            assertEquals(size, received.position(), "message " + i + "'s length");
            assertEquals(i, received.getInt(0), "message " + i + "'s number");
        }
        sender.join(TIMEOUT.toMillis());
        assertNull(failed.get(), "the sender failed");
    }
}
