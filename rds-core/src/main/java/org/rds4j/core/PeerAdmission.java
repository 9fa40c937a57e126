package org.rds4j.core;

import org.rds4j.PeerAllowList;
import org.rds4j.RdsStackConfig;
import org.rds4j.core.spi.Admission;
import org.rds4j.core.spi.TransportCounters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The stack's admission policy for transport connections, the same for every transport: the allow-list
 * ({@code allowedPeers}) both ways; for an incoming connection, a rate limit per node pair (local, remote)
 * ({@code peerConnectRate}) and a cap on node pairs ({@code maxPeers}). Policy only: the caller passes the
 * time in and closes or rejects what is refused. Refusals are counted here, and logged at most once per
 * offending address (allow-list), once per block (rate), once per 10 s (cap), so that a flood cannot flood
 * the log too.
 * <p>
 * The rate counts connections of one node pair, not of one remote address: one sender socket reaching many
 * local addresses of a stack makes one connection per pair, which is honest; reconnecting one pair many times
 * a second is not. Memory is bounded: the rate state of at most {@value #TRACKED} pairs and the log state of at
 * most {@value #TRACKED} refused addresses are kept, the least recently seen forgotten; the known pairs are
 * those with a connection, bounded by {@code maxPeers} for incoming ones.
 * <p>
 * Agent thread only.
 */
public final class PeerAdmission
{
    /** How long a node pair that connected faster than {@code peerConnectRate} is refused. */
    public static final long BLOCK_NS = TimeUnit.SECONDS.toNanos(10);
    /** The window {@code peerConnectRate} counts connections in, from a pair's first connection. */
    static final long RATE_WINDOW_NS = TimeUnit.SECONDS.toNanos(1);
    /** Node pairs whose rate, and addresses whose allow-list refusal, are remembered at once. */
    static final int TRACKED = 4096;
    /** The least time between two log lines about refusals for the {@code maxPeers} cap. */
    static final long LIMIT_LOG_INTERVAL_NS = TimeUnit.SECONDS.toNanos(10);

    private static final Logger LOG = LoggerFactory.getLogger(PeerAdmission.class);

    private final PeerAllowList allowedPeers;
    private final int maxPeers;
    private final int connectRate;
    private final TransportCounters counters;
    /** Node pairs with a connection: at most {@code maxPeers} of them may come from incoming connections. */
    private final Set<Pair> knownPairs = new HashSet<>();
    /** Connect rate per node pair, least recently seen first. */
    private final Map<Pair, PairRate> rates = new Bounded<>();
    /** Addresses outside the allow-list that have been logged once; the value is unused. */
    private final Map<InetAddress, Boolean> notAllowedLogged = new Bounded<>();
    private long limitRefusalsUnlogged;
    private long limitLoggedAtNs;
    private boolean limitLogged;

    private record Pair(InetAddress local, InetAddress remote)
    {
    }

    /** A node pair's connections in its current window, and its block. */
    private static final class PairRate
    {
        long windowStartNs;
        int inWindow;
        boolean blocked;
        long blockedUntilNs;
    }

    /** An access-ordered map that forgets its least recently seen entry beyond {@value #TRACKED}. */
    private static final class Bounded<K, V> extends LinkedHashMap<K, V>
    {
        private static final long serialVersionUID = 1L;

        Bounded()
        {
            super(64, 0.75f, true);
        }

        @Override
        protected boolean removeEldestEntry(final Map.Entry<K, V> eldest)
        {
            return size() > TRACKED;
        }
    }

    /**
     * @param config   gives {@code allowedPeers}, {@code maxPeers} and {@code peerConnectRate}.
     * @param counters where refusals are counted.
     */
    PeerAdmission(final RdsStackConfig config, final TransportCounters counters)
    {
        this.allowedPeers = config.allowedPeers();
        this.maxPeers = config.maxPeers();
        this.connectRate = config.peerConnectRate();
        this.counters = counters;
    }

    /**
     * The rules for an incoming connection, before any state is made for it, in order: the allow-list; the
     * pair's rate (every connection not refused by the allow-list or a block counts, even one the cap then
     * refuses); the cap, which a pair already known passes. A refusal is counted and logged.
     *
     * @param local  the local address it came to.
     * @param remote the peer's address.
     * @param nowNs  the agent's clock.
     * @return the verdict.
     */
    Admission admitIncoming(final InetAddress local, final InetAddress remote, final long nowNs)
    {
        if (!allowedPeers.allows(remote))
        {
            counters.connRefusedNotAllowed().incrementOrdered();
            if (firstNotAllowed(remote))
            {
                LOG.warn("refusing connections from {}: outside allowedPeers {}", remote.getHostAddress(), allowedPeers);
            }
            return Admission.NOT_ALLOWED;
        }
        final Pair pair = new Pair(local, remote);
        if (overRate(pair, nowNs))
        {
            counters.connRefusedRate().incrementOrdered();
            return Admission.RATE_LIMITED;
        }
        if (knownPairs.size() >= maxPeers && !knownPairs.contains(pair))
        {
            counters.connRefusedLimit().incrementOrdered();
            logLimit(remote, nowNs);
            return Admission.PEER_LIMIT;
        }
        return Admission.ADMITTED;
    }

    /**
     * The rule for a connect this stack makes: the allow-list. A refusal is counted and logged; an allowed pair
     * counts toward {@code maxPeers} from now on (connections the stack's own sends open are never refused).
     *
     * @param local  the local address it goes from.
     * @param remote the peer's address.
     * @return true if the connect may be made.
     */
    boolean admitOutgoing(final InetAddress local, final InetAddress remote)
    {
        if (!allowedPeers.allows(remote))
        {
            counters.connRefusedNotAllowed().incrementOrdered();
            if (firstNotAllowed(remote))
            {
                LOG.warn("not connecting to {}: outside allowedPeers {}", remote.getHostAddress(), allowedPeers);
            }
            return false;
        }
        knownPairs.add(new Pair(local, remote));
        return true;
    }

    /**
     * An admitted incoming connection got its connection state: the pair counts toward {@code maxPeers}, and
     * passes the cap, from now on.
     *
     * @param local  the local address.
     * @param remote the peer's address.
     */
    void onConnection(final InetAddress local, final InetAddress remote)
    {
        knownPairs.add(new Pair(local, remote));
    }

    /** @return the node pairs counted toward {@code maxPeers} (tests). */
    int knownPairs()
    {
        return knownPairs.size();
    }

    /** @return the node pairs whose rate is remembered (tests: bounded by {@value #TRACKED}). */
    int trackedPairs()
    {
        return rates.size();
    }

    /** @return the refused addresses whose log line is remembered (tests: bounded by {@value #TRACKED}). */
    int trackedNotAllowed()
    {
        return notAllowedLogged.size();
    }

    private boolean firstNotAllowed(final InetAddress remote)
    {
        return notAllowedLogged.put(remote, Boolean.TRUE) == null;
    }

    /** Counts a connection of the pair: true if it is blocked, or is the one over the rate (which blocks it). */
    private boolean overRate(final Pair pair, final long nowNs)
    {
        final PairRate rate = rates.computeIfAbsent(pair, p -> new PairRate());
        if (rate.blocked)
        {
            if (nowNs - rate.blockedUntilNs < 0)
            {
                return true;
            }
            rate.blocked = false;
            rate.inWindow = 0;
        }
        if (rate.inWindow == 0 || nowNs - rate.windowStartNs >= RATE_WINDOW_NS)
        {
            rate.windowStartNs = nowNs;
            rate.inWindow = 0;
        }
        if (++rate.inWindow > connectRate)
        {
            rate.blocked = true;
            rate.blockedUntilNs = nowNs + BLOCK_NS;
            LOG.warn("refusing connections from {} to {} for {} s: more than {} per second",
                pair.remote().getHostAddress(), pair.local().getHostAddress(), TimeUnit.NANOSECONDS.toSeconds(BLOCK_NS),
                connectRate);
            return true;
        }
        return false;
    }

    private void logLimit(final InetAddress remote, final long nowNs)
    {
        limitRefusalsUnlogged++;
        if (!limitLogged || nowNs - limitLoggedAtNs >= LIMIT_LOG_INTERVAL_NS)
        {
            LOG.warn("refused {} connection(s) from new peers (latest {}): the stack has maxPeers={} peer connections",
                limitRefusalsUnlogged, remote.getHostAddress(), maxPeers);
            limitLogged = true;
            limitLoggedAtNs = nowNs;
            limitRefusalsUnlogged = 0;
        }
    }
}
