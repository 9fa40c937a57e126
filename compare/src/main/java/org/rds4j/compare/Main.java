package org.rds4j.compare;

/**
 * The comparison suite's launcher: {@code java -jar compare.jar <system>-<role> [--option value ...]}, one role
 * per process, or {@code report} to turn collected result lines into the table. run.sh is the usual caller.
 * <p>
 * Systems: {@code rds4j}, {@code nio}, {@code aeron}, {@code jgroups}, and {@code wire}, an ideal RDS peer for
 * measuring one side of rds4j ({@link WireBench}, throughput roles only). Roles: {@code rtt-server} (echoes),
 * {@code rtt-client} (measures ping-pong), {@code sink} (receives and measures throughput; {@code --receivers N}
 * for fan-out), {@code source} (sends as fast as flow control allows, round robin over {@code --receivers}
 * destinations; {@code --peers N} for the scale case, rds4j and nio only: N receivers on N addresses
 * 127.0.2.1 ... 127.0.2.N). Common options: {@code --size} (payload bytes, default 64), {@code --warmup}/{@code --duration}
 * (seconds, default 2/5), {@code --warmup-rt}/{@code --rt} (round trips, default 20000/100000),
 * {@code --port} (first port, default 5000), {@code --server-ip}/{@code --client-ip} (127.0.0.2/127.0.0.1),
 * {@code --timeout} (seconds before the process halts itself, default 120). System options are described on
 * {@link Rds4jBench}, {@link NioBench}, {@link AeronBench}, {@link JGroupsBench} and {@link WireBench}; {@link Args} declares
 * them all, so {@code --help} lists them and an unknown one is a usage error (exit 2). {@code handoff} measures
 * what moving a cache line between the CPUs costs ({@link HandOff}), which run.sh records before and after a run.
 */
public final class Main
{
    private Main()
    {
    }

    /** A passive role (server, sink) is bound and listening: run.sh starts the active role after this line. */
    static void ready()
    {
        System.out.println("READY");
        System.out.flush();
    }

    /**
     * Runs one role of one system, or {@code report}; {@code --help} lists them.
     *
     * @param args the role, then its options.
     * @throws Exception if the role fails; the process exits non-zero.
     */
    public static void main(final String[] args) throws Exception
    {
        final Args options = Args.parseOrExit(args, System.out, System.err);
        final String command = options.command();
        if (command.equals("report"))
        {
            Report.main(options);
            return;
        }
        if (command.equals("handoff"))
        {
            HandOff.run();
            return;
        }
        if (command.equals("rds4j-driver"))
        {
            Rds4jBench.runDriver(options);
            return;
        }
        final int dash = command.indexOf('-');
        if (dash < 0)
        {
            throw new IllegalArgumentException("unknown command " + command + "; try --help");
        }
        final String system = command.substring(0, dash);
        final String role = command.substring(dash + 1);
        final Bench bench = new Bench(options, system, role);
        Bench.log("compare: " + system + " " + role + " " + String.join(" ", args));
        if (bench.peers > 0 && !system.equals("rds4j") && !system.equals("nio"))
        {
            // run.sh skips these systems in the scale cases; refuse rather than run a different case
            throw new IllegalArgumentException("--peers (the scale case) is implemented for rds4j and nio only, not " + system);
        }
        switch (system)
        {
            case "rds4j":
            {
                final Rds4jBench b = new Rds4jBench(bench);
                run(role, b::rttServer, b::rttClient, b::sink, b::source);
                break;
            }
            case "nio":
            {
                final NioBench b = new NioBench(bench);
                run(role, b::rttServer, b::rttClient, b::sink, b::source);
                break;
            }
            case "aeron":
            {
                final AeronBench b = new AeronBench(bench);
                run(role, b::rttServer, b::rttClient, b::sink, b::source);
                break;
            }
            case "jgroups":
            {
                final JGroupsBench b = new JGroupsBench(bench);
                run(role, b::rttServer, b::rttClient, b::sink, b::source);
                break;
            }
            case "wire":
            {
                final WireBench b = new WireBench(bench);
                run(role, b::rtt, b::rtt, b::sink, b::source);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown system " + system);
        }
    }

    private interface Role
    {
        void run() throws Exception;
    }

    private static void run(final String role, final Role rttServer, final Role rttClient, final Role sink, final Role source)
        throws Exception
    {
        try
        {
            switch (role)
            {
                case "rtt-server": rttServer.run(); break;
                case "rtt-client": rttClient.run(); break;
                case "sink": sink.run(); break;
                case "source": source.run(); break;
                default: throw new IllegalArgumentException("unknown role " + role);
            }
        }
        catch (final Throwable t)
        {
            t.printStackTrace();
            System.out.println("RESULT " + new Json().put("role", role).put("error", String.valueOf(t)));
            System.out.flush();
            Runtime.getRuntime().halt(1);
        }
    }
}
