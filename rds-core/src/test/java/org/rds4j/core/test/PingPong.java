package org.rds4j.core.test;

import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Request and reply, one at a time, between two bound sockets: the calling thread sends request {@code i} (its
 * number) and waits in a blocking {@code receive} for the reply, which an echo thread blocked in {@code receive} on
 * the other socket sends back. Each receive times out after 10 s (a lost message fails the run). Tests only.
 */
public final class PingPong
{
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private PingPong()
    {
    }

    /**
     * @param requester  the calling thread's socket.
     * @param responder  the echo's socket.
     * @param roundTrips how many.
     * @param pauseNs    how long to wait before request {@code i}.
     * @param begin      run before the first request, once the echo runs.
     * @param end        run after the last reply.
     * @throws Exception if a call fails, or (an assertion) a reply is missing or wrong.
     */
    public static void run(final RdsSocket requester, final RdsSocket responder, final int roundTrips,
        final LongUnaryOperator pauseNs, final Runnable begin, final Runnable end) throws Exception
    {
        run(requester, responder, roundTrips, pauseNs, begin, end, null);
    }

    /**
     * As {@link #run(RdsSocket, RdsSocket, int, LongUnaryOperator, Runnable, Runnable)}, and keeps how long each
     * round trip took, from the send to the reply's receive.
     *
     * @param roundTripNs where round trip {@code i}'s time goes, in nanoseconds; null to keep none.
     */
    public static void run(final RdsSocket requester, final RdsSocket responder, final int roundTrips,
        final LongUnaryOperator pauseNs, final Runnable begin, final Runnable end, final long[] roundTripNs)
        throws Exception
    {
        requester.setOption(RdsOptions.SO_RCVTIMEO, TIMEOUT);
        responder.setOption(RdsOptions.SO_RCVTIMEO, TIMEOUT);
        final AtomicReference<Throwable> failed = new AtomicReference<>();
        final Thread echo = new Thread(() ->
        {
            final ByteBuffer buffer = ByteBuffer.allocate(8);
            try
            {
                for (int i = 0; i < roundTrips; i++)
                {
                    buffer.clear();
                    final InetSocketAddress from = responder.receive(buffer);
                    buffer.flip();
                    responder.send(buffer, from);
                }
            }
            catch (final Throwable ex)
            {
                failed.set(ex);
            }
        }, "ping-pong-echo");
        echo.start();
        final ByteBuffer request = ByteBuffer.allocate(8);
        final ByteBuffer reply = ByteBuffer.allocate(8);
        begin.run();
        for (long i = 0; i < roundTrips; i++)
        {
            // sets the request's moment (not a wait for anything); parks until the time has passed, as a park may
            // return at once (a thread that reads its stack's input may have unparked itself)
            final long until = System.nanoTime() + pauseNs.applyAsLong(i);
            for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime())
            {
                LockSupport.parkNanos(left);
            }
            request.clear().putLong(0, i);
            final long sentNs = System.nanoTime();
            assertEquals(8, requester.send(request, responder.localAddress()));
            reply.clear();
            // a lost message: the receive times out (SO_RCVTIMEO) and throws
            assertEquals(responder.localAddress(), requester.receive(reply), "round trip " + i);
            if (roundTripNs != null)
            {
                roundTripNs[(int)i] = System.nanoTime() - sentNs;
            }
            assertEquals(i, reply.getLong(0), "round trip " + i);
        }
        end.run();
        echo.join(TIMEOUT.toMillis());
        assertNull(failed.get(), () -> "the echo failed: " + failed.get());
    }
}
