package org.rds4j.jmh;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.rds4j.RdsMessageHandler;
import org.rds4j.RdsResult;
import org.rds4j.RdsSocket;
import org.rds4j.RdsStack;
import org.rds4j.RdsStackConfig;
import org.rds4j.Threading;
import org.rds4j.transport.tcp.TcpConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The whole message path, application to application: a non-blocking send, the stack agent(s), and a
 * non-blocking poll, through the loopback transport (one stack) or TCP (two stacks on 127.0.0.1 and
 * 127.0.0.2 in this JVM). One operation is one message sent; the benchmark thread also polls what has
 * arrived, so the receive path is in the measurement. With {@code threading=invoker} the stacks have no
 * agent thread and the benchmark thread runs one duty cycle of each stack after every {@value #INVOKE_BATCH}
 * messages and on every refused send, as a polling application would, so the whole path runs on one thread
 * and writes stay batched (a duty cycle per message would measure its system calls instead). Run with {@code -prof gc}: the allocation per
 * operation, which counts every thread of the JVM including the agents, must be about 0 B.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SocketPathBenchmark
{
    private static final int TCP_PORT = 29385;
    /** Invoker mode: messages sent between two duty cycles (what one duty cycle takes from a socket). */
    private static final int INVOKE_BATCH = 256;

    /** {@code loop}: one stack, loopback transport; {@code tcp}: two stacks in this JVM over TCP. */
    @Param({"loop", "tcp"})
    public String path;

    /** Payload bytes per message. */
    @Param({"64", "1024"})
    public int size;

    /** {@code agent}: each stack runs its agent thread; {@code invoker}: the benchmark thread runs the stacks. */
    @Param({"agent", "invoker"})
    public String threading;

    private RdsStack sender;
    private RdsStack receiver;
    private RdsSocket tx;
    private RdsSocket rx;
    private ByteBuffer payload;
    private InetSocketAddress destination;
    private long received;
    private boolean invoker;
    private int sinceInvoke;
    private final RdsMessageHandler handler = (from, message) -> received++;

    /**
     * Opens the stack(s) and binds a sending and a receiving socket, both non-blocking.
     *
     * @throws IOException if a bind fails (another process holds the TCP port).
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        final RdsStackConfig config = RdsStackConfig.builder()
            .transportConfig(TcpConfig.builder().tcpPort(TCP_PORT).build())
            .threading(threading.equals("invoker") ? Threading.INVOKER : Threading.AGENT).build();
        sender = RdsStack.open(config.toBuilder().name("bench-tx").build());
        tx = sender.openSocket().bind(new InetSocketAddress("127.0.0.1", 5000));
        if (path.equals("loop"))
        {
            receiver = sender;
            rx = sender.openSocket().bind(new InetSocketAddress("127.0.0.1", 5001));
        }
        else
        {
            receiver = RdsStack.open(config.toBuilder().name("bench-rx").build());
            rx = receiver.openSocket().bind(new InetSocketAddress("127.0.0.2", 5000));
        }
        tx.configureBlocking(false);
        rx.configureBlocking(false);
        payload = ByteBuffer.allocateDirect(size);
        destination = rx.localAddress();
        invoker = threading.equals("invoker");
    }

    /** Invoker mode: one duty cycle of each stack on this thread. */
    private void invoke()
    {
        if (invoker)
        {
            sinceInvoke = 0;
            sender.invoke();
            if (receiver != sender)
            {
                receiver.invoke();
            }
        }
    }

    /** Closes the stacks. */
    @TearDown(Level.Trial)
    public void tearDown()
    {
        sender.close();
        receiver.close();
    }

    /**
     * Sends one message, polling the receiver while the sender is refused, then polls once more.
     *
     * @return messages received so far, so the work is not dead code.
     * @throws IOException if a socket is closed.
     */
    @Benchmark
    public long sendThenPoll() throws IOException
    {
        payload.clear();
        int result;
        while ((result = tx.send(payload, destination)) < 0)
        {
            if (result != RdsResult.EAGAIN && result != RdsResult.ENOBUFS)
            {
                throw new IllegalStateException(RdsResult.name(result));
            }
            invoke();
            rx.poll(handler, 256);
            payload.clear();
        }
        if (invoker && ++sinceInvoke >= INVOKE_BATCH)
        {
            invoke();
        }
        rx.poll(handler, 256);
        return received;
    }
}
