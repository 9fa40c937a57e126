package org.rds4j.core;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rds4j.RdsOptions;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.Threading;
import org.rds4j.core.test.Await;
import org.rds4j.core.test.FixtureTest;
import org.rds4j.core.test.MemoryStacks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.rds4j.core.test.TestAddresses.ip;

/**
 * Blocking calls on virtual threads (Java 21 and later; skipped on an older runtime, as the build targets 17):
 * a thread per socket, thousands of them parked in {@code receive} at once, each gets its one message, and no
 * virtual thread parks in rds4j's waits ({@code LockSupport.park}) while pinned to its carrier (JFR's
 * {@code jdk.VirtualThreadPinned}, every such park recorded however short). The JVM's own pins are not
 * counted: a virtual thread that waits for a class another thread is initializing or loading is pinned on
 * every JDK so far (JDK 25 names them "Waited for initialization of ... by another thread", or "Freeze or
 * preempt failed" at the first call that needs the class). The receiving stack runs in both threading modes: in INVOKER mode a virtual
 * thread leads the duty cycle while the others wait. On a {@link MemoryStacks memory network} here;
 * {@code TcpVirtualThreadsTest} runs it over TCP, where the leading thread idles in the JDK's selector.
 */
public class VirtualThreadsTest extends FixtureTest
{
    private static final int SOCKETS = 2000;
    private static final int FIRST_PORT = 20000;
    private static final InetAddress RX_IP = ip("127.0.1.1");
    private static final InetAddress TX_IP = ip("127.0.1.2");
    private static final Duration WAIT = Duration.ofSeconds(60);

    /**
     * A park under this frame is the JVM loading a class at its first use, with a native frame on the stack: it
     * pins on every JDK, and two threads loading one class at once (the two stacks' duty cycles) make one park.
     * The JDK's, not rds4j's, and not the steady state.
     */
    /** Where rds4j's waits park ({@code Waiters}, {@code Invoker}); a pinned park elsewhere is the JVM's. */
    private static final String PARK = "java.util.concurrent.locks.LockSupport.park";
    private static final String CLASS_LOADING = "java.lang.ClassLoader.loadClass";

    /** @return an event's stack, innermost first, as {@code class.method < class.method ...}. */
    private static String frames(final RecordedEvent event)
    {
        final String reason = event.hasField("pinnedReason") ? "[" + event.getString("pinnedReason") + "] " : "";
        return reason + (event.getStackTrace() == null ? event.toString() : event.getStackTrace().getFrames().stream()
            .map(f -> f.getMethod().getType().getName() + "." + f.getMethod().getName())
            .collect(Collectors.joining(" < ")));
    }

    /** {@code Thread.startVirtualThread}, looked up at run time: the tests compile for Java 17. */
    private static MethodHandle virtualThreadStarter()
    {
        try
        {
            return MethodHandles.publicLookup().findStatic(Thread.class, "startVirtualThread",
                MethodType.methodType(Thread.class, Runnable.class));
        }
        catch (final NoSuchMethodException | IllegalAccessException ex)
        {
            return null;
        }
    }

    @ParameterizedTest
    @EnumSource(Threading.class)
    void aVirtualThreadPerSocketReceivesItsOneMessage(final Threading threading) throws Throwable
    {
        final MethodHandle startVirtualThread = virtualThreadStarter();
        assumeTrue(startVirtualThread != null && Runtime.version().feature() >= 21,
            "virtual threads need Java 21; this is " + Runtime.version());
        // small rings and hand-off queues: 2000 sockets of the default sizes would map 500 MiB
        final RdsStack rx = stacks.open(stacks.config("vt-rx").toBuilder().threading(threading)
            .receiveRingBytes(4096).socketQueueCapacity(16).build());
        final RdsStack tx = stacks.open("vt-tx");
        final RdsSocket sender = tx.openSocket().bind(new InetSocketAddress(TX_IP, FIRST_PORT));
        final RdsSocket[] sockets = new RdsSocket[SOCKETS];
        for (int i = 0; i < SOCKETS; i++)
        {
            sockets[i] = rx.openSocket().bind(new InetSocketAddress(RX_IP, FIRST_PORT + i));
            sockets[i].setOption(RdsOptions.SO_RCVTIMEO, WAIT);
        }

        final Path jfr = Files.createTempFile("rds4j-vt", ".jfr");
        try (Recording recording = new Recording())
        {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            recording.start();

            final AtomicReferenceArray<Object> outcomes = new AtomicReferenceArray<>(SOCKETS);
            final Thread[] threads = new Thread[SOCKETS];
            for (int i = 0; i < SOCKETS; i++)
            {
                final int index = i;
                final Runnable receive = () ->
                {
                    try
                    {
                        final ByteBuffer dst = ByteBuffer.allocate(8);
                        final InetSocketAddress from = sockets[index].receive(dst);
                        outcomes.set(index, from == null ? "timed out" : from + " " + dst.flip().getInt());
                    }
                    catch (final Throwable t)
                    {
                        outcomes.set(index, t);
                    }
                };
                threads[i] = (Thread)startVirtualThread.invokeExact(receive);
            }
            for (final Thread thread : threads)
            {
                Await.until(WAIT, () -> Await.blockedIn(thread, "receiveBlocking"), () -> "parked in receive");
            }

            final ByteBuffer src = ByteBuffer.allocate(4);
            for (int i = 0; i < SOCKETS; i++)
            {
                src.clear().putInt(0, i);
                assertEquals(4, sender.send(src, sockets[i].localAddress()), "message " + i);
            }
            for (int i = 0; i < SOCKETS; i++)
            {
                threads[i].join(WAIT.toMillis());
                assertFalse(threads[i].isAlive(), "receiver " + i + " still waiting");
                assertEquals(sender.localAddress() + " " + i, outcomes.get(i), "receiver " + i);
            }

            recording.stop();
            recording.dump(jfr);
            final List<String> pinned = RecordingFile.readAllEvents(jfr).stream().map(VirtualThreadsTest::frames)
                .filter(frames -> frames.contains(PARK) && !frames.contains(CLASS_LOADING)).collect(Collectors.toList());
            assertEquals(List.of(), pinned, "parks in rds4j's waits while pinned");
        }
        finally
        {
            Files.deleteIfExists(jfr);
        }
        // exactly once: nothing more for any socket
        final ByteBuffer dst = ByteBuffer.allocate(8);
        for (int i = 0; i < SOCKETS; i++)
        {
            sockets[i].configureBlocking(false);
            assertNull(sockets[i].receive(dst.clear()), "socket " + i + " got a second message");
        }
    }
}
