package io.ganglion.bench;

import io.ganglion.cli.Main;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ganglion bench failover} (issue 8): one queue per broker, a publisher per queue at a fixed rate with confirms
 * and a consumer per queue with acks, all clients on brokers that survive; then kill -9 a broker and measure, per
 * queue, the pause in confirms, the time to the first confirm after the kill, unknown outcomes, lost and duplicated
 * messages, and confirm latency before the kill and after recovery. Scenarios: kill an owner that is not the
 * controller, kill the controller; each with the follower loss hold at its default and at 0; several trials each.
 *
 * <p>Targets: Ganglion brokers started by the bench (default), three RabbitMQ nodes started by the bench
 * ({@code --rabbitmq}), or brokers it did not start ({@code --uri} with kill and restart commands). Output: a table, a
 * JSON file and an SVG chart of confirms per second per queue around the kill.
 */
@Command(
        name = "failover",
        mixinStandardHelpOptions = true,
        description = "Kill -9 a queue owner or the controller under load; pauses, unknown outcomes, lost, duplicates.")
final class FailoverBench implements Runnable {
    static final long SECOND = 1_000_000_000L;
    /** The width of a bar of the chart and of a step of {@code confirms_per_s} in the JSON. */
    static final long BUCKET = 200_000_000L;
    /** The control scenario, and the role its queues lost: nothing is killed. */
    static final String NONE = "none";

    @Option(names = "--rabbitmq", description = "run against 3 RabbitMQ nodes started by the bench (rabbitmq-server)")
    boolean rabbitmq;

    @Option(names = "--uri", description = "external target: the AMQP URI of a node (repeat, one per node)")
    List<String> uris = new ArrayList<>();

    @Option(names = "--node", description = "external target: the node names, in --uri order (default node-1..)")
    List<String> nodeNames = new ArrayList<>();

    @Option(names = "--kill-cmd", description = "external: shell command killing {node} ({index} is 1-based)")
    String killCommand;

    @Option(names = "--restart-cmd", description = "external: shell command starting {node} again")
    String restartCommand;

    @Option(
            names = "--owners-cmd",
            description = "external: prints queue owners as JSON [{name, leader, members}] (rabbitmqctl list_queues"
                    + " name leader members --formatter json)")
    String ownersCommand;

    @Option(names = "--controller-cmd", description = "external: prints the controller's node name")
    String controllerCommand;

    @Option(names = "--hold-cmd", description = "external: sets the follower loss hold to {ms}")
    String holdCommand;

    @Option(names = "--health-cmd", description = "external: exits 0 when the cluster is whole")
    String healthCommand;

    @Option(names = "--ganglion-http", description = "external Ganglion: HTTP API base URL per node, in --uri order")
    List<String> ganglionHttp = new ArrayList<>();

    @Option(names = "--http-user", defaultValue = "guest", description = "Ganglion HTTP API user")
    String httpUser;

    @Option(names = "--http-password", defaultValue = "guest", description = "Ganglion HTTP API password")
    String httpPassword;

    @Option(
            names = "--brokers",
            defaultValue = "3",
            description = "brokers the bench starts (default ${DEFAULT-VALUE})")
    int brokers;

    @Option(names = "--queues", description = "queues (default: one per node)")
    Integer queues;

    @Option(
            names = "--queue-args",
            split = ",",
            description = "queue declare arguments (default x-queue-type=quorum; today's Ganglion cluster:"
                    + " x-queue-type=classic)")
    Map<String, String> queueArgs = new LinkedHashMap<>(Map.of("x-queue-type", "quorum"));

    @Option(names = "--rate", defaultValue = "1000", description = "msg/s per queue (default ${DEFAULT-VALUE})")
    int rate;

    @Option(names = "--size", defaultValue = "100", description = "body bytes (default ${DEFAULT-VALUE})")
    int size;

    @Option(
            names = "--trials",
            defaultValue = "3",
            description = "trials per scenario and hold (default ${DEFAULT-VALUE})")
    int trials;

    @Option(
            names = "--duration-before",
            defaultValue = "20",
            description = "seconds of load before the kill (default ${DEFAULT-VALUE})")
    double before;

    @Option(
            names = "--warmup",
            defaultValue = "5",
            description =
                    "seconds of load before the measured part, left out of every figure (default ${DEFAULT-VALUE})")
    double warmup;

    @Option(
            names = "--first-warmup",
            defaultValue = "60",
            description = "seconds of load before the measured part of the run's first trial, left out of every figure:"
                    + " freshly started JVMs compile for the first minute of load (each broker's C2 compiler took"
                    + " 20-36%% of a core 40-60 s into it on two cores), and a broker that fails has been running"
                    + " far longer than that (default ${DEFAULT-VALUE}; 0 to use --warmup)")
    double firstWarmup;

    @Option(
            names = "--duration-after",
            defaultValue = "30",
            description = "seconds of load after the kill (default ${DEFAULT-VALUE})")
    double after;

    @Option(
            names = "--restart-after",
            defaultValue = "15",
            description = "restart the killed node this many seconds after the kill; negative: after the load"
                    + " (default ${DEFAULT-VALUE})")
    double restartAfter;

    @Option(
            names = "--timeout",
            defaultValue = "10",
            description = "seconds without a confirm before a publish's outcome is unknown (default ${DEFAULT-VALUE})")
    double timeout;

    @Option(
            names = "--scenarios",
            split = ",",
            defaultValue = "owner,controller,none",
            description = "owner (kill an owner that is not the controller), controller, none (the control: the same"
                    + " load, clients and figures with nothing killed) (default ${DEFAULT-VALUE})")
    List<String> scenarios;

    @Option(
            names = "--disk-probe-ms",
            defaultValue = "5",
            description = "beside the load, write 512 B and force it every this many ms on the brokers' disk, and"
                    + " report the longest force in each pause (0: no probe) (default ${DEFAULT-VALUE})")
    double diskProbeMs;

    @Option(
            names = "--cpu-probe-ms",
            defaultValue = "1",
            description = "beside the load, wake a thread every this many ms and report the longest time it waited"
                    + " for a core in each pause (0: no probe) (default ${DEFAULT-VALUE})")
    double cpuProbeMs;

    @Option(
            names = "--silence-ms",
            defaultValue = "30",
            description = "the shortest gap between confirms that the JSON lists under silences, from the measured"
                    + " window on (default ${DEFAULT-VALUE})")
    double silenceMs;

    /** The probes beside the load, each null when off. */
    record Probes(DiskProbe disk, CpuProbe cpu) {}

    @Option(
            names = "--holds",
            split = ",",
            defaultValue = "default,0",
            description = "follower loss hold values in ms, or default (default ${DEFAULT-VALUE})")
    List<String> holds;

    @Option(
            names = "--out",
            description = "folder for failover.json and failover.svg (default data/bench/failover-<time>)")
    Path out;

    @Option(names = "--dir", description = "data folder of the brokers the bench starts (default: a temporary folder)")
    Path dir;

    @Option(
            names = "--heap",
            defaultValue = "512m",
            description = "-Xmx of each Ganglion broker (default ${DEFAULT-VALUE})")
    String heap;

    @Mixin
    BrokerOptions broker = new BrokerOptions();

    private final PrintStream console = System.out;
    private final FailoverReport report = new FailoverReport(this, console);

    /** The brokers' data folder when the bench made it in the temporary folder, to delete at the end; else null. */
    Path temporaryRoot;

    /** Where the disk probe writes: the brokers' data folder when the bench starts them, else the output folder. */
    private Path probeDirectory;

    /** One queue in one trial. */
    record QueueResult(
            String queue,
            String owner,
            List<String> members,
            String role,
            String clientNode,
            double pauseSeconds,
            boolean pauseCensored,
            double pauseEndedAfterKillSeconds,
            double pauseToRestartSeconds,
            boolean pauseToRestartCensored,
            double gapFromRestartSeconds,
            double firstConfirmSeconds,
            double gapBeforeSeconds,
            double gapBeforeEndedSeconds,
            long sent,
            long skipped,
            FailoverStats.Accounting accounting,
            double p50BeforeMs,
            double p99BeforeMs,
            double p50AfterMs,
            double p99AfterMs,
            double[] confirmRate,
            long[][] silences,
            double diskForceInPauseMs,
            double cpuWaitInPauseMs) {}

    record Trial(
            String scenario,
            String hold,
            int trial,
            String victim,
            String controller,
            String killedAt,
            double killAtSeconds,
            double restartAtSeconds,
            double restartReadySeconds,
            double diskLongestBeforeMs,
            double diskLongestAfterMs,
            double cpuLongestBeforeMs,
            double cpuLongestAfterMs,
            double victimClosedSeconds,
            List<QueueResult> queues) {}

    @Override
    public void run() {
        validate();
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path outDir = out != null ? out : Path.of("data", "bench", "failover-" + stamp);
        try (FailoverTarget target = target()) {
            Files.createDirectories(outDir);
            console.println("bench failover: " + target.description());
            console.printf(
                    Locale.ROOT,
                    "  %d queues %s, %d msg/s each, %d B bodies, %s s warm-up (%s s in the first trial), %s s before and"
                            + " %s s after the kill,"
                            + " restart %s, unknown after %s s, %d trial(s)%n",
                    queueCount(target),
                    queueArgs,
                    rate,
                    size,
                    fmt(warmup),
                    fmt(Math.max(warmup, firstWarmup)),
                    fmt(before),
                    fmt(after),
                    restartAfter < 0 ? "after the load" : "+" + fmt(restartAfter) + " s",
                    fmt(timeout),
                    trials);
            List<String> holdValues = holdValues(target);
            List<Trial> results = new ArrayList<>();
            DiskProbe probe = diskProbeMs > 0
                    ? DiskProbe.start(probeDirectory != null ? probeDirectory : outDir, (long) (diskProbeMs * 1e6))
                    : null;
            CpuProbe cpuProbe = cpuProbeMs > 0 ? CpuProbe.start((long) (cpuProbeMs * 1e6)) : null;
            Probes probes = new Probes(probe, cpuProbe);
            try {
                for (String scenario : scenarios) {
                    if (scenario.equals("controller") && !target.hasController()) {
                        console.println("scenario controller: skipped, this target has no controller");
                        continue;
                    }
                    for (String hold : scenario.equals(NONE) ? List.of("n/a") : holdValues) {
                        for (int trial = 1; trial <= trials; trial++) {
                            results.add(runValidTrial(target, scenario, hold, trial, stamp, results.isEmpty(), probes));
                        }
                    }
                }
            } finally {
                if (cpuProbe != null) {
                    cpuProbe.close();
                }
                if (probe != null) {
                    probe.close();
                    if (probe.failure() != null) {
                        console.println(
                                "disk probe stopped early, its figures cover only the time before: " + probe.failure());
                    }
                }
            }
            report.printAndWrite(target, results, outDir);
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        } finally {
            removeTemporaryData(outDir);
        }
    }

    /**
     * The brokers' data under a temporary folder the bench made (no {@code --dir}) goes once they are stopped, about
     * 0.8 GB a run, which would fill a small disk in a few runs. Their logs are copied into the output folder first.
     * With {@code --dir} everything stays.
     */
    void removeTemporaryData(Path outDir) {
        if (temporaryRoot == null) {
            return;
        }
        try {
            if (Files.isDirectory(outDir)) {
                PerfTestBench.keepBrokerLogs(temporaryRoot, outDir, "broker");
            }
            BacklogBench.deleteTree(temporaryRoot);
        } catch (IOException e) {
            console.println("could not remove the brokers' data under " + temporaryRoot + ": " + e.getMessage());
        }
    }

    private void validate() {
        if (trials < 1
                || rate < 1
                || size < 16
                || before < 2
                || after < 2
                || timeout <= 0
                || !(diskProbeMs >= 0)
                || !(cpuProbeMs >= 0)
                || !(silenceMs > 0)
                || warmup < 0
                || firstWarmup < 0) {
            throw new Main.UsageError(
                    "need --trials >= 1, --rate >= 1, --size >= 16, --duration-before/after >= 2, --timeout > 0,"
                            + " --warmup and --first-warmup >= 0, --disk-probe-ms >= 0, --cpu-probe-ms >= 0,"
                            + " --silence-ms > 0");
        }
        for (String scenario : scenarios) {
            if (!scenario.equals("owner") && !scenario.equals("controller") && !scenario.equals(NONE)) {
                throw new Main.UsageError("unknown scenario '" + scenario + "': owner, controller or none");
            }
        }
        if (!uris.isEmpty() && (killCommand == null || restartCommand == null)) {
            throw new Main.UsageError("an external target (--uri) needs --kill-cmd and --restart-cmd");
        }
        if (rabbitmq && !uris.isEmpty()) {
            throw new Main.UsageError("--rabbitmq and --uri exclude each other");
        }
    }

    private FailoverTarget target() throws IOException, InterruptedException {
        if (!uris.isEmpty()) {
            Map<String, String> byNode = new LinkedHashMap<>();
            Map<String, String> http = new LinkedHashMap<>();
            for (int i = 0; i < uris.size(); i++) {
                String name = i < nodeNames.size() ? nodeNames.get(i) : "node-" + (i + 1);
                byNode.put(name, uris.get(i));
                if (i < ganglionHttp.size()) {
                    http.put(name, ganglionHttp.get(i));
                }
            }
            return new CommandTarget(
                    byNode,
                    new CommandTarget.Commands(
                            killCommand, restartCommand, ownersCommand, controllerCommand, holdCommand, healthCommand),
                    http,
                    httpUser,
                    httpPassword);
        }
        Path root = dir != null
                ? dir
                : Files.createTempDirectory(rabbitmq ? "rabbitmq-failover-bench" : "ganglion-failover-bench");
        temporaryRoot = dir != null ? null : root;
        probeDirectory = root;
        if (rabbitmq) {
            if (!RabbitMqTarget.installed()) {
                throw new IllegalStateException("rabbitmq-server is not installed (no " + RabbitMqTarget.HOME
                        + "/bin/rabbitmq-server): apt-get install rabbitmq-server, or point the bench at running"
                        + " brokers with --uri, --kill-cmd, --restart-cmd and --owners-cmd");
            }
            console.println("starting " + brokers + " RabbitMQ nodes under " + root + " ...");
            return RabbitMqTarget.start(root, brokers);
        }
        console.println("starting " + brokers + " Ganglion brokers under " + root + " ...");
        List<String> jvm = new ArrayList<>(List.of("-Xmx" + heap, "--enable-native-access=ALL-UNNAMED"));
        jvm.addAll(broker.jvm);
        return GanglionTarget.start(root, brokers, jvm, broker.settings);
    }

    int queueCount(FailoverTarget target) {
        return queues != null ? queues : target.nodes().size();
    }

    private List<String> holdValues(FailoverTarget target) throws IOException, InterruptedException {
        OptionalLong defaultHold = target.defaultHoldMs();
        boolean settable = defaultHold.isPresent() || holdCommand != null;
        if (!settable) {
            console.println("  this target has no follower loss hold: one run per scenario (hold n/a)");
            return List.of("n/a");
        }
        List<String> values = new ArrayList<>();
        for (String hold : holds) {
            if (hold.equals("default") && defaultHold.isEmpty()) {
                throw new Main.UsageError("the target does not report its default hold: give --holds in ms");
            }
            values.add(hold);
        }
        return values;
    }

    /**
     * Runs a trial until the cluster's roles held still until its kill, at most {@value #TRIAL_ATTEMPTS} times: a trial
     * whose controller or queue owners moved during its warm-up would kill a broker of another role than its scenario
     * names (the metadata leadership can move in the first seconds of load, and an owner trial would then kill the
     * controller). Each voided attempt is printed and kept in {@link #voidedTrials}.
     */
    private Trial runValidTrial(
            FailoverTarget target, String scenario, String hold, int trial, String stamp, boolean first, Probes probes)
            throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            // the run's first trial meets JVMs (the brokers', the bench's) that never ran this load
            double warm = first ? Math.max(warmup, firstWarmup) : warmup;
            String attemptStamp = stamp + (attempt == 1 ? "" : "r" + attempt);
            try {
                Trial result = new FailoverTrial(
                                this, console, target, scenario, hold, trial, attemptStamp, warm, probes)
                        .run();
                report.printTrial(result);
                return result;
            } catch (FailoverTrial.VoidTrial e) {
                voidedTrials.add(e.getMessage());
                boolean again = attempt < TRIAL_ATTEMPTS;
                console.println(e.getMessage() + (again ? ": running the trial again" : ""));
                if (!again) {
                    throw new IOException(
                            "the cluster's roles moved before the kill in " + TRIAL_ATTEMPTS + " attempts of a trial");
                }
            }
        }
    }

    static final int TRIAL_ATTEMPTS = 3;

    /** Trials voided because the roles moved before their kill, as printed. */
    final List<String> voidedTrials = new ArrayList<>();

    static double seconds(long nanos) {
        return nanos == FailoverStats.NONE ? Double.NaN : nanos / 1e9;
    }

    static double millis(long nanos) {
        return nanos == FailoverStats.NONE ? Double.NaN : nanos / 1e6;
    }

    static String fmt(double value) {
        return Double.isNaN(value)
                ? "-"
                : String.format(Locale.ROOT, value == Math.rint(value) ? "%.0f" : "%.1f", value);
    }

    static String fmt2(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }
}
