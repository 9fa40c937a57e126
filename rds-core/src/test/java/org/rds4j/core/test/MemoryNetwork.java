package org.rds4j.core.test;

import org.rds4j.core.StackOptions;
import org.rds4j.core.spi.TransportFactory;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A network in memory for stacks of one JVM: each stack opened with {@link #options()} gets a
 * {@link MemoryTransport} that serves the addresses its sockets bind and exchanges frames with the other stacks'
 * transports by address, without sockets. Tests drive its faults: {@link #faults} decides per frame whether it
 * is delivered, dropped, duplicated, swapped with the next, or held until {@link #releaseHeld()};
 * {@link #cut} breaks the paths between two addresses and refuses connects between them until {@link #heal}.
 * Decisions are the tests' own (or from a seeded {@link #randomFaults}), so a run is repeatable.
 * <p>
 * Not registered in {@code META-INF/services}: a stack uses it only when a test passes it in
 * {@link StackOptions#transports}. Thread safe: every stack's agent calls it.
 */
public final class MemoryNetwork
{
    /** What happens to one frame in flight. */
    public enum Fate
    {
        /** Arrives once. */
        DELIVER,
        /** Never arrives. */
        DROP,
        /** Arrives twice. */
        DUPLICATE,
        /** Arrives after the next frame the same path end sends (or at the sender's next duty cycle). */
        SWAP,
        /** Waits in the network until {@link #releaseHeld()}. */
        HOLD
    }

    /** Decides the fate of each frame sent; called on the sending stack's agent thread. */
    @FunctionalInterface
    public interface Faults
    {
        /**
         * @param from   the sending address.
         * @param to     the receiving address.
         * @param length the frame's length, header included.
         * @return what becomes of the frame.
         */
        Fate fate(InetAddress from, InetAddress to, int length);
    }

    private final Map<InetAddress, MemoryTransport> owners = new ConcurrentHashMap<>();
    private final Set<Set<InetAddress>> cuts = ConcurrentHashMap.newKeySet();
    private final List<Runnable> held = new ArrayList<>();
    private final Predicate<InetAddress> serves;
    private final AtomicLong framesSent = new AtomicLong();
    private final AtomicLong duplicatesDiscarded = new AtomicLong();
    private final AtomicLong pathsBrokenByLoss = new AtomicLong();
    private volatile Faults faults = (from, to, length) -> Fate.DELIVER;
    private volatile long gapTimeoutNs = 50_000_000L;
    private volatile boolean waking = true;

    /** A network serving the loopback addresses (127.0.0.0/8, ::1), as a host's TCP would. */
    public MemoryNetwork()
    {
        this(InetAddress::isLoopbackAddress);
    }

    /** @param serves the addresses a stack on this network may bind; others are {@code EADDRNOTAVAIL}. */
    public MemoryNetwork(final Predicate<InetAddress> serves)
    {
        this.serves = serves;
    }

    /** @return a factory of transports on this network, for {@link StackOptions#transports}. */
    public TransportFactory factory()
    {
        return context -> new MemoryTransport(this, context);
    }

    /** @return options whose only transport (beside loopback) is this network. */
    public StackOptions options()
    {
        return new StackOptions().transports(List.of(factory()));
    }

    /**
     * @param decider the fate of each frame from now on; {@link Fate#DELIVER} for all by default.
     * @return this.
     */
    public MemoryNetwork faults(final Faults decider)
    {
        this.faults = decider;
        return this;
    }

    /**
     * @param nanos how long a path end waits, on its stack's clock, for a frame missing before frames that
     *              arrived after it (dropped or held) before it breaks the path as lost; 50 ms by default.
     * @return this.
     */
    public MemoryNetwork gapTimeoutNs(final long nanos)
    {
        this.gapTimeoutNs = nanos;
        return this;
    }

    /**
     * @param wake whether an event for a stack (a frame, a connect) wakes its agent, as a selector's readiness wakes
     *             the thread waiting in it (true, the default); or waits, unseen, for the stack's next duty cycle,
     *             as TCP's bytes wait in the kernel while no thread of the stack selects (false).
     * @return this.
     */
    public MemoryNetwork wakes(final boolean wake)
    {
        this.waking = wake;
        return this;
    }

    boolean wakes()
    {
        return waking;
    }

    /**
     * Fates drawn from a seeded random sequence: the same seed and the same order of frames give the same fates.
     *
     * @param seed       the seed.
     * @param dropPct    percent of frames dropped.
     * @param dupPct     percent of frames duplicated.
     * @param swapPct    percent of frames swapped with the next.
     * @return the decider.
     */
    public static Faults randomFaults(final long seed, final int dropPct, final int dupPct, final int swapPct)
    {
        final Random random = new Random(seed);
        return (from, to, length) ->
        {
            final int roll = random.nextInt(100);
            if (roll < dropPct)
            {
                return Fate.DROP;
            }
            if (roll < dropPct + dupPct)
            {
                return Fate.DUPLICATE;
            }
            return roll < dropPct + dupPct + swapPct ? Fate.SWAP : Fate.DELIVER;
        };
    }

    /**
     * Breaks every path between two addresses (both ends see it go down on their next duty cycle) and refuses
     * connects between them until {@link #heal}.
     *
     * @param a one address.
     * @param b the other.
     */
    public void cut(final InetAddress a, final InetAddress b)
    {
        cuts.add(Set.of(a, b));
        for (final MemoryTransport transport : new HashSet<>(owners.values()))
        {
            transport.breakPaths(a, b);
        }
    }

    /**
     * Lets two addresses connect again after {@link #cut}.
     *
     * @param a one address.
     * @param b the other.
     */
    public void heal(final InetAddress a, final InetAddress b)
    {
        cuts.remove(Set.of(a, b));
    }

    /** Delivers the frames held ({@link Fate#HOLD}), in the order they were sent. */
    public void releaseHeld()
    {
        final List<Runnable> release;
        synchronized (held)
        {
            release = new ArrayList<>(held);
            held.clear();
        }
        release.forEach(Runnable::run);
    }

    /** @return frames given to the network, whatever their fate. */
    public long framesSent()
    {
        return framesSent.get();
    }

    /** @return frames that arrived a second time on a path and were discarded there. */
    public long duplicatesDiscarded()
    {
        return duplicatesDiscarded.get();
    }

    /** @return paths broken because a frame on them did not arrive in time. */
    public long pathsBrokenByLoss()
    {
        return pathsBrokenByLoss.get();
    }

    // ---------------------------------------------------------------- for MemoryTransport

    boolean serves(final InetAddress address)
    {
        return serves.test(address);
    }

    /** @return the transport now serving {@code address}: {@code transport} if it claimed it first. */
    MemoryTransport claim(final InetAddress address, final MemoryTransport transport)
    {
        final MemoryTransport owner = owners.putIfAbsent(address, transport);
        return owner == null ? transport : owner;
    }

    void release(final MemoryTransport transport)
    {
        owners.values().removeIf(owner -> owner == transport);
    }

    MemoryTransport owner(final InetAddress address)
    {
        return owners.get(address);
    }

    boolean isCut(final InetAddress a, final InetAddress b)
    {
        return cuts.contains(Set.of(a, b));
    }

    Fate fate(final InetAddress from, final InetAddress to, final int length)
    {
        framesSent.incrementAndGet();
        return faults.fate(from, to, length);
    }

    void hold(final Runnable delivery)
    {
        synchronized (held)
        {
            held.add(delivery);
        }
    }

    long gapTimeoutNs()
    {
        return gapTimeoutNs;
    }

    void duplicateDiscarded()
    {
        duplicatesDiscarded.incrementAndGet();
    }

    void pathBrokenByLoss()
    {
        pathsBrokenByLoss.incrementAndGet();
    }
}
