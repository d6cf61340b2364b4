package io.ganglion.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.ganglion.cli.Main;
import io.ganglion.cli.Waits;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import picocli.CommandLine.Command;
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
    private static final long SECOND = 1_000_000_000L;
    private static final long BUCKET = 200_000_000L;
    /** The control scenario, and the role its queues lost: nothing is killed. */
    static final String NONE = "none";
    /** How far before a silence its send gap is looked for: about a confirm latency. */
    private static final long SILENCE_LOOK_BACK = 20_000_000L;

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

    @Option(
            names = "--broker-jvm",
            description = "one more JVM option for each Ganglion broker, e.g. --broker-jvm=-XX:+UseG1GC (repeatable)")
    List<String> brokerJvm = new ArrayList<>();

    @Option(
            names = "--broker-set",
            description = "one more setting for each Ganglion broker, KEY=VALUE as `ganglion broker --set` takes it,"
                    + " e.g. --broker-set storage.group_commit_us=0 (repeatable)")
    Map<String, String> brokerSettings = new java.util.LinkedHashMap<>();

    private final PrintStream console = System.out;

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
            report(target, results, outDir);
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
     * 0.8 GB a run: left behind, a few runs filled this machine's disk (session 16). Their logs are copied into the
     * output folder first. With {@code --dir} everything stays.
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
        jvm.addAll(brokerJvm);
        return GanglionTarget.start(root, brokers, jvm, brokerSettings);
    }

    private int queueCount(FailoverTarget target) {
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
     * names (session 17: the metadata leadership moved in the first seconds of load, and an owner trial killed the
     * controller). Each voided attempt is printed and kept in {@link #voidedTrials}.
     */
    private Trial runValidTrial(
            FailoverTarget target, String scenario, String hold, int trial, String stamp, boolean first, Probes probes)
            throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            // the run's first trial meets JVMs (the brokers', the bench's) that never ran this load
            double warm = first ? Math.max(warmup, firstWarmup) : warmup;
            try {
                return runTrial(
                        target, scenario, hold, trial, stamp + (attempt == 1 ? "" : "r" + attempt), warm, probes);
            } catch (VoidTrial e) {
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

    /** A trial whose roles moved before its kill: nothing was killed, its figures are dropped. */
    static final class VoidTrial extends Exception {
        VoidTrial(String message) {
            super(message);
        }
    }

    /**
     * Why a trial that kills {@code victim} no longer measures its scenario, or null when it still does: the controller
     * or a queue's owner changed between the trial's start (when the victim and the clients' brokers were chosen) and
     * its kill.
     */
    static String rolesMoved(
            Optional<String> controllerAtStart,
            Optional<String> controllerNow,
            Map<String, FailoverTarget.Placement> atStart,
            Map<String, FailoverTarget.Placement> now) {
        if (!controllerAtStart.equals(controllerNow)) {
            return "the controller moved from " + controllerAtStart.orElse("none") + " to "
                    + controllerNow.orElse("none") + " before the kill";
        }
        for (Map.Entry<String, FailoverTarget.Placement> queue : atStart.entrySet()) {
            FailoverTarget.Placement later = now.get(queue.getKey());
            String owner = later == null ? "none" : later.owner();
            if (!queue.getValue().owner().equals(owner)) {
                return queue.getKey() + "'s owner moved from "
                        + queue.getValue().owner() + " to " + owner + " before the kill";
            }
        }
        return null;
    }

    private Trial runTrial(
            FailoverTarget target,
            String scenario,
            String hold,
            int trial,
            String stamp,
            double trialWarmup,
            Probes probes)
            throws IOException, InterruptedException, VoidTrial {
        String label = String.format(Locale.ROOT, "%s hold=%s trial %d/%d", scenario, hold, trial, trials);
        target.awaitHealthy();
        if (!hold.equals("n/a")) {
            long ms = hold.equals("default") ? target.defaultHoldMs().orElseThrow() : Long.parseLong(hold);
            target.setHoldMs(ms);
        }
        List<String> nodes = target.nodes();
        List<String> names = new ArrayList<>();
        for (int q = 0; q < queueCount(target); q++) {
            String name = String.format(
                    Locale.ROOT, "failover-%s-%s-%s-%d-q%d", stamp, scenario, hold.replace("/", ""), trial, q + 1);
            declare(target.amqpUri(nodes.get(q % nodes.size())), name);
            names.add(name);
        }
        Map<String, FailoverTarget.Placement> placements = awaitPlacements(target, names);
        Optional<String> controller = target.controller();
        // the control (none) places its clients as an owner trial does, and kills nothing
        String victim = victim(scenario.equals(NONE) ? "owner" : scenario, trial, nodes, names, placements, controller);
        boolean kills = !scenario.equals(NONE);
        List<String> survivors = nodes.stream().filter(n -> !n.equals(victim)).toList();

        long origin = System.nanoTime();
        long publishFrom = SECOND / 2;
        long killAt = publishFrom + (long) ((trialWarmup + before) * SECOND);
        long publishUntil = killAt + (long) (after * SECOND);
        int capacity =
                (int) Math.min(Integer.MAX_VALUE - 8, (long) ((trialWarmup + before + after + 2) * rate * 1.1) + 1000);
        long runId = new SecureRandom().nextLong();
        List<FailoverWorkload> loads = new ArrayList<>();
        List<String> clientNodes = new ArrayList<>();
        ScheduledExecutorService progress = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "bench-progress");
            thread.setDaemon(true);
            return thread;
        });
        long restartAtNanos = FailoverStats.NONE;
        long restartReadyNanos = FailoverStats.NONE;
        ExitWatch exitWatch = null;
        long killNanos;
        java.time.Instant killedAt;
        try {
            for (int q = 0; q < names.size(); q++) {
                FailoverTarget.Placement placement = placements.get(names.get(q));
                String client =
                        survivors.contains(placement.owner()) ? placement.owner() : survivors.get(q % survivors.size());
                clientNodes.add(client);
                String uri = target.amqpUri(client);
                loads.add(new FailoverWorkload(
                        names.get(q), uri, uri, rate, size, (long) (timeout * SECOND), origin, capacity, runId));
            }
            for (FailoverWorkload load : loads) {
                load.startConsumer();
            }
            for (FailoverWorkload load : loads) {
                load.startPublisher(publishFrom, publishUntil);
            }
            long[] lastConfirmed = new long[loads.size()];
            progress.scheduleAtFixedRate(
                    () -> progressLine(label, victim, loads, lastConfirmed, origin, killAt), 1, 1, TimeUnit.SECONDS);
            sleepUntil(origin, killAt - SECOND / 2);
            if (kills) {
                exitWatch = openExitWatch(target.amqpUri(victim), origin);
            }
            sleepUntil(origin, killAt);
            if (kills) {
                String moved = rolesMoved(controller, target.controller(), placements, target.placements(names));
                if (moved != null) {
                    throw new VoidTrial(label + ": void, " + moved);
                }
            }
            killNanos = System.nanoTime() - origin;
            killedAt = java.time.Instant.now();
            if (kills) {
                target.kill(victim);
            }
            CompletableFuture<long[]> restart = null;
            if (kills && restartAfter >= 0) {
                long restartAt = killNanos + (long) (restartAfter * SECOND);
                restart = CompletableFuture.supplyAsync(() -> {
                    try {
                        sleepUntil(origin, restartAt);
                        long issued = System.nanoTime() - origin;
                        target.restart(victim);
                        return new long[] {issued, System.nanoTime() - origin};
                    } catch (IOException e) {
                        throw new IllegalStateException("restarting " + victim + ": " + e.getMessage(), e);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted");
                    }
                });
            }
            sleepUntil(origin, publishUntil);
            for (FailoverWorkload load : loads) {
                load.stopPublisher();
            }
            progress.shutdownNow();
            clearProgress();
            long[] restarted;
            if (!kills) {
                restarted = new long[] {FailoverStats.NONE, FailoverStats.NONE};
            } else if (restart != null) {
                try {
                    restarted = restart.get();
                } catch (ExecutionException e) {
                    throw new IOException(e.getCause().getMessage(), e.getCause());
                }
            } else {
                long issued = System.nanoTime() - origin;
                target.restart(victim);
                restarted = new long[] {issued, System.nanoTime() - origin};
            }
            restartAtNanos = restarted[0];
            restartReadyNanos = restarted[1];
            target.awaitHealthy();
            for (FailoverWorkload load : loads) {
                load.drain(SECOND, 15 * SECOND, 120 * SECOND);
            }
            for (FailoverWorkload load : loads) {
                load.stopConsumer();
            }
        } finally {
            progress.shutdownNow();
            clearProgress();
            if (exitWatch != null) {
                exitWatch.close();
            }
            for (FailoverWorkload load : loads) {
                load.close();
            }
            deleteQueues(target, names);
        }

        // the figures before the kill start after the trial's warm-up
        long measuredFrom = publishFrom + (long) (trialWarmup * SECOND);
        // each probe's longest span in a window of the trial's times (offsets from origin); null without the probe
        java.util.function.LongBinaryOperator diskForce = probes.disk() == null
                ? null
                : (from, to) -> probes.disk().longestOverlapping(origin + from, origin + to);
        java.util.function.LongBinaryOperator cpuWait =
                probes.cpu() == null ? null : (from, to) -> probes.cpu().longestOverlapping(origin + from, origin + to);
        List<QueueResult> queueResults = new ArrayList<>();
        for (int q = 0; q < loads.size(); q++) {
            queueResults.add(measure(
                    loads.get(q),
                    placements.get(names.get(q)),
                    kills ? victim : null,
                    clientNodes.get(q),
                    measuredFrom,
                    killNanos,
                    restartAtNanos,
                    publishUntil,
                    diskForce,
                    cpuWait));
        }
        Trial result = new Trial(
                scenario,
                hold,
                trial,
                kills ? victim : null,
                controller.orElse(null),
                killedAt.toString(),
                seconds(killNanos),
                restartAtNanos == FailoverStats.NONE ? Double.NaN : seconds(restartAtNanos - killNanos),
                restartReadyNanos == FailoverStats.NONE ? Double.NaN : seconds(restartReadyNanos - killNanos),
                probeMs(diskForce, measuredFrom, killNanos),
                probeMs(diskForce, killNanos, publishUntil),
                probeMs(cpuWait, measuredFrom, killNanos),
                probeMs(cpuWait, killNanos, publishUntil),
                victimClosedSeconds(exitWatch, killNanos),
                queueResults);
        printTrial(result);
        return result;
    }

    /** A watch on the victim's AMQP port, or null (printed) when it could not connect: the trial runs without it. */
    private ExitWatch openExitWatch(String uri, long origin) {
        try {
            return ExitWatch.open(uri, origin);
        } catch (IOException e) {
            console.println("  (could not watch the victim's socket: " + e.getMessage() + ")");
            return null;
        }
    }

    /**
     * Seconds from the kill until the victim's socket closed, or NaN: no watch, still open, or closed before the kill
     * (then it measured something else).
     */
    static double victimClosedSeconds(ExitWatch watch, long killNanos) {
        long closed = watch == null ? ExitWatch.NONE : watch.closedNanos();
        return closed == ExitWatch.NONE || closed < killNanos ? Double.NaN : seconds(closed - killNanos);
    }

    private void declare(String uri, String queue) throws IOException {
        Map<String, Object> arguments = new LinkedHashMap<>();
        queueArgs.forEach((key, value) -> arguments.put(key, argument(value)));
        try (Connection connection = FailoverWorkload.connect(uri, "bench-declare")) {
            Channel channel = connection.createChannel();
            channel.queueDeclare(queue, true, false, false, arguments);
        } catch (IOException e) {
            String reason = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
            throw new IOException("declaring " + queue + " with " + queueArgs + " through " + uri + " failed: " + reason
                    + (reason != null && reason.contains("540")
                            ? " (a Ganglion cluster refuses quorum queues until replication is wired:"
                                    + " --queue-args x-queue-type=classic)"
                            : ""));
        }
    }

    /** A declare argument from text: integers and booleans as such, anything else a string. */
    static Object argument(String value) {
        if (value.equals("true") || value.equals("false")) {
            return Boolean.parseBoolean(value);
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            return value;
        }
    }

    private Map<String, FailoverTarget.Placement> awaitPlacements(FailoverTarget target, List<String> names)
            throws IOException, InterruptedException {
        AtomicReference<Map<String, FailoverTarget.Placement>> placements = new AtomicReference<>(Map.of());
        Waits.until(
                Duration.ofSeconds(30),
                Duration.ofMillis(200),
                "the target did not report an owner for every queue within 30 s",
                () -> {
                    placements.set(target.placements(names));
                    return placements.get().keySet().containsAll(names);
                });
        return placements.get();
    }

    /**
     * The node to kill: for {@code owner}, a node that owns a queue and is not the controller, rotating over trials; for
     * {@code controller}, the controller.
     */
    static String victim(
            String scenario,
            int trial,
            List<String> nodes,
            List<String> queues,
            Map<String, FailoverTarget.Placement> placements,
            Optional<String> controller) {
        if (scenario.equals("controller")) {
            return controller.orElseThrow(() -> new IllegalStateException("no controller is known"));
        }
        List<String> candidates = nodes.stream()
                .filter(node -> controller.map(c -> !c.equals(node)).orElse(true))
                .filter(node ->
                        queues.stream().anyMatch(q -> placements.get(q).owner().equals(node)))
                .toList();
        if (candidates.isEmpty()) {
            throw new IllegalStateException("no broker owns a queue without being the controller: " + placements);
        }
        return candidates.get((trial - 1) % candidates.size());
    }

    private QueueResult measure(
            FailoverWorkload load,
            FailoverTarget.Placement placement,
            String victim,
            String client,
            long measuredFrom,
            long kill,
            long restartAt,
            long publishUntil,
            java.util.function.LongBinaryOperator diskForce,
            java.util.function.LongBinaryOperator cpuWait) {
        int count = load.sentCount();
        long[] confirms = java.util.Arrays.copyOf(load.confirmTimes, count);
        FailoverStats.Pause pause = FailoverStats.pause(confirms, kill, publishUntil);
        // the kill's own pause and the killed broker's return apart: its restart (a JVM starting, compiling and
        // catching up beside the others) is a second event in the same window
        boolean returns = restartAt != FailoverStats.NONE && restartAt < publishUntil;
        FailoverStats.Pause toRestart = returns ? FailoverStats.pause(confirms, kill, restartAt) : pause;
        FailoverStats.Pause fromRestart = returns
                ? FailoverStats.longestGap(confirms, restartAt, publishUntil)
                : new FailoverStats.Pause(FailoverStats.NONE, FailoverStats.NONE, false);
        long first = FailoverStats.firstConfirmAfter(load.sendTimes, confirms, count, kill);
        long[] beforeKill = FailoverStats.latencies(load.sendTimes, confirms, count, measuredFrom, kill);
        FailoverStats.Pause gapBefore = FailoverStats.longestGap(confirms, measuredFrom, kill);
        long[] afterRecovery = pause.censored()
                ? new long[0]
                : FailoverStats.latencies(load.sendTimes, confirms, count, pause.endNanos() + SECOND, publishUntil);
        long chartFrom = kill - (long) (before * SECOND);
        long pauseFrom = pause.endNanos() - pause.nanos();
        return new QueueResult(
                load.queue,
                placement.owner(),
                placement.members(),
                victim == null ? NONE : placement.roleOf(victim),
                client,
                seconds(pause.nanos()),
                pause.censored(),
                seconds(pause.endNanos() - kill),
                seconds(toRestart.nanos()),
                toRestart.censored(),
                seconds(fromRestart.nanos()),
                first == FailoverStats.NONE ? Double.NaN : seconds(first - kill),
                seconds(gapBefore.nanos()),
                gapBefore.endNanos() == FailoverStats.NONE ? Double.NaN : seconds(gapBefore.endNanos() - kill),
                count,
                load.skippedCount(),
                FailoverStats.account(load.outcomes, load.deliveries, load.redeliveredDuplicates, count),
                millis(FailoverStats.percentile(beforeKill, 0.50)),
                millis(FailoverStats.percentile(beforeKill, 0.99)),
                millis(FailoverStats.percentile(afterRecovery, 0.50)),
                millis(FailoverStats.percentile(afterRecovery, 0.99)),
                FailoverStats.confirmRate(confirms, chartFrom, publishUntil, BUCKET),
                describe(
                        load,
                        confirms,
                        count,
                        kill,
                        FailoverStats.silences(confirms, measuredFrom, publishUntil, (long) (silenceMs * 1e6)),
                        diskForce,
                        cpuWait),
                probeMs(diskForce, pauseFrom, pause.endNanos()),
                probeMs(cpuWait, pauseFrom, pause.endNanos()));
    }

    /**
     * Each silence as {from, to} relative to the kill, then the send gap and latency of {@link
     * FailoverStats#describeSilence}, then the longest disk probe force and the longest wait of the CPU probe for a core
     * that overlapped it (each {@link FailoverStats#NONE} without its probe).
     */
    private static long[][] describe(
            FailoverWorkload load,
            long[] confirms,
            int count,
            long kill,
            long[][] spans,
            java.util.function.LongBinaryOperator diskForce,
            java.util.function.LongBinaryOperator cpuWait) {
        long[][] described = new long[spans.length][];
        for (int i = 0; i < spans.length; i++) {
            long[] seen = FailoverStats.describeSilence(
                    load.sendTimes, confirms, count, spans[i][0], spans[i][1], SILENCE_LOOK_BACK);
            long disk = diskForce == null ? FailoverStats.NONE : diskForce.applyAsLong(spans[i][0], spans[i][1]);
            long cpu = cpuWait == null ? FailoverStats.NONE : cpuWait.applyAsLong(spans[i][0], spans[i][1]);
            described[i] = new long[] {spans[i][0] - kill, spans[i][1] - kill, seen[0], seen[1], disk, cpu};
        }
        return described;
    }

    /** A probe's longest span in {@code [from, to]}, in ms; NaN without the probe. */
    private static double probeMs(java.util.function.LongBinaryOperator probe, long from, long to) {
        return probe == null ? Double.NaN : millis(probe.applyAsLong(from, to));
    }

    private static double seconds(long nanos) {
        return nanos == FailoverStats.NONE ? Double.NaN : nanos / 1e9;
    }

    private static double millis(long nanos) {
        return nanos == FailoverStats.NONE ? Double.NaN : nanos / 1e6;
    }

    private static String fmt(double value) {
        return Double.isNaN(value)
                ? "-"
                : String.format(Locale.ROOT, value == Math.rint(value) ? "%.0f" : "%.1f", value);
    }

    private static void sleepUntil(long origin, long at) throws InterruptedException {
        long wait = at - (System.nanoTime() - origin);
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    private boolean progressOnOneLine() {
        return System.console() != null;
    }

    private void progressLine(
            String label, String victim, List<FailoverWorkload> loads, long[] lastConfirmed, long origin, long killAt) {
        long t = System.nanoTime() - origin;
        StringBuilder line = new StringBuilder(String.format(
                Locale.ROOT,
                "[%s] t=%+5.1fs %s %s:",
                label,
                (t - killAt) / 1e9,
                t < killAt ? "before killing" : "killed",
                victim));
        for (int q = 0; q < loads.size(); q++) {
            long confirmed = loads.get(q).confirmedCount();
            line.append(String.format(
                    Locale.ROOT,
                    " q%d %d/s (%d waiting)",
                    q + 1,
                    confirmed - lastConfirmed[q],
                    loads.get(q).unresolvedCount()));
            lastConfirmed[q] = confirmed;
        }
        if (progressOnOneLine()) {
            console.print("\r" + line + "   ");
            console.flush();
        } else if (((t / SECOND) % 5) == 0) {
            console.println(line);
        }
    }

    private void clearProgress() {
        if (progressOnOneLine()) {
            console.print("\r" + " ".repeat(150) + "\r");
        }
    }

    private void deleteQueues(FailoverTarget target, List<String> names) {
        try (Connection connection =
                FailoverWorkload.connect(target.amqpUri(target.nodes().get(0)), "bench-delete")) {
            for (String name : names) {
                Channel channel = connection.createChannel();
                channel.queueDelete(name);
                channel.close();
            }
        } catch (Exception e) {
            console.println("  (could not delete the trial's queues: " + e.getMessage() + ")");
        }
    }

    private void printTrial(Trial trial) {
        if (trial.victim() == null) {
            console.printf(
                    Locale.ROOT,
                    "%s trial %d: nothing killed (controller %s), the mark at %.1f s (%s)%n",
                    trial.scenario(),
                    trial.trial(),
                    trial.controller() == null ? "none" : trial.controller(),
                    trial.killAtSeconds(),
                    trial.killedAt());
        } else {
            console.printf(
                    Locale.ROOT,
                    "%s hold=%s trial %d: killed %s (controller %s) at %.1f s (%s), its sockets closed +%s s,"
                            + " restarted +%.1f s, back +%.1f s%n",
                    trial.scenario(),
                    trial.hold(),
                    trial.trial(),
                    trial.victim(),
                    trial.controller() == null ? "none" : trial.controller(),
                    trial.killAtSeconds(),
                    trial.killedAt(),
                    fmt2(trial.victimClosedSeconds()),
                    trial.restartAtSeconds(),
                    trial.restartReadySeconds());
        }
        for (QueueResult q : trial.queues()) {
            FailoverStats.Accounting a = q.accounting();
            console.printf(
                    Locale.ROOT,
                    "  %-9s lost %-8s pause %6.2fs%s (ended +%5.2fs) first confirm %6s s  gap before %5.2fs (ended %6.2fs)  sent %d confirmed %d unknown %d (nack %d)"
                            + " lost %d dup %d (%d redelivered)  p50/p99 before %s/%s ms after %s/%s ms%n",
                    q.queue().substring(q.queue().lastIndexOf('-') + 1),
                    q.role(),
                    q.pauseSeconds(),
                    q.pauseCensored() ? "+" : " ",
                    q.pauseEndedAfterKillSeconds(),
                    fmt2(q.firstConfirmSeconds()),
                    q.gapBeforeSeconds(),
                    q.gapBeforeEndedSeconds(),
                    a.sent(),
                    a.confirmed(),
                    a.unknown(),
                    a.nacked(),
                    a.lost(),
                    a.duplicates(),
                    a.duplicatesRedelivered(),
                    fmt(q.p50BeforeMs()),
                    fmt(q.p99BeforeMs()),
                    fmt(q.p50AfterMs()),
                    fmt(q.p99AfterMs()));
        }
        printProbe(
                trial,
                "disk probe: longest force",
                trial.diskLongestBeforeMs(),
                trial.diskLongestAfterMs(),
                QueueResult::diskForceInPauseMs);
        printProbe(
                trial,
                "cpu probe: longest wait for a core",
                trial.cpuLongestBeforeMs(),
                trial.cpuLongestAfterMs(),
                QueueResult::cpuWaitInPauseMs);
    }

    /** A probe's line under a trial: its longest span before and after the kill, and in each queue's pause. */
    private void printProbe(
            Trial trial, String what, double beforeMs, double afterMs, ToDoubleFunction<QueueResult> inPauseMs) {
        if (Double.isNaN(afterMs)) {
            return; // the run had no such probe
        }
        console.printf(
                Locale.ROOT,
                "  %s %.1f ms before the %s, %.1f ms after; in each queue's pause: %s%n",
                what,
                beforeMs,
                trial.victim() == null ? "mark" : "kill",
                afterMs,
                String.join(
                        " ",
                        trial.queues().stream()
                                .map(q -> String.format(Locale.ROOT, "%.1f ms", inPauseMs.applyAsDouble(q)))
                                .toList()));
    }

    private static String fmt2(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }

    /** Medians and ranges over trials, per scenario, hold and role lost. */
    record Row(String scenario, String hold, String role, List<QueueResult> samples) {}

    static List<Row> rows(List<Trial> trials) {
        Map<String, Row> rows = new LinkedHashMap<>();
        for (Trial trial : trials) {
            for (QueueResult q : trial.queues()) {
                String key = trial.scenario() + "|" + trial.hold() + "|" + q.role();
                rows.computeIfAbsent(key, k -> new Row(trial.scenario(), trial.hold(), q.role(), new ArrayList<>()))
                        .samples()
                        .add(q);
            }
        }
        return List.copyOf(rows.values());
    }

    /**
     * How many samples paused no longer than twice their own p99 confirm latency before the kill: the bound for
     * a queue that only lost a follower, counted for every row so the control (nothing killed) can be read beside it.
     */
    static long withinTwiceP99(List<QueueResult> samples) {
        return withinTwiceP99(samples, QueueResult::pauseSeconds, QueueResult::pauseCensored);
    }

    /** {@link #withinTwiceP99} for the pause from the kill to the restart of the killed broker. */
    static long withinTwiceP99ToRestart(List<QueueResult> samples) {
        return withinTwiceP99(samples, QueueResult::pauseToRestartSeconds, QueueResult::pauseToRestartCensored);
    }

    /** {@link #withinTwiceP99} for the longest gap from the restart of the killed broker on (none: not within). */
    static long withinTwiceP99FromRestart(List<QueueResult> samples) {
        return withinTwiceP99(samples, QueueResult::gapFromRestartSeconds, q -> false);
    }

    /** How many samples' {@code pause} (seconds; NaN never counts) was not censored and at most twice their p99. */
    private static long withinTwiceP99(
            List<QueueResult> samples, ToDoubleFunction<QueueResult> pause, Predicate<QueueResult> censored) {
        return samples.stream()
                .filter(q -> !censored.test(q) && pause.applyAsDouble(q) * 1000 <= 2 * q.p99BeforeMs())
                .count();
    }

    /**
     * How many samples' pause overlapped a force of the disk probe longer than twice their p99 before the kill: pauses
     * the shared disk alone makes longer than the bound, whatever a broker that confirms durable writes does; -1 when
     * the run had no probe.
     */
    static long diskOverTwiceP99(List<QueueResult> samples) {
        return overTwiceP99(samples, QueueResult::diskForceInPauseMs);
    }

    /**
     * How many samples' pause overlapped a wait of the CPU probe for a core longer than twice their p99 before the
     * kill: pauses in which a thread that woke could not run for longer than the bound, the machine's cores all taken;
     * -1 when the run had no probe.
     */
    static long cpuOverTwiceP99(List<QueueResult> samples) {
        return overTwiceP99(samples, QueueResult::cpuWaitInPauseMs);
    }

    private static long overTwiceP99(List<QueueResult> samples, ToDoubleFunction<QueueResult> probeMs) {
        if (samples.stream().allMatch(q -> Double.isNaN(probeMs.applyAsDouble(q)))) {
            return -1;
        }
        return samples.stream()
                .filter(q -> probeMs.applyAsDouble(q) > 2 * q.p99BeforeMs())
                .count();
    }

    /** The samples whose killed broker restarted within the load: those with a gap from the restart on. */
    static long restartedWithin(List<QueueResult> samples) {
        return samples.stream()
                .filter(q -> !Double.isNaN(q.gapFromRestartSeconds()))
                .count();
    }

    /** The kill|return column: {@code a|b/n}, {@code a|-} when no broker restarted within the load. */
    static String killAndReturn(List<QueueResult> samples) {
        long returned = restartedWithin(samples);
        return withinTwiceP99ToRestart(samples) + "|"
                + (returned == 0 ? "-" : withinTwiceP99FromRestart(samples) + "/" + returned);
    }

    /** {@code median [min-max]} of a metric over samples, NaN samples left out. */
    static <T> String summary(List<T> samples, ToDoubleFunction<T> metric, String format) {
        double[] values = samples.stream()
                .mapToDouble(metric)
                .filter(v -> !Double.isNaN(v))
                .toArray();
        if (values.length == 0) {
            return "-";
        }
        double min = java.util.Arrays.stream(values).min().orElseThrow();
        double max = java.util.Arrays.stream(values).max().orElseThrow();
        String median = String.format(Locale.ROOT, format, FailoverStats.median(values));
        return values.length == 1 || min == max
                ? median
                : median + " [" + String.format(Locale.ROOT, format, min) + "-"
                        + String.format(Locale.ROOT, format, max) + "]";
    }

    private void report(FailoverTarget target, List<Trial> trials, Path outDir) throws IOException {
        List<Row> rows = rows(trials);
        console.println();
        console.println("bench failover: " + target.description() + ", " + queueArgs + ", " + rate
                + " msg/s per queue; medians [ranges] over trials; pause+ = no confirm after the kill in the window");
        if (!voidedTrials.isEmpty()) {
            console.println(voidedTrials.size() + " trial(s) run again, the roles moved before their kill: "
                    + String.join("; ", voidedTrials));
        }
        String header = String.format(
                Locale.ROOT,
                "%-10s %-7s %-8s %2s %-20s %-9s %-11s %-9s %-9s %-20s %-20s %-20s %-16s %-9s %-12s %-20s %-20s %-20s %-20s",
                "scenario",
                "hold",
                "lost",
                "n",
                "pause s",
                "<=2 p99",
                "kill|return",
                "disk>2p99",
                "cpu>2p99",
                "return gap s",
                "1st confirm s",
                "gap before s",
                "unknown",
                "lost",
                "duplicates",
                "p50 before ms",
                "p99 before ms",
                "p50 after ms",
                "p99 after ms");
        console.println(header);
        for (Row row : rows) {
            List<QueueResult> s = row.samples();
            boolean censored = s.stream().anyMatch(QueueResult::pauseCensored);
            console.printf(
                    Locale.ROOT,
                    "%-10s %-7s %-8s %2d %-20s %-9s %-11s %-9s %-9s %-20s %-20s %-20s %-16s %-9s %-12s %-20s %-20s %-20s %-20s%n",
                    row.scenario(),
                    row.hold(),
                    row.role(),
                    s.size(),
                    summary(s, QueueResult::pauseSeconds, "%.2f") + (censored ? "+" : ""),
                    withinTwiceP99(s) + "/" + s.size(),
                    killAndReturn(s),
                    diskOverTwiceP99(s) < 0 ? "-" : diskOverTwiceP99(s) + "/" + s.size(),
                    cpuOverTwiceP99(s) < 0 ? "-" : cpuOverTwiceP99(s) + "/" + s.size(),
                    summary(s, QueueResult::gapFromRestartSeconds, "%.2f"),
                    summary(s, QueueResult::firstConfirmSeconds, "%.2f"),
                    summary(s, QueueResult::gapBeforeSeconds, "%.2f"),
                    summary(s, q -> q.accounting().unknown(), "%.0f"),
                    summary(s, q -> q.accounting().lost(), "%.0f"),
                    summary(s, q -> q.accounting().duplicates(), "%.0f"),
                    summary(s, QueueResult::p50BeforeMs, "%.1f"),
                    summary(s, QueueResult::p99BeforeMs, "%.1f"),
                    summary(s, QueueResult::p50AfterMs, "%.1f"),
                    summary(s, QueueResult::p99AfterMs, "%.1f"));
        }
        Map<String, List<Trial>> killing = new LinkedHashMap<>();
        for (Trial trial : trials) {
            if (trial.victim() != null) {
                killing.computeIfAbsent(trial.scenario() + " hold=" + trial.hold(), k -> new ArrayList<>())
                        .add(trial);
            }
        }
        killing.forEach((label, list) -> console.printf(
                Locale.ROOT,
                "%s: the killed broker's sockets closed %s s after the kill (no survivor could learn of it sooner)%n",
                label,
                summary(list, Trial::victimClosedSeconds, "%.3f")));
        Path json = outDir.resolve("failover.json");
        Path svg = outDir.resolve("failover.svg");
        new ObjectMapper()
                .enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(json.toFile(), document(target, trials, rows));
        Files.writeString(svg, chart(target, trials));
        console.println();
        console.println("wrote " + json + " and " + svg);
    }

    private Map<String, Object> document(FailoverTarget target, List<Trial> trials, List<Row> rows) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("target", target.description());
        doc.put("nodes", target.nodes());
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("queue_args", queueArgs);
        config.put("rate_per_queue", rate);
        config.put("body_bytes", size);
        config.put("warmup_seconds", warmup);
        config.put("first_trial_warmup_seconds", Math.max(warmup, firstWarmup));
        config.put("seconds_before", before);
        config.put("seconds_after", after);
        config.put("restart_after_seconds", restartAfter);
        config.put("unknown_after_seconds", timeout);
        config.put("trials", this.trials);
        config.put("disk_probe_ms", diskProbeMs);
        config.put("cpu_probe_ms", cpuProbeMs);
        config.put("chart_bucket_seconds", BUCKET / 1e9);
        doc.put("config", config);
        List<Map<String, Object>> summary = new ArrayList<>();
        for (Row row : rows) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("scenario", row.scenario());
            r.put("hold", row.hold());
            r.put("role_lost", row.role());
            r.put("samples", row.samples().size());
            r.put("pause_s", stats(row.samples(), QueueResult::pauseSeconds));
            r.put("pause_within_2x_p99_before", withinTwiceP99(row.samples()));
            r.put("pause_to_restart_s", stats(row.samples(), QueueResult::pauseToRestartSeconds));
            r.put("pause_to_restart_within_2x_p99_before", withinTwiceP99ToRestart(row.samples()));
            r.put("gap_from_restart_s", stats(row.samples(), QueueResult::gapFromRestartSeconds));
            r.put("gap_from_restart_within_2x_p99_before", withinTwiceP99FromRestart(row.samples()));
            r.put("samples_restarted_within_load", restartedWithin(row.samples()));
            r.put("disk_force_in_pause_over_2x_p99_before", diskOverTwiceP99(row.samples()));
            r.put("disk_force_in_pause_ms", stats(row.samples(), QueueResult::diskForceInPauseMs));
            r.put("cpu_wait_in_pause_over_2x_p99_before", cpuOverTwiceP99(row.samples()));
            r.put("cpu_wait_in_pause_ms", stats(row.samples(), QueueResult::cpuWaitInPauseMs));
            r.put("first_confirm_after_kill_s", stats(row.samples(), QueueResult::firstConfirmSeconds));
            r.put("longest_gap_before_kill_s", stats(row.samples(), QueueResult::gapBeforeSeconds));
            r.put("unknown", stats(row.samples(), q -> q.accounting().unknown()));
            r.put("lost", stats(row.samples(), q -> q.accounting().lost()));
            r.put("duplicates", stats(row.samples(), q -> q.accounting().duplicates()));
            r.put("p50_before_ms", stats(row.samples(), QueueResult::p50BeforeMs));
            r.put("p99_before_ms", stats(row.samples(), QueueResult::p99BeforeMs));
            r.put("p50_after_ms", stats(row.samples(), QueueResult::p50AfterMs));
            r.put("p99_after_ms", stats(row.samples(), QueueResult::p99AfterMs));
            summary.add(r);
        }
        doc.put("summary", summary);
        List<Map<String, Object>> trialList = new ArrayList<>();
        for (Trial trial : trials) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("scenario", trial.scenario());
            t.put("hold", trial.hold());
            t.put("trial", trial.trial());
            t.put("victim", trial.victim());
            t.put("controller", trial.controller());
            t.put("killed_at", trial.killedAt());
            t.put("kill_at_s", trial.killAtSeconds());
            t.put("restart_issued_after_kill_s", trial.restartAtSeconds());
            t.put("restart_ready_after_kill_s", trial.restartReadySeconds());
            t.put("disk_longest_force_before_kill_ms", number(trial.diskLongestBeforeMs()));
            t.put("disk_longest_force_after_kill_ms", number(trial.diskLongestAfterMs()));
            t.put("cpu_longest_wait_before_kill_ms", number(trial.cpuLongestBeforeMs()));
            t.put("cpu_longest_wait_after_kill_ms", number(trial.cpuLongestAfterMs()));
            t.put("victim_sockets_closed_after_kill_s", number(trial.victimClosedSeconds()));
            List<Map<String, Object>> qs = new ArrayList<>();
            for (QueueResult q : trial.queues()) {
                FailoverStats.Accounting a = q.accounting();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("queue", q.queue());
                m.put("owner", q.owner());
                m.put("members", q.members());
                m.put("role_lost", q.role());
                m.put("client_node", q.clientNode());
                m.put("pause_s", number(q.pauseSeconds()));
                m.put("pause_censored", q.pauseCensored());
                m.put("pause_ended_after_kill_s", number(q.pauseEndedAfterKillSeconds()));
                m.put("pause_to_restart_s", number(q.pauseToRestartSeconds()));
                m.put("pause_to_restart_censored", q.pauseToRestartCensored());
                m.put("gap_from_restart_s", number(q.gapFromRestartSeconds()));
                m.put("first_confirm_after_kill_s", number(q.firstConfirmSeconds()));
                m.put("longest_gap_before_kill_s", number(q.gapBeforeSeconds()));
                m.put("longest_gap_before_kill_ended_s", number(q.gapBeforeEndedSeconds()));
                m.put("sent", a.sent());
                m.put("not_sent_no_channel", q.skipped());
                m.put("confirmed", a.confirmed());
                m.put("unknown", a.unknown());
                m.put("nacked", a.nacked());
                m.put("unknown_but_delivered", a.unknownDelivered());
                m.put("lost", a.lost());
                m.put("duplicates", a.duplicates());
                m.put("duplicates_redelivered", a.duplicatesRedelivered());
                m.put("duplicates_not_redelivered", a.duplicatesNotRedelivered());
                m.put("p50_before_ms", number(q.p50BeforeMs()));
                m.put("p99_before_ms", number(q.p99BeforeMs()));
                m.put("p50_after_ms", number(q.p50AfterMs()));
                m.put("p99_after_ms", number(q.p99AfterMs()));
                m.put("confirms_per_s_from_minus_before", q.confirmRate());
                m.put("disk_force_in_pause_ms", number(q.diskForceInPauseMs()));
                m.put("cpu_wait_in_pause_ms", number(q.cpuWaitInPauseMs()));
                List<Map<String, Object>> silences = new ArrayList<>();
                for (long[] span : q.silences()) {
                    silences.add(silence(span));
                }
                m.put("silences", silences);
                qs.add(m);
            }
            t.put("queues", qs);
            trialList.add(t);
        }
        doc.put("trials", trialList);
        doc.put("voided_trials", voidedTrials);
        return doc;
    }

    /**
     * One silence of {@code failover.json}: a figure not measured (no send in it, no probe) is null, which is why this
     * is a map that takes nulls and not {@code Map.of}.
     */
    static Map<String, Object> silence(long[] span) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("from_s", seconds(span[0]));
        m.put("ms", millis(span[1] - span[0]));
        m.put("longest_send_gap_ms", span[2] == FailoverStats.NONE ? null : millis(span[2]));
        m.put("latency_at_end_ms", span[3] == FailoverStats.NONE ? null : millis(span[3]));
        m.put("disk_force_ms", span[4] == FailoverStats.NONE ? null : millis(span[4]));
        m.put("cpu_wait_ms", span.length < 6 || span[5] == FailoverStats.NONE ? null : millis(span[5]));
        return m;
    }

    private static Object number(double value) {
        return Double.isNaN(value) ? null : value;
    }

    private static Map<String, Object> stats(List<QueueResult> samples, ToDoubleFunction<QueueResult> metric) {
        double[] values = samples.stream()
                .mapToDouble(metric)
                .filter(v -> !Double.isNaN(v))
                .toArray();
        Map<String, Object> m = new LinkedHashMap<>();
        if (values.length == 0) {
            return m;
        }
        m.put("median", FailoverStats.median(values));
        m.put("min", java.util.Arrays.stream(values).min().orElseThrow());
        m.put("max", java.util.Arrays.stream(values).max().orElseThrow());
        return m;
    }

    /** One panel per trial: confirms per second per queue, from {@code before} seconds before the kill to the end. */
    private String chart(FailoverTarget target, List<Trial> trials) {
        List<SvgChart.Panel> panels = new ArrayList<>();
        for (Trial trial : trials) {
            List<SvgChart.Series> series = new ArrayList<>();
            for (QueueResult q : trial.queues()) {
                series.add(new SvgChart.Series(
                        q.queue().substring(q.queue().lastIndexOf('-') + 1) + " (lost " + q.role() + ")",
                        q.confirmRate()));
            }
            List<SvgChart.Marker> markers = new ArrayList<>();
            markers.add(new SvgChart.Marker(
                    trial.victim() == null ? "mark (nothing killed)" : "kill " + trial.victim(), 0));
            if (!Double.isNaN(trial.restartReadySeconds())) {
                markers.add(new SvgChart.Marker("restarted", trial.restartReadySeconds()));
            }
            panels.add(new SvgChart.Panel(
                    String.format(
                            Locale.ROOT,
                            "%s %s, hold %s, trial %d (controller %s)",
                            trial.victim() == null ? "control:" : "kill",
                            trial.scenario(),
                            trial.hold(),
                            trial.trial(),
                            trial.controller() == null ? "none" : trial.controller()),
                    -before,
                    BUCKET / 1e9,
                    series,
                    markers));
        }
        return SvgChart.render(
                "bench failover: " + target.description() + ", " + queueArgs, "confirms per second", panels);
    }
}
