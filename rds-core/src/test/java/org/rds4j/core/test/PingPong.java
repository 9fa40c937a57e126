package org.rds4j.core.test;

import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;

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

    /** What the calling thread does before it sends a request: wait for a moment, or for a condition. */
    @FunctionalInterface
    public interface Pause
    {
        /** No pause: back to back. */
        Pause NONE = i -> { };

        /** @param request the number of the request about to be sent. */
        void before(long request);

        /**
         * @param next what to do after this pause.
         * @return this pause, then {@code next}.
         */
        default Pause then(final Pause next)
        {
            return i ->
            {
                before(i);
                next.before(i);
            };
        }

        /**
         * @param pauseNs how long to wait before request {@code i}.
         * @return a pause that parks until that time has passed (a park may return at once: a thread that reads its
         *         stack's input may have unparked itself).
         */
        static Pause nanos(final LongUnaryOperator pauseNs)
        {
            return i ->
            {
                final long until = System.nanoTime() + pauseNs.applyAsLong(i);
                for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime())
                {
                    LockSupport.parkNanos(left);
                }
            };
        }

        /**
         * @param condition what must hold before each request (a thread parked, say): a state, where a timed pause
         *                  only hopes for it and a loaded machine may outlast the hope.
         * @param what      names the condition if it is not met within 10 s.
         * @return a pause that waits for the condition.
         */
        static Pause until(final BooleanSupplier condition, final Supplier<String> what)
        {
            return i -> Await.until(TIMEOUT, condition, what);
        }
    }

    /**
     * @param requester  the calling thread's socket.
     * @param responder  the echo's socket.
     * @param roundTrips how many.
     * @param pause      what to do before each request.
     * @param begin      run before the first request, once the echo runs.
     * @param end        run after the last reply.
     * @throws Exception if a call fails, or (an assertion) a reply is missing or wrong.
     */
    public static void run(final RdsSocket requester, final RdsSocket responder, final int roundTrips,
        final Pause pause, final Runnable begin, final Runnable end) throws Exception
    {
        run(requester, responder, roundTrips, pause, begin, end, null);
    }

    /**
     * As {@link #run(RdsSocket, RdsSocket, int, Pause, Runnable, Runnable)}, and keeps how long each
     * round trip took, from the send to the reply's receive.
     *
     * @param roundTripNs where round trip {@code i}'s time goes, in nanoseconds; null to keep none.
     */
    public static void run(final RdsSocket requester, final RdsSocket responder, final int roundTrips,
        final Pause pause, final Runnable begin, final Runnable end, final long[] roundTripNs)
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
            pause.before(i);
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
