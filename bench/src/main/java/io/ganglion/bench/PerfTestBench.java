package io.ganglion.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.ganglion.cli.Main;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ganglion bench perftest}: RabbitMQ's PerfTest against a three-broker Ganglion cluster and against three
 * RabbitMQ nodes (Debian's {@code rabbitmq-server}), both started by the bench on this machine and up together, each
 * case run against one and then the other, in {@code --rounds} rounds, with quorum queues: (a) 1 queue, 100 B; (b) 1
 * queue, 1000 B; (c) 4 queues, 100 B; {@code -c 1000} unconfirmed at most, persistent. Prints confirmed msg/s and
 * confirm latency percentiles per target, case and round, and Ganglion's figures as ratios of RabbitMQ's (the median
 * over the rounds of each round's ratio), and writes them to {@code perftest.json}.
 *
 * <p>PerfTest runs as a child JVM from {@code --perftest-lib} (fetched by {@code bench/perftest.sh}, or {@code ./mvnw
 * -f bench/perftest/pom.xml dependency:copy-dependencies -DoutputDirectory=target/lib}). Its summary lines ({@code
 * sending rate avg}, {@code confirm latency min/median/75th/95th/99th}) are what is reported; with {@code -c 1000} the
 * sending rate is the confirmed rate, since a publisher stops at 1000 unconfirmed.
 */
@Command(
        name = "perftest",
        mixinStandardHelpOptions = true,
        description = "PerfTest on 3 Ganglion brokers and on 3 RabbitMQ nodes, quorum queues, side by side.")
final class PerfTestBench implements Callable<Integer> {
    private static final Pattern SENT = Pattern.compile("sending rate avg: ([0-9,]+) msg/s");
    private static final Pattern RECEIVED = Pattern.compile("receiving rate avg: ([0-9,]+) msg/s");
    private static final Pattern CONFIRM = Pattern.compile(
            "confirm latency min/median/75th/95th/99th ([0-9]+)/([0-9]+)/([0-9]+)/([0-9]+)/([0-9]+) (µs|ms)");

    @Option(
            names = "--targets",
            split = ",",
            defaultValue = "ganglion,rabbitmq",
            description = "ganglion, rabbitmq or both (default ${DEFAULT-VALUE})")
    List<String> targets;

    @Option(
            names = "--cases",
            split = ",",
            defaultValue = "a,b,c",
            description = "a: 1 queue 100 B; b: 1 queue 1000 B; c: 4 queues 100 B (default ${DEFAULT-VALUE})")
    List<String> cases;

    @Option(names = "--seconds", defaultValue = "30", description = "seconds per run (default ${DEFAULT-VALUE})")
    int seconds;

    @Option(
            names = "--rounds",
            defaultValue = "1",
            description = "rounds of the cases, each case run against every target in turn, the targets' order"
                    + " reversed every other round; the ratios are taken per round and their median printed: runs"
                    + " of the two targets minutes apart, on a host whose speed moves by half within ten minutes"
                    + " (default ${DEFAULT-VALUE})")
    int rounds;

    @Option(
            names = "--warmup",
            defaultValue = "20",
            description = "seconds of PerfTest (case a's workload on a queue of its own, not reported) run against "
                    + "each target before its measured runs, so the measured runs see warm code: the JVMs' JIT "
                    + "compilers otherwise take a third of the machine for the first half minute (0: none; "
                    + "default ${DEFAULT-VALUE})")
    int warmup;

    @Option(
            names = "--perftest-lib",
            defaultValue = "bench/perftest/target/lib",
            description = "folder with PerfTest 2.22.1 and its dependencies (default ${DEFAULT-VALUE})")
    Path perftestLib;

    @Option(
            names = "--heap",
            defaultValue = "1g",
            description = "heap of each Ganglion broker (default ${DEFAULT-VALUE})")
    String heap;

    @Mixin
    BrokerOptions broker = new BrokerOptions();

    @Option(
            names = "--queue-type",
            defaultValue = "quorum",
            description =
                    "quorum (the issue's cases) or stream: x-queue-type of the queues, a stream's consumers with a"
                            + " prefetch of 1000 (default ${DEFAULT-VALUE})")
    String queueType;

    @Option(
            names = "--queue-args",
            defaultValue = "",
            description = "more queue arguments beside x-queue-type, as PerfTest takes them: k=v,k=v (for example"
                    + " x-message-ttl=60000,x-max-length=1000000)")
    String queueArgs;

    @Option(
            names = "--jfr",
            description = "record each Ganglion broker with JDK Flight Recorder into DIR/ganglion-N.jfr (a profile)")
    boolean jfr;

    @Option(
            names = "--out",
            description = "folder for perftest.json and the PerfTest logs (default data/bench/perftest-<time>)")
    Path out;

    record Result(
            String target,
            String testCase,
            int round,
            long sentPerSecond,
            long receivedPerSecond,
            long[] confirmMicros) {}

    /** Ganglion against RabbitMQ in one case, as the median over the rounds of each round's ratio. */
    record Ratio(String testCase, int rounds, double throughput, double p99) {}

    @Override
    public Integer call() throws Exception {
        validate();
        Path folder = out != null
                ? out
                : Path.of(
                        "data",
                        "bench",
                        "perftest-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(folder);
        List<Result> results = new ArrayList<>();
        // every target up at once, so that each case runs against them in turn, minutes apart, in every round
        Map<String, Path> roots = new LinkedHashMap<>();
        Map<String, FailoverTarget> clusters = new LinkedHashMap<>();
        try {
            for (String target : targets) {
                Path root = Files.createTempDirectory("ganglion-perftest-" + target);
                roots.put(target, root);
                FailoverTarget cluster = target.equals("ganglion")
                        ? GanglionTarget.start(root, 3, ganglionJvm(folder), broker.settings)
                        : RabbitMqTarget.start(root, 3);
                clusters.put(target, cluster);
                System.out.println("started " + cluster.description());
            }
            if (warmup > 0) {
                for (String target : targets) {
                    System.out.printf(
                            "%s warm-up: PerfTest %s for %d s (not reported) ...%n", target, args("w", 1), warmup);
                    run(target, "w", 1, uri(clusters.get(target)), folder.resolve(target + "-warmup.log"), warmup);
                }
            }
            for (int round = 1; round <= rounds; round++) {
                List<String> order = new ArrayList<>(targets);
                if (round % 2 == 0) {
                    java.util.Collections.reverse(order);
                }
                for (String testCase : cases) {
                    for (String target : order) {
                        String name = target + "-" + testCase + (rounds > 1 ? "-r" + round : "");
                        System.out.printf(
                                "%s case %s%s: PerfTest %s for %d s ...%n",
                                target, testCase, rounds > 1 ? " round " + round : "", args(testCase, round), seconds);
                        Result r = run(
                                target,
                                testCase,
                                round,
                                uri(clusters.get(target)),
                                folder.resolve(name + ".log"),
                                seconds);
                        results.add(r);
                        System.out.printf(
                                "  %,d msg/s confirmed, confirm p50 %s p99 %s%n",
                                r.sentPerSecond(), millis(r.confirmMicros()[1]), millis(r.confirmMicros()[4]));
                    }
                }
            }
        } finally {
            for (Map.Entry<String, FailoverTarget> cluster : clusters.entrySet()) {
                try {
                    cluster.getValue().close();
                } catch (Exception e) {
                    System.err.println("bench: stopping " + cluster.getKey() + ": " + e);
                }
            }
            for (Map.Entry<String, Path> root : roots.entrySet()) {
                keepBrokerLogs(root.getValue(), folder, root.getKey());
                BacklogBench.deleteTree(root.getValue());
            }
        }
        print(results);
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        json.writeValue(folder.resolve("perftest.json").toFile(), results);
        System.out.println("wrote " + folder.resolve("perftest.json") + " and the PerfTest logs");
        return 0;
    }

    private void validate() {
        if (!queueType.equals("quorum") && !queueType.equals("stream")) {
            throw new Main.UsageError("--queue-type is quorum or stream, not '" + queueType + "'");
        }
        if (targets.size() != new java.util.HashSet<>(targets).size()) {
            // each target is one cluster: a second of the same name was started and never stopped
            throw new Main.UsageError("a target named twice in --targets " + String.join(",", targets));
        }
        if (!Files.isDirectory(perftestLib)) {
            throw new Main.UsageError("no PerfTest in " + perftestLib
                    + ": run bench/perftest.sh, or ./mvnw -f bench/perftest/pom.xml dependency:copy-dependencies"
                    + " -DoutputDirectory=target/lib");
        }
        for (String target : targets) {
            if (!target.equals("ganglion") && !target.equals("rabbitmq")) {
                throw new Main.UsageError("unknown target '" + target + "': expected ganglion or rabbitmq");
            }
        }
        for (String testCase : cases) {
            if (!List.of("a", "b", "c").contains(testCase)) {
                throw new Main.UsageError("unknown case '" + testCase + "': expected a, b or c");
            }
        }
        if (rounds < 1) {
            throw new Main.UsageError("--rounds must be at least 1, not " + rounds);
        }
        if (targets.contains("rabbitmq") && !RabbitMqTarget.installed()) {
            throw new Main.UsageError("rabbitmq-server is not installed (apt-get install rabbitmq-server)");
        }
    }

    /** Copies each broker's log ({@code broker.out}) out of the data folder about to be deleted, for diagnosis. */
    static void keepBrokerLogs(Path root, Path folder, String target) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (java.util.stream.Stream<Path> files = Files.walk(root)) {
            for (Path log : files.filter(p -> p.getFileName().toString().equals("broker.out"))
                    .toList()) {
                Path copy = folder.resolve(target + "-" + log.getParent().getFileName() + ".out");
                Files.copy(log, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    private String args(String testCase, int round) {
        return String.join(" ", caseArgs(testCase, round));
    }

    /** Each Ganglion broker's JVM options: the heap, {@code --broker-jvm}, and with {@code --jfr} a recording. */
    private List<String> ganglionJvm(Path folder) {
        List<String> jvm = new ArrayList<>(List.of("-Xmx" + heap, "--enable-native-access=ALL-UNNAMED"));
        jvm.addAll(broker.jvm);
        if (jfr) {
            jvm.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                    + folder.toAbsolutePath().resolve("ganglion-%p.jfr"));
        }
        return jvm;
    }

    private static String uri(FailoverTarget cluster) {
        return cluster.amqpUri(cluster.nodes().get(0));
    }

    /** PerfTest's arguments for a case; each round after the first has queues of its own (none left from before). */
    static List<String> caseArgs(String testCase, int round) {
        String suffix = round > 1 ? "-r" + round : "";
        return switch (testCase) {
            case "a" -> List.of("-x", "1", "-y", "1", "-s", "100", "-u", "perf-a" + suffix);
            case "w" -> List.of("-x", "1", "-y", "1", "-s", "100", "-u", "perf-warmup");
            case "b" -> List.of("-x", "1", "-y", "1", "-s", "1000", "-u", "perf-b" + suffix);
            case "c" ->
                List.of(
                        "-x",
                        "4",
                        "-y",
                        "4",
                        "-s",
                        "100",
                        "--queue-pattern",
                        "perf-c" + suffix + "-%d",
                        "--queue-pattern-from",
                        "1",
                        "--queue-pattern-to",
                        "4");
            default -> throw new IllegalArgumentException(testCase);
        };
    }

    /**
     * Ganglion against RabbitMQ per case: each round's throughput and p99 ratio, then the median over the rounds that
     * ran both (the upper middle one for an even count, as the figures are few).
     */
    static List<Ratio> ratios(List<Result> results) {
        Map<String, List<double[]>> perCase = new LinkedHashMap<>();
        for (Result g : results) {
            if (!g.target().equals("ganglion")) {
                continue;
            }
            for (Result r : results) {
                if (r.target().equals("rabbitmq") && r.testCase().equals(g.testCase()) && r.round() == g.round()) {
                    perCase.computeIfAbsent(g.testCase(), c -> new ArrayList<>())
                            .add(new double[] {
                                (double) g.sentPerSecond() / Math.max(1, r.sentPerSecond()),
                                (double) g.confirmMicros()[4] / Math.max(1, r.confirmMicros()[4])
                            });
                }
            }
        }
        List<Ratio> ratios = new ArrayList<>();
        perCase.forEach((testCase, pairs) -> ratios.add(new Ratio(
                testCase,
                pairs.size(),
                median(pairs.stream().mapToDouble(p -> p[0]).toArray()),
                median(pairs.stream().mapToDouble(p -> p[1]).toArray()))));
        return ratios;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private Result run(String target, String testCase, int round, String uri, Path log, int seconds)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g",
                "-cp",
                perftestLib.toAbsolutePath() + "/*",
                "com.rabbitmq.perf.PerfTest",
                "-h",
                uri,
                "--queue-args",
                "x-queue-type=" + queueType + (queueArgs.isEmpty() ? "" : "," + queueArgs),
                "-f",
                "persistent",
                "--auto-delete",
                "false",
                "-c",
                "1000",
                "-z",
                String.valueOf(seconds)));
        command.addAll(caseArgs(testCase, round));
        if (queueType.equals("stream")) {
            command.addAll(List.of("-q", "1000")); // a stream consumer needs a prefetch
        }
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!process.waitFor(seconds + 120L, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("PerfTest did not finish, see " + log);
        }
        return parse(target, testCase, round, Files.readString(log, StandardCharsets.UTF_8))
                .orElseThrow(() -> new IOException("no PerfTest summary in " + log));
    }

    /** The figures of a PerfTest summary, or empty if the text has none. */
    static Optional<Result> parse(String target, String testCase, int round, String text) {
        Matcher sent = SENT.matcher(text);
        Matcher received = RECEIVED.matcher(text);
        Matcher confirm = CONFIRM.matcher(text);
        String lastConfirm = null;
        long[] micros = new long[5];
        while (confirm.find()) {
            lastConfirm = confirm.group();
            long scale = confirm.group(6).equals("ms") ? 1000 : 1;
            for (int i = 0; i < 5; i++) {
                micros[i] = Long.parseLong(confirm.group(i + 1)) * scale;
            }
        }
        if (!sent.find() || lastConfirm == null) {
            return Optional.empty();
        }
        long receivedRate = received.find() ? number(received.group(1)) : -1;
        return Optional.of(new Result(target, testCase, round, number(sent.group(1)), receivedRate, micros));
    }

    private static long number(String text) {
        return Long.parseLong(text.replace(",", ""));
    }

    private static String millis(long micros) {
        return String.format("%.1f ms", micros / 1000.0);
    }

    private void print(List<Result> results) {
        System.out.println();
        System.out.printf(
                "PerfTest 2.22.1, %s, -f persistent -c 1000%s, %d s per run; Ganglion: 3 brokers, RabbitMQ %s: 3"
                        + " nodes, on this machine%n",
                queueType.equals("stream") ? "streams" : "quorum queues",
                queueType.equals("stream") ? " -q 1000" : "",
                seconds,
                targets.contains("rabbitmq") ? RabbitMqTarget.version() : "-");
        System.out.printf(
                "%-9s %-5s %5s %12s %12s %10s %10s %10s%n",
                "target", "case", "round", "confirmed/s", "received/s", "p50 ms", "p95 ms", "p99 ms");
        for (Result r : results) {
            System.out.printf(
                    "%-9s %-5s %5d %,12d %,12d %10.1f %10.1f %10.1f%n",
                    r.target(),
                    r.testCase(),
                    r.round(),
                    r.sentPerSecond(),
                    r.receivedPerSecond(),
                    r.confirmMicros()[1] / 1000.0,
                    r.confirmMicros()[3] / 1000.0,
                    r.confirmMicros()[4] / 1000.0);
        }
        List<Ratio> ratios = ratios(results);
        if (!ratios.isEmpty()) {
            System.out.println();
            System.out.printf(
                    "%-5s %6s %22s %24s%n", "case", "rounds", "throughput G/R (>= 2)", "p99 confirm G/R (<= 0.5)");
            for (Ratio ratio : ratios) {
                System.out.printf(
                        "%-5s %6d %22.2f %24.2f%n", ratio.testCase(), ratio.rounds(), ratio.throughput(), ratio.p99());
            }
            if (rounds > 1) {
                System.out.println("(medians over the rounds of each round's ratio)");
            }
        }
    }
}
