package io.ganglion.bench;

import static io.ganglion.bench.FailoverBench.BUCKET;
import static io.ganglion.bench.FailoverBench.SECOND;
import static io.ganglion.bench.FailoverBench.millis;
import static io.ganglion.bench.FailoverBench.seconds;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.ganglion.bench.FailoverBench.QueueResult;
import io.ganglion.bench.FailoverBench.Trial;
import io.ganglion.cli.Waits;
import java.io.IOException;
import java.io.PrintStream;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongBinaryOperator;

/**
 * One trial of {@code bench failover}: it sets the hold, declares the trial's queues and picks the broker to kill, runs
 * a publisher and a consumer per queue with the kill (and the restart) in the load, then measures each queue. One
 * instance per trial attempt; {@link #run()} once.
 */
final class FailoverTrial {
    /** How far before a silence its send gap is looked for: about a confirm latency. */
    private static final long SILENCE_LOOK_BACK = 20_000_000L;

    private final FailoverBench options;
    private final PrintStream console;
    private final FailoverTarget target;
    private final String scenario;
    private final String hold;
    private final int trial;
    private final String stamp;
    private final double warmup;
    private final FailoverBench.Probes probes;
    private final boolean kills;
    private final String label;

    // chosen by setUp()
    private final List<String> names = new ArrayList<>();
    private Map<String, FailoverTarget.Placement> placements;
    private Optional<String> controller;
    private String victim;
    private List<String> survivors;

    // the load; times are nanoseconds from origin
    private long origin;
    private long publishFrom;
    private long killAt;
    private long publishUntil;
    private ScheduledExecutorService progress;
    private final List<FailoverWorkload> loads = new ArrayList<>();
    private final List<String> clientNodes = new ArrayList<>();
    private ExitWatch exitWatch;
    private long killNanos;
    private Instant killedAt;
    private long restartAtNanos = FailoverStats.NONE;
    private long restartReadyNanos = FailoverStats.NONE;

    FailoverTrial(
            FailoverBench options,
            PrintStream console,
            FailoverTarget target,
            String scenario,
            String hold,
            int trial,
            String stamp,
            double warmup,
            FailoverBench.Probes probes) {
        this.options = options;
        this.console = console;
        this.target = target;
        this.scenario = scenario;
        this.hold = hold;
        this.trial = trial;
        this.stamp = stamp;
        this.warmup = warmup;
        this.probes = probes;
        this.kills = !scenario.equals(FailoverBench.NONE);
        this.label = String.format(Locale.ROOT, "%s hold=%s trial %d/%d", scenario, hold, trial, options.trials);
    }

    /** Runs the trial and measures it; a trial whose roles moved before the kill throws {@link VoidTrial}. */
    Trial run() throws IOException, InterruptedException, VoidTrial {
        setUp();
        origin = System.nanoTime();
        publishFrom = SECOND / 2;
        killAt = publishFrom + (long) ((warmup + options.before) * SECOND);
        publishUntil = killAt + (long) (options.after * SECOND);
        progress = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "bench-progress");
            thread.setDaemon(true);
            return thread;
        });
        try {
            startLoad();
            killAndRestart();
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
        return measured();
    }

    /** Sets the hold, declares the trial's queues, waits for their owners and picks the broker to kill. */
    private void setUp() throws IOException, InterruptedException {
        target.awaitHealthy();
        if (!hold.equals("n/a")) {
            long ms = hold.equals("default") ? target.defaultHoldMs().orElseThrow() : Long.parseLong(hold);
            target.setHoldMs(ms);
        }
        List<String> nodes = target.nodes();
        for (int q = 0; q < options.queueCount(target); q++) {
            String name = String.format(
                    Locale.ROOT, "failover-%s-%s-%s-%d-q%d", stamp, scenario, hold.replace("/", ""), trial, q + 1);
            declare(target.amqpUri(nodes.get(q % nodes.size())), name);
            names.add(name);
        }
        placements = awaitPlacements(target, names);
        controller = target.controller();
        // the control (none) places its clients as an owner trial does, and kills nothing
        victim = victim(kills ? scenario : "owner", trial, nodes, names, placements, controller);
        survivors = nodes.stream().filter(n -> !n.equals(victim)).toList();
    }

    /** A publisher and a consumer per queue, each on a broker that survives (the owner where it does). */
    private void startLoad() throws IOException {
        int capacity = (int) Math.min(
                Integer.MAX_VALUE - 8,
                (long) ((warmup + options.before + options.after + 2) * options.rate * 1.1) + 1000);
        long runId = new SecureRandom().nextLong();
        for (int q = 0; q < names.size(); q++) {
            FailoverTarget.Placement placement = placements.get(names.get(q));
            String client =
                    survivors.contains(placement.owner()) ? placement.owner() : survivors.get(q % survivors.size());
            clientNodes.add(client);
            String uri = target.amqpUri(client);
            loads.add(new FailoverWorkload(
                    names.get(q),
                    uri,
                    uri,
                    options.rate,
                    options.size,
                    (long) (options.timeout * SECOND),
                    origin,
                    capacity,
                    runId));
        }
        for (FailoverWorkload load : loads) {
            load.startConsumer();
        }
        for (FailoverWorkload load : loads) {
            load.startPublisher(publishFrom, publishUntil);
        }
        long[] lastConfirmed = new long[loads.size()];
        progress.scheduleAtFixedRate(() -> progressLine(lastConfirmed), 1, 1, TimeUnit.SECONDS);
    }

    /**
     * Kills the victim at {@link #killAt} (unless the roles moved: {@link VoidTrial}), restarts it {@code
     * --restart-after} later or once the load ends, and stops the publishers at {@link #publishUntil}.
     */
    private void killAndRestart() throws IOException, InterruptedException, VoidTrial {
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
        killedAt = Instant.now();
        if (kills) {
            target.kill(victim);
        }
        CompletableFuture<long[]> restart = null;
        if (kills && options.restartAfter >= 0) {
            long restartAt = killNanos + (long) (options.restartAfter * SECOND);
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
    }

    /** The trial's figures, from the times its workloads recorded. */
    private Trial measured() {
        // the figures before the kill start after the trial's warm-up
        long measuredFrom = publishFrom + (long) (warmup * SECOND);
        // each probe's longest span in a window of the trial's times (offsets from origin); null without the probe
        LongBinaryOperator diskForce = probes.disk() == null
                ? null
                : (from, to) -> probes.disk().longestOverlapping(origin + from, origin + to);
        LongBinaryOperator cpuWait =
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
        return new Trial(
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
    }

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
        options.queueArgs.forEach((key, value) -> arguments.put(key, argument(value)));
        try (Connection connection = FailoverWorkload.connect(uri, "bench-declare")) {
            Channel channel = connection.createChannel();
            channel.queueDeclare(queue, true, false, false, arguments);
        } catch (IOException e) {
            String reason = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
            throw new IOException(
                    "declaring " + queue + " with " + options.queueArgs + " through " + uri + " failed: " + reason
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
        long chartFrom = kill - (long) (options.before * SECOND);
        long pauseFrom = pause.endNanos() - pause.nanos();
        return new QueueResult(
                load.queue,
                placement.owner(),
                placement.members(),
                victim == null ? FailoverBench.NONE : placement.roleOf(victim),
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
                        FailoverStats.silences(confirms, measuredFrom, publishUntil, (long) (options.silenceMs * 1e6)),
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

    private static void sleepUntil(long origin, long at) throws InterruptedException {
        long wait = at - (System.nanoTime() - origin);
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    private boolean progressOnOneLine() {
        return System.console() != null;
    }

    /** A line of progress every second: the time to the kill and each queue's confirms in the last second. */
    private void progressLine(long[] lastConfirmed) {
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
}
