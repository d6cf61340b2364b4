package io.ganglion.bench;

import static io.ganglion.bench.FailoverBench.BUCKET;
import static io.ganglion.bench.FailoverBench.fmt;
import static io.ganglion.bench.FailoverBench.fmt2;
import static io.ganglion.bench.FailoverBench.millis;
import static io.ganglion.bench.FailoverBench.seconds;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.ganglion.bench.FailoverBench.QueueResult;
import io.ganglion.bench.FailoverBench.Trial;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/** What {@code bench failover} prints and writes: a trial's lines, the table over trials, the JSON and the chart. */
final class FailoverReport {
    private final FailoverBench options;
    private final PrintStream console;

    FailoverReport(FailoverBench options, PrintStream console) {
        this.options = options;
        this.console = console;
    }

    /** A trial's lines: what was killed when, then one line per queue and one per probe. */
    void printTrial(Trial trial) {
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

    /** The table over all trials, then {@code failover.json} and {@code failover.svg} in {@code outDir}. */
    void printAndWrite(FailoverTarget target, List<Trial> trials, Path outDir) throws IOException {
        List<Row> rows = rows(trials);
        console.println();
        console.println("bench failover: " + target.description() + ", " + options.queueArgs + ", " + options.rate
                + " msg/s per queue; medians [ranges] over trials; pause+ = no confirm after the kill in the window");
        if (!options.voidedTrials.isEmpty()) {
            console.println(options.voidedTrials.size() + " trial(s) run again, the roles moved before their kill: "
                    + String.join("; ", options.voidedTrials));
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
        doc.put("config", config());
        List<Map<String, Object>> summary = new ArrayList<>();
        for (Row row : rows) {
            summary.add(summaryRow(row));
        }
        doc.put("summary", summary);
        List<Map<String, Object>> trialList = new ArrayList<>();
        for (Trial trial : trials) {
            trialList.add(trialDocument(trial));
        }
        doc.put("trials", trialList);
        doc.put("voided_trials", options.voidedTrials);
        return doc;
    }

    /** The run's settings in {@code failover.json}. */
    private Map<String, Object> config() {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("queue_args", options.queueArgs);
        config.put("rate_per_queue", options.rate);
        config.put("body_bytes", options.size);
        config.put("warmup_seconds", options.warmup);
        config.put("first_trial_warmup_seconds", Math.max(options.warmup, options.firstWarmup));
        config.put("seconds_before", options.before);
        config.put("seconds_after", options.after);
        config.put("restart_after_seconds", options.restartAfter);
        config.put("unknown_after_seconds", options.timeout);
        config.put("trials", options.trials);
        config.put("disk_probe_ms", options.diskProbeMs);
        config.put("cpu_probe_ms", options.cpuProbeMs);
        config.put("chart_bucket_seconds", BUCKET / 1e9);
        return config;
    }

    /** One row of the summary table in {@code failover.json}. */
    private static Map<String, Object> summaryRow(Row row) {
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
        return r;
    }

    /** One trial in {@code failover.json}, with its queues. */
    private static Map<String, Object> trialDocument(Trial trial) {
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
            qs.add(queueDocument(q));
        }
        t.put("queues", qs);
        return t;
    }

    /** One queue of a trial in {@code failover.json}. */
    private static Map<String, Object> queueDocument(QueueResult q) {
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
        return m;
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
                    -options.before,
                    BUCKET / 1e9,
                    series,
                    markers));
        }
        return SvgChart.render(
                "bench failover: " + target.description() + ", " + options.queueArgs, "confirms per second", panels);
    }
}
