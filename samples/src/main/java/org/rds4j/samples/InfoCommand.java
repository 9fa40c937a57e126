package org.rds4j.samples;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.rds4j.RdsStackConfig;
import org.rds4j.core.DriverServer;
import org.rds4j.SettingSource;

import org.rds4j.core.StackInfoReader;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rds info}: shows the counters, connections and sockets of the stacks running on this host, read
 * from outside their processes through the info files they publish (as AeronStat reads Aeron's
 * {@code cnc.dat}). It opens no stack and sends nothing.
 * <p>
 * A file whose process is gone is stale: it is listed as such, and {@code --clean} deletes it. Exit status 0
 * if at least one running stack was shown, 1 if none was found.
 * <p>
 * The files are read with rds-core's {@link StackInfoReader}, in {@link Core}.
 */
@Command(
    name = "info",
    mixinStandardHelpOptions = true,
    description = {
        "Shows the counters, connections and sockets of the rds4j stacks running on this host.",
        "Reads the info files the stacks publish (see RdsStackConfig.infoDirectory); opens no stack and sends nothing. "
            + "Files of processes that are gone are listed as stale (--clean deletes them).",
        "Exit status 0 if at least one running stack was shown, 1 if none was found."})
public final class InfoCommand implements Callable<Integer>
{
    /** Clears an ANSI terminal and moves the cursor home. */
    static final String CLEAR_SCREEN = "\033[H\033[2J";

    private static final int EXIT_NO_STACK = 1;
    private static final long HEARTBEAT_WARNING_MS = 5_000;

    @Spec
    private CommandSpec spec;

    @Option(names = "--dir", paramLabel = "DIR",
        description = "Directory of the info files. Default: the stacks' default, the system property rds4j.info.dir, "
            + "else the environment variable RDS4J_INFO_DIR, else /dev/shm/rds4j-<user> (or <tmpdir>/rds4j-<user> "
            + "without /dev/shm).")
    private Path dir;

    @Option(names = "--driver", paramLabel = "DIR", arity = "0..1", fallbackValue = "",
        description = "Also list the clients of the driver in DIR (default: the default driver directory): pid, "
            + "sockets, bytes in their send buffers and received bytes not yet taken. The driver's stack itself is one of "
            + "the stacks shown. Asks the driver (attaches for the question); with --json, as the document's \"driver\" "
            + "object; not with --prometheus.")
    private String driver;
    /** With {@code --json}: no driver answered in the directory. */
    private boolean driverMissing;

    @Option(names = "--stack", paramLabel = "NAME", description = "Only the stacks of this name.")
    private String stackName;

    @Option(names = "--watch", description = "Clear the screen and show again every --interval until interrupted, "
        + "with each counter's rate per second since the previous refresh.")
    private boolean watch;

    @Option(names = "--interval", paramLabel = "INTERVAL", defaultValue = "1", converter = DurationConverter.class,
        description = "Time between refreshes with --watch, in seconds with decimals (0.5) or with a unit (500ms), at "
            + "least 10ms. Default: ${DEFAULT-VALUE} s.")
    private Duration interval;

    @Option(names = "--json", description = "Print JSON (every counter, with or without --all) instead of tables.")
    private boolean json;

    @Option(names = "--prometheus", description = "Print the Prometheus text exposition format (every counter as "
        + "rds4j_<name>_total, and gauges) instead of tables, e.g. for node_exporter's textfile collector.")
    private boolean prometheus;

    @Option(names = "--all", description = "Show every counter, not only those that are not zero.")
    private boolean all;

    @Option(names = "--clean", description = "Delete the stale files of processes that are gone.")
    private boolean clean;

    /** Creates the command; picocli sets its options. */
    public InfoCommand()
    {
    }

    @Override
    public Integer call() throws IOException
    {
        if (interval.compareTo(Duration.ofMillis(10)) < 0)
        {
            throw new ParameterException(spec.commandLine(), "--interval must be at least 10ms: "
                + DurationConverter.format(interval));
        }
        if (json && prometheus)
        {
            throw new ParameterException(spec.commandLine(), "--json and --prometheus are exclusive: choose one");
        }
        // only this setting: a malformed unrelated one must not stop rds info
        final Path directory = dir != null ? dir : Path.of(RdsStackConfig.INFO_DIRECTORY.resolve(SettingSource.system()));
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (driver != null && prometheus)
        {
            throw new ParameterException(spec.commandLine(), "--driver is not available with --prometheus");
        }
        if (!watch)
        {
            final int shown = show(directory, out, err, null);
            if (driver == null)
            {
                return shown;
            }
            return json ? (driverMissing ? EXIT_NO_STACK : shown) : showDriver(out, err);
        }
        final Rates rates = new Rates();
        while (true)
        {
            if (!json && !prometheus)
            {
                out.print(CLEAR_SCREEN);
                out.printf("rds info %s, every %s, %s (Ctrl-C to stop)%n%n", directory, DurationConverter.format(interval),
                    LocalTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")));
            }
            show(directory, out, out, rates); // on the screen, not below it
            if (driver != null && !json)
            {
                showDriver(out, out);
            }
            out.flush();
            try
            {
                Thread.sleep(interval.toMillis());
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return 0;
            }
        }
    }

    /**
     * Reads the directory once and prints it; returns the exit status.
     *
     * @param rates with {@code --watch}, the counters of the previous refresh, to show rates; null without.
     */
    private int show(final Path directory, final PrintWriter out, final PrintWriter err, final Rates rates) throws IOException
    {
        final long readNanos = System.nanoTime();
        final List<StackView> live = new ArrayList<>();
        final List<StackView> stale = new ArrayList<>();
        final List<String> skipped = new ArrayList<>();
        for (final StackView view : Core.read(directory, (file, reason) -> skipped.add(file + ": " + reason)))
        {
            if (stackName != null && !stackName.equals(view.name))
            {
                continue;
            }
            (view.staleReason() == null ? live : stale).add(view);
        }
        for (final String line : skipped)
        {
            err.println("rds info: skipped " + line);
        }
        final List<String> deleted = new ArrayList<>();
        if (clean)
        {
            for (final StackView view : stale)
            {
                if (Files.deleteIfExists(view.file))
                {
                    deleted.add(view.file.toString());
                }
            }
        }
        if (rates != null)
        {
            rates.retain(live);
        }
        if (json)
        {
            out.println(JsonDocument.document(directory, live, stale, deleted, driver == null ? null : driverDocument()));
        }
        else if (prometheus)
        {
            out.print(Prometheus.document(live));
        }
        else
        {
            for (final StackView view : live)
            {
                printStack(out, view, rates == null ? null : rates.update(view.file, view.counters, readNanos));
            }
            for (final StackView view : stale)
            {
                out.printf("%s: %s (stack %s, pid %d: %s)%n", deleted.contains(view.file.toString()) ? "deleted stale" : "stale",
                    view.file, view.name, view.pid, view.staleReason());
            }
        }
        out.flush();
        if (live.isEmpty())
        {
            err.println("rds info: no running rds4j stack" + (stackName == null ? "" : " named " + stackName) + " in " +
                directory + (stale.isEmpty() || clean ? "" : " (" + stale.size() + " stale file(s): --clean deletes them)"));
            err.flush();
            return EXIT_NO_STACK;
        }
        return 0;
    }

    /** @param rates each counter's rate per second since the previous refresh; null without --watch, empty at first. */
    private void printStack(final PrintWriter out, final StackView view, final Map<String, Double> rates)
    {
        final long now = System.currentTimeMillis();
        out.printf("stack %s  pid %d  up %s%s%n", view.name, view.pid, duration(now - view.startTimeMillis),
            now - view.heartbeatMillis > HEARTBEAT_WARNING_MS
                ? "  (no heartbeat for " + duration(now - view.heartbeatMillis) + ": agent stuck or stopped?)" : "");
        out.println("  file " + view.file);

        final Map<String, Long> counters = new LinkedHashMap<>(view.counters);
        if (!all)
        {
            counters.values().removeIf(value -> value == 0L);
        }
        out.println("  counters" + (all ? "" : " (not zero; --all for all)") + (rates == null || rates.isEmpty() ? "" :
            ", per second since the last refresh") + ":" + (counters.isEmpty() ? " all zero" : ""));
        final int width = counters.keySet().stream().mapToInt(String::length).max().orElse(0);
        if (rates == null || rates.isEmpty())
        {
            counters.forEach((name, value) -> out.printf("    %-" + width + "s %d%n", name, value));
        }
        else
        {
            final int valueWidth = counters.values().stream().mapToInt(value -> Long.toString(value).length()).max().orElse(0);
            final Map<String, String> shown = new LinkedHashMap<>();
            counters.keySet().forEach(name -> shown.put(name, rates.containsKey(name) ? Rates.format(rates.get(name)) : ""));
            // at least 1: "%0s" is not a format
            final int rateWidth = Math.max(1, shown.values().stream().mapToInt(String::length).max().orElse(0));
            counters.forEach((name, value) -> out.printf("    %-" + width + "s %" + valueWidth + "d  %" + rateWidth + "s%n",
                name, value, shown.get(name)));
        }

        if (view.snapshotError != null)
        {
            out.println("  connections and sockets: " + view.snapshotError);
            out.println();
            return;
        }
        final Table connections = new Table("LOCAL", "REMOTE", "TRANSPORT", "STATE", ">NEXT TX", ">NEXT RX", ">UNACKED", ">CREDITS");
        for (final Map<String, Object> c : view.connections)
        {
            connections.row(address(c.get("local")), address(c.get("remote")), c.get("transport"), c.get("state"),
                c.get("next_tx_sequence"), c.get("next_rx_sequence"), c.get("unacked"), c.get("credits"));
        }
        out.println("  connections (" + count(view.connections.size(), view.connectionsTotal) + "):" +
            (view.connections.isEmpty() ? " none" : ""));
        connections.print(out, "    ");
        final Table sockets = new Table("ADDRESS", "TRANSPORT", ">SEND QUEUED/LIMIT", ">RECV QUEUED/LIMIT", "CONGESTED");
        for (final Map<String, Object> s : view.sockets)
        {
            sockets.row(address(s.get("address")), s.get("transport"),
                s.get("send_queued_bytes") + "/" + s.get("send_buffer_bytes"),
                s.get("receive_queued_bytes") + "/" + s.get("receive_buffer_bytes"),
                Boolean.TRUE.equals(s.get("congested")) ? "yes" : "no");
        }
        out.println("  sockets (" + count(view.sockets.size(), view.socketsTotal) + "):" + (view.sockets.isEmpty() ? " none" : ""));
        sockets.print(out, "    ");
        out.println();
    }

    private static String count(final int shown, final int total)
    {
        return shown == total ? String.valueOf(total) : shown + " of " + total + ", the file holds no more";
    }

    /** @return an address as {@code a.b.c.d}, {@code [v6]:port} or {@code a.b.c.d:port}; {@code ?} if unknown. */
    static String address(final Object value)
    {
        if (value instanceof InetSocketAddress socketAddress)
        {
            final InetAddress host = socketAddress.getAddress();
            return (host instanceof Inet6Address ? "[" + host.getHostAddress() + "]" : address(host)) + ":" + socketAddress.getPort();
        }
        return value instanceof InetAddress inet ? inet.getHostAddress() : "?";
    }

    /** @return a duration as {@code h:mm:ss}, with days when it has any. */
    static String duration(final long millis)
    {
        final long seconds = Math.max(0, millis) / 1000;
        final long days = seconds / 86_400;
        final String time = String.format("%d:%02d:%02d", seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
        return days > 0 ? days + "d " + time : time;
    }

    /** One stack as read from its file, in plain JDK types. */
    static final class StackView
    {
        Path file;
        String name;
        long pid;
        long startTimeMillis;
        long heartbeatMillis;
        boolean closed;
        boolean processAlive;
        Map<String, Long> counters = Map.of();
        List<Map<String, Object>> connections = List.of();
        int connectionsTotal;
        List<Map<String, Object>> sockets = List.of();
        int socketsTotal;
        String snapshotError;

        /** @return why the file is stale, or null if its stack runs. */
        String staleReason()
        {
            return closed ? "stack closed" : processAlive ? null : "process not running";
        }
    }

    /** Reads stacks' info files with {@link StackInfoReader} into the views this command prints. */
    static final class Core
    {
        private Core()
        {
        }

        /** Reads every info file of a directory into views; files that are not info files go to {@code onSkipped}. */
        static List<StackView> read(final Path directory, final BiConsumer<Path, String> onSkipped) throws IOException
        {
            final List<StackView> views = new ArrayList<>();
            for (final StackInfoReader reader : StackInfoReader.openAll(directory, onSkipped))
            {
                try
                {
                    views.add(view(reader));
                }
                finally
                {
                    reader.close();
                }
            }
            return views;
        }

        private static StackView view(final StackInfoReader reader)
        {
            final StackView view = new StackView();
            view.file = reader.path();
            view.name = reader.name();
            view.pid = reader.pid();
            view.startTimeMillis = reader.startTimeMillis();
            view.heartbeatMillis = reader.heartbeatMillis();
            view.closed = reader.isClosed();
            view.processAlive = reader.isProcessAlive();
            view.counters = reader.counters();
            try
            {
                final StackInfoReader.Snapshot snapshot = reader.snapshot();
                view.connections = snapshot.connections().stream().map(Core::fields).toList();
                view.connectionsTotal = snapshot.connectionsTotal();
                view.sockets = snapshot.sockets().stream().map(Core::fields).toList();
                view.socketsTotal = snapshot.socketsTotal();
            }
            catch (final IllegalStateException ex)
            {
                view.snapshotError = ex.getMessage();
            }
            return view;
        }

        private static Map<String, Object> fields(final StackInfoReader.ConnectionRecord c)
        {
            final Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("local", c.local());
            fields.put("remote", c.remote());
            fields.put("transport", c.transport());
            fields.put("state", c.state());
            fields.put("next_tx_sequence", c.nextTxSequence());
            fields.put("next_rx_sequence", c.nextRxSequence());
            fields.put("unacked", c.unacked());
            fields.put("credits", c.credits());
            return fields;
        }

        private static Map<String, Object> fields(final StackInfoReader.SocketRecord s)
        {
            final Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("address", s.address());
            fields.put("transport", s.transport());
            fields.put("send_queued_bytes", s.sendQueuedBytes());
            fields.put("send_buffer_bytes", s.sendBufferBytes());
            fields.put("receive_queued_bytes", s.receiveQueuedBytes());
            fields.put("receive_buffer_bytes", s.receiveBufferBytes());
            fields.put("congested", s.congested());
            return fields;
        }
    }

    /** A text table: columns as wide as their widest cell; a header starting with '>' is right-aligned. */
    static final class Table
    {
        private final String[] headers;
        private final boolean[] right;
        private final List<String[]> rows = new ArrayList<>();

        Table(final String... headers)
        {
            this.headers = new String[headers.length];
            this.right = new boolean[headers.length];
            for (int i = 0; i < headers.length; i++)
            {
                right[i] = headers[i].startsWith(">");
                this.headers[i] = right[i] ? headers[i].substring(1) : headers[i];
            }
        }

        void row(final Object... cells)
        {
            final String[] row = new String[cells.length];
            for (int i = 0; i < cells.length; i++)
            {
                row[i] = String.valueOf(cells[i]);
            }
            rows.add(row);
        }

        void print(final PrintWriter out, final String indent)
        {
            if (rows.isEmpty())
            {
                return;
            }
            final int[] widths = new int[headers.length];
            for (int i = 0; i < headers.length; i++)
            {
                widths[i] = headers[i].length();
                for (final String[] row : rows)
                {
                    widths[i] = Math.max(widths[i], row[i].length());
                }
            }
            line(out, indent, headers, widths);
            for (final String[] row : rows)
            {
                line(out, indent, row, widths);
            }
        }

        private void line(final PrintWriter out, final String indent, final String[] cells, final int[] widths)
        {
            final StringBuilder line = new StringBuilder(indent);
            for (int i = 0; i < cells.length; i++)
            {
                final String pad = " ".repeat(widths[i] - cells[i].length());
                line.append(right[i] ? pad + cells[i] : cells[i] + (i == cells.length - 1 ? "" : pad));
                if (i < cells.length - 1)
                {
                    line.append("  ");
                }
            }
            out.println(line);
        }
    }

    /**
     * The rates {@code --watch} shows: each counter's increase per second between two refreshes of a stack, on
     * the times the caller passes (so that tests give their own).
     */
    static final class Rates
    {
        private final Map<Path, Sample> previous = new HashMap<>();

        private record Sample(long nanos, Map<String, Long> counters)
        {
        }

        /**
         * Records a stack's counters and returns their rates since its previous call.
         *
         * @param stack    the stack's info file (a stack that restarts has another).
         * @param counters its counters, as read.
         * @param nanos    when they were read, on a monotonic clock in nanoseconds.
         * @return each counter's rate per second since the previous call for the stack, for the counters it had
         *         then; empty on the first call, or if no time passed.
         */
        Map<String, Double> update(final Path stack, final Map<String, Long> counters, final long nanos)
        {
            final Sample last = previous.put(stack, new Sample(nanos, counters));
            if (last == null || nanos <= last.nanos)
            {
                return Map.of();
            }
            final double seconds = (nanos - last.nanos) / 1e9;
            final Map<String, Double> rates = new LinkedHashMap<>();
            counters.forEach((name, value) ->
            {
                final Long before = last.counters.get(name);
                if (before != null)
                {
                    rates.put(name, (value - before) / seconds);
                }
            });
            return rates;
        }

        /** Forgets the stacks that are no longer shown. */
        void retain(final List<StackView> shown)
        {
            previous.keySet().retainAll(shown.stream().map(view -> view.file).collect(Collectors.toSet()));
        }

        /** @return a rate as {@code 12.5/s}: one decimal, enough to tell a trickle from nothing. */
        static String format(final double perSecond)
        {
            return String.format(Locale.ROOT, "%.1f/s", perSecond);
        }
    }

    /**
     * The {@code --prometheus} document, in the Prometheus text exposition format (version 0.0.4): each family's
     * HELP and TYPE lines, then one sample per stack, labelled {@code stack} and {@code pid} (and
     * {@code stack_instance}, 2 and up, for a second stack of one name in one process). The names match what
     * rds4j-micrometer's meters become in Prometheus.
     */
    static final class Prometheus
    {
        private Prometheus()
        {
        }

        static String document(final List<StackView> stacks)
        {
            final List<String> labels = labels(stacks);
            final StringBuilder text = new StringBuilder();
            final Set<String> counters = new LinkedHashSet<>();
            stacks.forEach(view -> counters.addAll(view.counters.keySet()));
            for (final String counter : counters)
            {
                final String family = "rds4j_" + metricName(counter) + "_total";
                family(text, family, "counter", "rds4j stack counter " + counter + ".");
                for (int i = 0; i < stacks.size(); i++)
                {
                    final Long value = stacks.get(i).counters.get(counter);
                    if (value != null)
                    {
                        sample(text, family, labels.get(i), Long.toString(value));
                    }
                }
            }
            gauge(text, stacks, labels, "rds4j_connections", "Connections of the stack, in any state.",
                view -> Integer.toString(view.connectionsTotal));
            gauge(text, stacks, labels, "rds4j_connections_up", "Connections of the stack that are up.",
                view -> Long.toString(view.connections.stream().filter(c -> "UP".equals(c.get("state"))).count()));
            gauge(text, stacks, labels, "rds4j_sockets", "Bound sockets of the stack.",
                view -> Integer.toString(view.socketsTotal));
            family(text, "rds4j_start_time_seconds", "gauge", "When the stack opened, in seconds since the Unix epoch.");
            for (int i = 0; i < stacks.size(); i++)
            {
                final long millis = stacks.get(i).startTimeMillis;
                sample(text, "rds4j_start_time_seconds", labels.get(i), millis / 1000 + "." + String.format(Locale.ROOT, "%03d", millis % 1000));
            }
            return text.toString();
        }

        /** A gauge of the snapshot of connections and sockets, without the stacks whose snapshot was unreadable. */
        private static void gauge(final StringBuilder text, final List<StackView> stacks, final List<String> labels,
            final String family, final String help, final Function<StackView, String> value)
        {
            family(text, family, "gauge", help);
            for (int i = 0; i < stacks.size(); i++)
            {
                if (stacks.get(i).snapshotError == null)
                {
                    sample(text, family, labels.get(i), value.apply(stacks.get(i)));
                }
            }
        }

        /** @return each stack's label set, {@code {stack="...",pid="..."}}: unique, as the format requires. */
        private static List<String> labels(final List<StackView> stacks)
        {
            final Map<String, Integer> seen = new HashMap<>();
            final List<String> labels = new ArrayList<>();
            for (final StackView view : stacks)
            {
                final String base = "stack=\"" + labelValue(view.name) + "\",pid=\"" + view.pid + "\"";
                final int instance = seen.merge(base, 1, Integer::sum);
                labels.add("{" + base + (instance > 1 ? ",stack_instance=\"" + instance + "\"" : "") + "}");
            }
            return labels;
        }

        private static void family(final StringBuilder text, final String family, final String type, final String help)
        {
            text.append("# HELP ").append(family).append(' ').append(help).append('\n');
            text.append("# TYPE ").append(family).append(' ').append(type).append('\n');
        }

        private static void sample(final StringBuilder text, final String family, final String labels, final String value)
        {
            text.append(family).append(labels).append(' ').append(value).append('\n');
        }

        /** @return a counter's name with any character a metric name may not hold as '_'. */
        static String metricName(final String counter)
        {
            return counter.replaceAll("[^a-zA-Z0-9_]", "_");
        }

        /** @return a label value with backslash, double quote and newline escaped, as the format asks. */
        static String labelValue(final String value)
        {
            return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
        }
    }

    /** The {@code --json} document. */
    static final class JsonDocument
    {
        private JsonDocument()
        {
        }

        /** @param driver the driver's object ({@code --driver}), or null. */
        static String document(final Path directory, final List<StackView> live, final List<StackView> stale,
            final List<String> deleted, final Map<String, Object> driver)
        {
            final long now = System.currentTimeMillis();
            final List<Map<String, Object>> stacks = new ArrayList<>();
            for (final StackView view : live)
            {
                final Map<String, Object> stack = new LinkedHashMap<>();
                stack.put("name", view.name);
                stack.put("pid", view.pid);
                stack.put("file", view.file.toString());
                stack.put("start_time_ms", view.startTimeMillis);
                stack.put("uptime_ms", Math.max(0, now - view.startTimeMillis));
                stack.put("heartbeat_age_ms", now - view.heartbeatMillis);
                stack.put("counters", view.counters);
                if (view.snapshotError != null)
                {
                    stack.put("snapshot_error", view.snapshotError);
                }
                stack.put("connections_total", view.connectionsTotal);
                stack.put("connections", records(view.connections));
                stack.put("sockets_total", view.socketsTotal);
                stack.put("sockets", records(view.sockets));
                stacks.add(stack);
            }
            final List<Map<String, Object>> staleFiles = new ArrayList<>();
            for (final StackView view : stale)
            {
                final Map<String, Object> file = new LinkedHashMap<>();
                file.put("name", view.name);
                file.put("pid", view.pid);
                file.put("file", view.file.toString());
                file.put("reason", view.staleReason());
                file.put("deleted", deleted.contains(view.file.toString()));
                staleFiles.add(file);
            }
            final Map<String, Object> document = new LinkedHashMap<>();
            document.put("directory", directory.toString());
            document.put("stacks", stacks);
            document.put("stale", staleFiles);
            if (driver != null)
            {
                document.put("driver", driver);
            }
            return Json.write(document);
        }

        /** @return the records with addresses as text: a socket address as two fields, its address and {@code port}. */
        private static List<Map<String, Object>> records(final List<Map<String, Object>> records)
        {
            final List<Map<String, Object>> out = new ArrayList<>(records.size());
            for (final Map<String, Object> record : records)
            {
                final Map<String, Object> fields = new LinkedHashMap<>();
                record.forEach((key, value) ->
                {
                    if (value instanceof InetSocketAddress socketAddress)
                    {
                        fields.put(key, socketAddress.getAddress() == null ? "?" : socketAddress.getAddress().getHostAddress());
                        fields.put("port", socketAddress.getPort());
                    }
                    else if (value instanceof InetAddress inet)
                    {
                        fields.put(key, inet.getHostAddress());
                    }
                    else if (value == null || value instanceof Number || value instanceof Boolean)
                    {
                        fields.put(key, value);
                    }
                    else
                    {
                        fields.put(key, value.toString());
                    }
                });
                out.add(fields);
            }
            return out;
        }
    }

    /** Lists the driver's clients; 0, or {@link #EXIT_NO_STACK} if no driver runs there. */
    private int showDriver(final PrintWriter out, final PrintWriter err)
    {
        final Path directory = driverDirectory();
        final List<DriverServer.Client> clients;
        try
        {
            clients = DriverServer.clients(directory);
        }
        catch (final java.io.UncheckedIOException ex)
        {
            err.println("rds info: " + ex.getMessage());
            return EXIT_NO_STACK;
        }
        out.printf("%ndriver %s: %d client(s)%n", directory, clients.size());
        if (!clients.isEmpty())
        {
            out.printf("  %-10s %8s %16s %16s%n", "pid", "sockets", "send queued", "received untaken");
            for (final DriverServer.Client client : clients)
            {
                out.printf("  %-10d %8d %16d %16d%n", client.pid(), client.sockets(), client.sendQueuedBytes(),
                    client.receiveQueuedBytes());
            }
        }
        return 0;
    }

    private Path driverDirectory()
    {
        return Path.of(driver.isEmpty() ? RdsStackConfig.defaultDriverDirectory() : driver);
    }

    /**
     * The driver's object of the {@code --json} document: its directory and clients (pid, sockets, send-queued and
     * received-untaken bytes), or an error if no driver runs there (then the exit status says so too).
     */
    private Map<String, Object> driverDocument()
    {
        final Path directory = driverDirectory();
        final Map<String, Object> document = new LinkedHashMap<>();
        document.put("directory", directory.toString());
        try
        {
            final List<Map<String, Object>> clients = new ArrayList<>();
            for (final DriverServer.Client client : DriverServer.clients(directory))
            {
                final Map<String, Object> fields = new LinkedHashMap<>();
                fields.put("pid", client.pid());
                fields.put("sockets", client.sockets());
                fields.put("send_queued_bytes", client.sendQueuedBytes());
                fields.put("receive_untaken_bytes", client.receiveQueuedBytes());
                clients.add(fields);
            }
            document.put("clients", clients);
        }
        catch (final java.io.UncheckedIOException ex)
        {
            driverMissing = true;
            document.put("error", ex.getMessage());
        }
        return document;
    }
}
