package org.rds4j.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.rds4j.RdsStack;
import org.rds4j.core.CoreStack;
import org.rds4j.core.RdsStackMXBean;

/**
 * Binds a stack's metrics to a Micrometer registry: {@code new RdsStackMetrics(stack).bindTo(registry)}.
 * <ul>
 * <li>every counter of {@link RdsStack#counters()} as a {@link FunctionCounter} named {@code rds4j.} and the
 * counter's name with dots for underscores: {@code send_queued} is {@code rds4j.send.queued}
 * ({@code rds4j_send_queued_total} in Prometheus);</li>
 * <li>gauges {@code rds4j.connections} (connections in any state, loopback ones included),
 * {@code rds4j.connections.up} and {@code rds4j.sockets} (bound sockets).</li>
 * </ul>
 * Every meter has the tag {@code stack} (the stack's name) and the extra tags given. The meters read the stack
 * when the registry asks (a scrape, a publish), as its {@link RdsStackMXBean} does; nothing runs meanwhile.
 * After the stack closes the counters keep their last values and the gauges read 0: remove the meters
 * ({@link MeterRegistry#remove}) if they should go too.
 */
public final class RdsStackMetrics implements MeterBinder
{
    /** Prefix of every meter's name. */
    public static final String PREFIX = "rds4j.";

    private final RdsStack stack;
    private final RdsStackMXBean view;
    private final Tags tags;

    /**
     * @param stack a stack of rds-core (what {@link RdsStack#open} returns).
     * @throws IllegalArgumentException if the stack is not rds-core's.
     */
    public RdsStackMetrics(final RdsStack stack)
    {
        this(stack, Tags.empty());
    }

    /**
     * @param stack a stack of rds-core (what {@link RdsStack#open} returns).
     * @param tags  tags added to every meter, besides {@code stack}.
     * @throws IllegalArgumentException if the stack is not rds-core's.
     */
    public RdsStackMetrics(final RdsStack stack, final Iterable<Tag> tags)
    {
        if (!(stack instanceof CoreStack core))
        {
            throw new IllegalArgumentException("not a stack of rds-core, which has the connection and socket counts: " + stack);
        }
        this.stack = stack;
        this.view = core.mxBean();
        this.tags = Tags.of("stack", stack.config().name()).and(tags);
    }

    /**
     * @param counter a counter's name, such as {@code send_queued}.
     * @return its meter's name, such as {@code rds4j.send.queued}.
     */
    public static String meterName(final String counter)
    {
        return PREFIX + counter.replace('_', '.');
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        // the counters are fixed once the stack is open (transports register theirs while it opens)
        for (final String counter : stack.counters().keySet())
        {
            // one snapshot per counter read: a few dozen map entries per counter per scrape, next to nothing
            FunctionCounter.builder(meterName(counter), stack, s -> s.counters().getOrDefault(counter, 0L))
                .tags(tags)
                .description("rds4j stack counter " + counter + " (see docs/architecture.md, Counters)")
                .register(registry);
        }
        Gauge.builder(PREFIX + "connections", view, RdsStackMXBean::getConnectionCount)
            .tags(tags).description("connections of the stack, in any state").register(registry);
        Gauge.builder(PREFIX + "connections.up", view, RdsStackMXBean::getConnectionsUp)
            .tags(tags).description("connections of the stack that are up").register(registry);
        Gauge.builder(PREFIX + "sockets", view, RdsStackMXBean::getSocketCount)
            .tags(tags).description("bound sockets of the stack").register(registry);
    }
}
