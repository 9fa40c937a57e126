package org.rds4j.compare;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * {@code report --results FILE [--docs FILE --meta FILE]}: reads the result lines run.sh collected (one JSON
 * object per run: the measuring role's result plus {@code bench}, {@code rep} and the other role's
 * {@code peer_cpu_s}), prints medians with min-max per case and system, ratios to raw NIO, rds4j's ratios to
 * every peer (as shipped and tuned) and to the best of them, and writes the same tables into the docs file
 * between {@code <!-- results:begin -->} and {@code <!-- results:end -->}, headed by the meta file (date,
 * machine, command).
 * <p>
 * The scale cases ({@code scale16}, {@code scale64}, {@code scale200}: {@code bench} names {@code scale<N>})
 * get their own tables, with each process's RSS and direct memory at the end of its window, and their own
 * block in the docs file, between {@code <!-- scale-results:begin -->} and {@code <!-- scale-results:end -->}:
 * a run of the scale cases alone leaves the default suite's block as it was, and the reverse.
 */
final class Report
{
    static final String BEGIN = "<!-- results:begin -->";
    static final String END = "<!-- results:end -->";
    static final String SCALE_BEGIN = "<!-- scale-results:begin -->";
    static final String SCALE_END = "<!-- scale-results:end -->";
    private static final String SCALE = "scale";
    private static final String[] RDS4J = {"rds4j", "rds4j-backoff", "rds4j-invoker", "rds4j-driver"};
    /** One side of rds4j alone, against an ideal RDS peer ({@link WireBench}): rows of the rate tables only. */
    private static final String[] SIDES = {"rds4j-send", "rds4j-recv"};
    /** What rds4j is measured against: raw NIO (the ceiling), then each peer as shipped and tuned. */
    private static final String[] PEERS = {"nio", "aeron", "aeron-mtu64k", "aeron-invoker", "jgroups",
        "jgroups-nodrop"};
    private static final String[] SYSTEMS =
        Stream.of(RDS4J, SIDES, PEERS).flatMap(Stream::of).toArray(String[]::new);
    private static final Map<String, String> LABELS = Map.ofEntries(
        Map.entry("rds4j", "rds4j TCP"), Map.entry("rds4j-backoff", "rds4j TCP, default idle"),
        Map.entry("rds4j-invoker", "rds4j TCP, invoker"),
        Map.entry("rds4j-driver", "rds4j TCP through a driver, default idle"),
        Map.entry("rds4j-send", "rds4j's sending side alone, default idle (ideal receiver)"),
        Map.entry("rds4j-recv", "rds4j's receiving side alone, default idle (ideal sender)"),
        Map.entry("nio", "raw NIO TCP"), Map.entry("aeron", "Aeron UDP"), Map.entry("aeron-mtu64k", "Aeron UDP, MTU 64 KiB"),
        Map.entry("aeron-invoker", "Aeron UDP, INVOKER, MTU 64 KiB"), Map.entry("jgroups", "JGroups TCP"),
        Map.entry("jgroups-nodrop", "JGroups TCP, non-dropping bundler"));

    private final List<Json> runs = new ArrayList<>();
    private final StringBuilder out = new StringBuilder();

    static void main(final Args args) throws IOException
    {
        final Report report = new Report();
        for (final String line : Files.readAllLines(Path.of(args.str("results", "results.jsonl")), StandardCharsets.UTF_8))
        {
            if (line.isBlank())
            {
                continue;
            }
            try
            {
                report.runs.add(Json.parse(line));
            }
            catch (final RuntimeException ex)
            {
                System.err.println("report: skipped a bad line: " + line);
            }
        }
        final String meta = args.str("meta", null) == null ? "" :
            Files.readString(Path.of(args.str("meta", null)), StandardCharsets.UTF_8);
        final List<String> scaleCases = report.scaleCases();
        // the default suite's tables unless the run holds only scale cases
        final boolean main = scaleCases.isEmpty() || report.runs.stream().anyMatch(j -> !isScale(j.str("bench")));
        final String tables = main ? report.tables() : "";
        final String scaleTables = scaleCases.isEmpty() ? "" : report.scaleTables(scaleCases);
        System.out.println(tables + (main && !scaleCases.isEmpty() ? "\n" : "") + scaleTables);
        final String docs = args.str("docs", null);
        if (docs != null)
        {
            if (main)
            {
                writeInto(Path.of(docs), meta + "\n" + tables, BEGIN, END);
                System.err.println("report: tables written into " + docs);
            }
            if (!scaleCases.isEmpty())
            {
                writeInto(Path.of(docs), meta + "\n" + scaleTables, SCALE_BEGIN, SCALE_END);
                System.err.println("report: scale tables written into " + docs);
            }
        }
    }

    /** Replaces what is between the markers (appending the markers if the file lacks them). */
    static void writeInto(final Path file, final String content) throws IOException
    {
        writeInto(file, content, BEGIN, END);
    }

    /** Replaces what is between {@code begin} and {@code end} (appending them if the file lacks them). */
    static void writeInto(final Path file, final String content, final String begin, final String end) throws IOException
    {
        final String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        final int b = text.indexOf(begin);
        final int e = text.indexOf(end);
        final String block = begin + "\n" + content.strip() + "\n" + end;
        final String updated;
        if (b >= 0 && e > b)
        {
            updated = text.substring(0, b) + block + text.substring(e + end.length());
        }
        else
        {
            updated = text + (text.endsWith("\n") || text.isEmpty() ? "" : "\n") + "\n" + block + "\n";
        }
        Files.writeString(file, updated, StandardCharsets.UTF_8);
    }

    private List<Json> runs(final String bench, final String system)
    {
        final List<Json> list = new ArrayList<>();
        for (final Json j : runs)
        {
            final String label = j.str("label") != null ? j.str("label") : j.str("system");
            if (bench.equals(j.str("bench")) && system.equals(label))
            {
                list.add(j);
            }
        }
        return list;
    }

    private static List<Json> ok(final List<Json> list, final String key)
    {
        final List<Json> good = new ArrayList<>();
        for (final Json j : list)
        {
            if (j.get("error") == null && !Double.isNaN(j.num(key)))
            {
                good.add(j);
            }
        }
        return good;
    }

    /** Median, min and max of a metric over runs; NaNs when there is none. */
    private static double[] stats(final List<Json> list, final ToDoubleFunction<Json> metric)
    {
        final double[] v = list.stream().mapToDouble(metric).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0)
        {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        final double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        return new double[] {median, v[0], v[v.length - 1]};
    }

    private static String num(final double v)
    {
        if (Double.isNaN(v))
        {
            return "n/a";
        }
        final double a = Math.abs(v);
        if (a >= 1e6)
        {
            return String.format(Locale.ROOT, "%.2fM", v / 1e6);
        }
        if (a >= 1e4)
        {
            return String.format(Locale.ROOT, "%.0fk", v / 1e3);
        }
        if (a >= 100)
        {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10)
        {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static String cell(final double[] s, final int runs)
    {
        if (Double.isNaN(s[0]))
        {
            return "n/a";
        }
        if (runs <= 1)
        {
            return num(s[0]);
        }
        return num(s[0]) + " (" + num(s[1]) + "–" + num(s[2]) + ")";
    }

    private static String ratio(final double a, final double b)
    {
        return Double.isNaN(a) || Double.isNaN(b) || b == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f×", a / b);
    }

    private static double cpuPerMillion(final Json j)
    {
        // NaN (shown as n/a) when the sender's line is missing: half the cost is not the cost
        return (j.num("cpu_s") + j.num("peer_cpu_s")) / j.num("msgs") * 1e6;
    }

    private String failures(final List<Json> all, final List<Json> good)
    {
        return all.size() == good.size() ? "" : " — " + (all.size() - good.size()) + " of " + all.size() + " runs failed";
    }

    private String tables()
    {
        out.setLength(0);
        out.append("Each cell: median over the runs (min–max across runs, when more than one). Rates count what the ")
            .append("receiver got in its window; MB/s counts payload bytes only (1 MB = 10^6 B). “vs NIO”: the ")
            .append("system's median over raw NIO's (latency: higher is slower; rates: lower is slower). Under each ")
            .append("table, rds4j's medians over each peer's, as shipped and tuned, and over the best peer's. CPU: ")
            .append("CPU time of both processes over the window, per million messages received.\n\n");
        rttTable();
        rateTable("tput64", "(b) One-way throughput, 64 B messages");
        rateTable("tput1k", "(c) One-way throughput, 1 KiB messages");
        rateTable("fanout", "(d) Fan-out: one sender, 16 receivers in one receiving process");
        cpuTable();
        return out.toString();
    }

    private void rttTable()
    {
        out.append("#### (a) Round-trip time, 64 B ping-pong (µs)\n\n");
        out.append("| system | runs | p50 | p90 | p99 | p99.9 | p50 vs NIO | p99 vs NIO |\n");
        out.append("|---|---|---|---|---|---|---|---|\n");
        final Map<String, double[][]> all = new LinkedHashMap<>();
        for (final String system : SYSTEMS)
        {
            final List<Json> list = runs("rtt", system);
            final List<Json> good = ok(list, "p50_us");
            if (list.isEmpty())
            {
                continue;
            }
            final double[] p50 = stats(good, j -> j.num("p50_us"));
            final double[] p90 = stats(good, j -> j.num("p90_us"));
            final double[] p99 = stats(good, j -> j.num("p99_us"));
            final double[] p999 = stats(good, j -> j.num("p999_us"));
            all.put(system, new double[][] {p50, p90, p99, p999, {good.size(), list.size()}});
        }
        final double[][] nio = all.get("nio");
        for (final Map.Entry<String, double[][]> e : all.entrySet())
        {
            final double[][] s = e.getValue();
            final int n = (int)s[4][0];
            out.append("| ").append(LABELS.get(e.getKey())).append(" | ").append(n)
                .append(n < s[4][1] ? " of " + (int)s[4][1] : "")
                .append(" | ").append(cell(s[0], n)).append(" | ").append(cell(s[1], n)).append(" | ")
                .append(cell(s[2], n)).append(" | ").append(cell(s[3], n)).append(" | ")
                .append(nio == null ? "n/a" : ratio(s[0][0], nio[0][0])).append(" | ")
                .append(nio == null ? "n/a" : ratio(s[2][0], nio[2][0])).append(" |\n");
        }
        out.append('\n');
        final Map<String, Double> p50 = new LinkedHashMap<>();
        all.forEach((system, s) -> p50.put(system, s[0][0]));
        ratioTable("p50", p50, true);
    }

    /**
     * rds4j's rows over each peer's median, and over the best peer's: the fastest of the Aeron and JGroups rows,
     * whether as shipped or tuned (raw NIO is the ceiling, not a peer). Skipped when either side has no figure.
     */
    private void ratioTable(final String metric, final Map<String, Double> medians, final boolean lowerIsBetter)
    {
        final List<String> rows = present(RDS4J, medians);
        final List<String> peers = present(PEERS, medians);
        if (rows.isEmpty() || peers.isEmpty())
        {
            return;
        }
        String best = null;
        for (final String peer : peers)
        {
            final double m = medians.get(peer);
            final boolean better = best == null || (lowerIsBetter ? m < medians.get(best) : m > medians.get(best));
            if (!peer.equals("nio") && better)
            {
                best = peer;
            }
        }
        out.append("| rds4j / peer, ").append(metric)
            .append(lowerIsBetter ? " (below 1: rds4j faster) |" : " (above 1: rds4j faster) |");
        for (final String peer : peers)
        {
            out.append(' ').append(LABELS.get(peer)).append(" |");
        }
        out.append(best == null ? "" : " best peer (" + LABELS.get(best) + ") |").append("\n|---|");
        out.append("---|".repeat(peers.size() + (best == null ? 0 : 1))).append('\n');
        for (final String row : rows)
        {
            out.append("| ").append(LABELS.get(row)).append(" |");
            for (final String peer : peers)
            {
                out.append(' ').append(ratio(medians.get(row), medians.get(peer))).append(" |");
            }
            out.append(best == null ? "" : " " + ratio(medians.get(row), medians.get(best)) + " |").append('\n');
        }
        out.append('\n');
    }

    /** The systems of {@code systems} that have a median in {@code medians}, in that order. */
    private static List<String> present(final String[] systems, final Map<String, Double> medians)
    {
        final List<String> list = new ArrayList<>();
        for (final String system : systems)
        {
            if (medians.containsKey(system) && !Double.isNaN(medians.get(system)))
            {
                list.add(system);
            }
        }
        return list;
    }

    private void rateTable(final String bench, final String title)
    {
        out.append("#### ").append(title).append("\n\n");
        final boolean fanout = bench.equals("fanout");
        out.append("| system | runs | msgs/s | MB/s | vs NIO | CPU s per M msgs |")
            .append(fanout ? " slowest / fastest receiver, msgs/s |" : "")
            .append(" worst 100 ms, msgs/s | empty 100 ms | seq errors |\n");
        out.append("|---|---|---|---|---|---|").append(fanout ? "---|" : "").append("---|---|---|\n");
        final Map<String, double[]> medians = rates(bench);
        final double[] nio = medians.get("nio");
        for (final String system : SYSTEMS)
        {
            final List<Json> list = runs(bench, system);
            if (list.isEmpty())
            {
                continue;
            }
            final List<Json> good = ok(list, "msgs_per_s");
            final int n = good.size();
            rowStart(out, system, list.size(), n, medians.get(system))
                .append(" | ").append(cell(stats(good, j -> j.num("mb_per_s")), n))
                .append(" | ").append(ratio(medians.get(system)[0], nio[0]))
                .append(" | ").append(cell(stats(good, Report::cpuPerMillion), n)).append(" |");
            if (fanout)
            {
                out.append(' ').append(num(stats(good, j -> j.num("rx_min_per_s"))[0])).append(" / ")
                    .append(num(stats(good, j -> j.num("rx_max_per_s"))[0])).append(" |");
            }
            out.append(' ').append(num(stats(good, j -> j.num("min_100ms_per_s"))[1])).append(" | ")
                .append((long)sum(good, "empty_100ms")).append(" | ")
                .append((long)sum(good, "seq_errors")).append(" |\n");
        }
        out.append("\nWorst 100 ms: the lowest rate in any 100 ms interval of any run's window; empty 100 ms: ")
            .append("intervals in which nothing arrived, summed over runs.\n\n");
        final Map<String, Double> rates = new LinkedHashMap<>();
        medians.forEach((system, s) -> rates.put(system, s[0]));
        ratioTable("msgs/s", rates, false);
    }

    private void cpuTable()
    {
        out.append("#### (e) CPU cost, one-way 64 B (from the runs of (b))\n\n");
        out.append("| system | CPU s per M msgs | receiver CPU s / s | sender CPU s / s | vs NIO |\n");
        out.append("|---|---|---|---|---|\n");
        final Map<String, double[]> cpu = new LinkedHashMap<>();
        for (final String system : SYSTEMS)
        {
            if (List.of(SIDES).contains(system))
            {
                continue; // half of each pair is the ideal peer: its CPU is not rds4j's cost
            }
            final List<Json> good = ok(runs("tput64", system), "msgs_per_s");
            if (!good.isEmpty())
            {
                cpu.put(system, stats(good, Report::cpuPerMillion));
            }
        }
        final double[] nio = cpu.get("nio");
        for (final String system : cpu.keySet())
        {
            final List<Json> good = ok(runs("tput64", system), "msgs_per_s");
            out.append("| ").append(LABELS.get(system)).append(" | ").append(cell(cpu.get(system), good.size()))
                .append(" | ").append(num(stats(good, j -> j.num("cpu_s") / j.num("secs"))[0]))
                .append(" | ").append(num(stats(good, j -> j.num("peer_cpu_s") / j.num("secs"))[0]))
                .append(" | ").append(nio == null ? "n/a" : ratio(cpu.get(system)[0], nio[0])).append(" |\n");
        }
        out.append("\nCPU s / s: cores kept busy on average (2.00 = both cores of this machine). Spinning idle ")
            .append("strategies count as CPU time, so these figures depend on the idle settings listed above.\n");
    }

    // ------------------------------------------------------------------ scale cases

    private static boolean isScale(final String bench)
    {
        return bench != null && bench.startsWith(SCALE) && bench.length() > SCALE.length() &&
            bench.substring(SCALE.length()).chars().allMatch(Character::isDigit);
    }

    private static int peersOf(final String bench)
    {
        return Integer.parseInt(bench.substring(SCALE.length()));
    }

    /** The scale cases present in the results, fewest peers first. */
    private List<String> scaleCases()
    {
        final List<String> cases = new ArrayList<>();
        for (final Json j : runs)
        {
            final String bench = j.str("bench");
            if (isScale(bench) && !cases.contains(bench))
            {
                cases.add(bench);
            }
        }
        cases.sort((a, b) -> Integer.compare(peersOf(a), peersOf(b)));
        return cases;
    }

    private static final double MIB = 1024.0 * 1024.0;

    /** Median MiB of a KiB field; "n/a" when no run has it. */
    private static String kibAsMib(final List<Json> good, final String key)
    {
        return num(stats(good, j -> j.num(key) / 1024.0)[0]);
    }

    /** Median direct memory in MiB with the median number of direct buffers. */
    private static String direct(final List<Json> good, final String prefix)
    {
        final double bytes = stats(good, j -> j.num(prefix + "direct_bytes"))[0];
        final double count = stats(good, j -> j.num(prefix + "direct_count"))[0];
        return Double.isNaN(bytes) ? "n/a" : num(bytes / MIB) + " (" + (Double.isNaN(count) ? "n/a" : String.valueOf(Math.round(count))) + ")";
    }

    private String scaleTables(final List<String> cases)
    {
        out.setLength(0);
        out.append("Each cell: median over the runs (min–max across runs, when more than one). One sender (one ")
            .append("socket or, for raw NIO, one thread) sends 64 B messages round robin to N peer addresses ")
            .append("(127.0.2.1 …), all received in one process. Rates count what the receiving process got in its ")
            .append("window. CPU: CPU time of both processes over the window, per million messages received. ")
            .append("Memory: each process's at the end of its window: RSS (VmRSS) and the JVM's direct buffers ")
            .append("(MiB in use, and in brackets how many), in MiB (2^20 B). Only rds4j and raw NIO run these cases.\n\n");
        for (final String bench : cases)
        {
            scaleTable(bench);
        }
        scaleSummary(cases);
        return out.toString();
    }

    private void scaleTable(final String bench)
    {
        final int peers = peersOf(bench);
        out.append("#### Scale: one sender to ").append(peers).append(" peers (").append(bench).append(")\n\n");
        out.append("| system | runs | msgs/s | vs NIO | CPU s per M msgs | slowest / fastest peer, msgs/s |")
            .append(" worst 100 ms, msgs/s | empty 100 ms | seq errors | receiver RSS, MiB | sender RSS, MiB |")
            .append(" receiver direct, MiB (buffers) | sender direct, MiB (buffers) |\n");
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        final Map<String, double[]> medians = rates(bench);
        final double[] nio = medians.get("nio");
        for (final String system : SYSTEMS)
        {
            final List<Json> list = runs(bench, system);
            if (list.isEmpty())
            {
                continue;
            }
            final List<Json> good = ok(list, "msgs_per_s");
            final int n = good.size();
            rowStart(out, system, list.size(), n, medians.get(system))
                .append(" | ").append(ratio(medians.get(system)[0], nio[0]))
                .append(" | ").append(cell(stats(good, Report::cpuPerMillion), n))
                .append(" | ").append(num(stats(good, j -> j.num("rx_min_per_s"))[0])).append(" / ")
                .append(num(stats(good, j -> j.num("rx_max_per_s"))[0]))
                .append(" | ").append(num(stats(good, j -> j.num("min_100ms_per_s"))[1]))
                .append(" | ").append((long)sum(good, "empty_100ms"))
                .append(" | ").append((long)sum(good, "seq_errors"))
                .append(" | ").append(kibAsMib(good, "rss_kib"))
                .append(" | ").append(kibAsMib(good, "peer_rss_kib"))
                .append(" | ").append(direct(good, ""))
                .append(" | ").append(direct(good, "peer_")).append(" |\n");
        }
        out.append('\n');
        final Map<String, Double> rates = new LinkedHashMap<>();
        medians.forEach((system, s) -> rates.put(system, s[0]));
        ratioTable("msgs/s", rates, false);
    }

    /**
     * Per system, each scale case's rate and CPU per message over the case with the fewest peers, with both
     * processes' RSS: whether the cost per message and the memory stay flat as the peer count grows.
     */
    private void scaleSummary(final List<String> cases)
    {
        if (cases.size() < 2)
        {
            return;
        }
        final String base = cases.get(0);
        out.append("#### Scale: cost and memory against ").append(peersOf(base)).append(" peers\n\n");
        out.append("| system | peers | msgs/s | vs ").append(peersOf(base)).append(" peers | CPU s per M msgs | vs ")
            .append(peersOf(base)).append(" peers | receiver RSS, MiB | sender RSS, MiB |\n");
        out.append("|---|---|---|---|---|---|---|---|\n");
        for (final String system : SYSTEMS)
        {
            final List<Json> baseRuns = ok(runs(base, system), "msgs_per_s");
            final double baseRate = stats(baseRuns, j -> j.num("msgs_per_s"))[0];
            final double baseCpu = stats(baseRuns, Report::cpuPerMillion)[0];
            for (final String bench : cases)
            {
                final List<Json> list = runs(bench, system);
                if (list.isEmpty())
                {
                    continue;
                }
                final List<Json> good = ok(list, "msgs_per_s");
                final double rate = stats(good, j -> j.num("msgs_per_s"))[0];
                final double cpu = stats(good, Report::cpuPerMillion)[0];
                out.append("| ").append(LABELS.get(system)).append(" | ").append(peersOf(bench))
                    .append(" | ").append(num(rate)).append(" | ").append(ratio(rate, baseRate))
                    .append(" | ").append(num(cpu)).append(" | ").append(ratio(cpu, baseCpu))
                    .append(" | ").append(kibAsMib(good, "rss_kib"))
                    .append(" | ").append(kibAsMib(good, "peer_rss_kib")).append(" |\n");
            }
        }
        out.append("\nvs ").append(peersOf(base)).append(" peers: the median over the same system's median with ")
            .append(peersOf(base)).append(" peers (msgs/s: below 1 is slower; CPU per message: above 1 costs more).\n");
    }

    private static double sum(final List<Json> list, final String key)
    {
        return list.stream().mapToDouble(j -> j.num(key)).filter(d -> !Double.isNaN(d)).sum();
    }

    /** @return each system's median rate (and range) over its good runs of a case, in {@link #SYSTEMS} order. */
    private Map<String, double[]> rates(final String bench)
    {
        final Map<String, double[]> medians = new LinkedHashMap<>();
        for (final String system : SYSTEMS)
        {
            medians.put(system, stats(ok(runs(bench, system), "msgs_per_s"), j -> j.num("msgs_per_s")));
        }
        return medians;
    }

    /** Starts a throughput row: the system, its good runs (of all, if some failed) and its median rate. */
    private static StringBuilder rowStart(
        final StringBuilder out, final String system, final int runs, final int good, final double[] rate)
    {
        return out.append("| ").append(LABELS.get(system)).append(" | ").append(good)
            .append(good < runs ? " of " + runs : "")
            .append(" | ").append(cell(rate, good));
    }
}
