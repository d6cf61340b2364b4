package io.ganglion.metadata.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Leader failover of the Ratis metadata log, measured on real processes: three {@link BenchNode} voters in their own
 * JVMs on loopback ports; each round kills the leader with SIGKILL ({@link Process#destroyForcibly()}), times how
 * long until a command proposed through the survivors commits (through the new leader, the only one left that can
 * commit), restarts the killed voter, waits until it caught up, and watches the healthy group for a while: any leader
 * change there is counted as spurious.
 *
 * <p>Not a test: run it as docs/metadata.md says. Options: {@code --rounds N} (20), {@code --dir PATH} (a new
 * temporary directory), {@code --settle-ms N} (5000: the healthy window after each round, long enough for the restarted JVM to finish compiling its hot code, which would otherwise slow the next election), {@code --ratis-log LEVEL}
 * (warn; info shows every election in the voters' logs).
 */
public final class LeaderFailoverBench {
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private record Event(String node, String line, long nanos) {}

    private final Path dir;
    private final List<String> voterArgs = new ArrayList<>();
    private final Map<String, Process> processes = new LinkedHashMap<>();
    private final Map<String, PrintWriter> inputs = new LinkedHashMap<>();
    private final Map<String, Boolean> leaders = new LinkedHashMap<>();
    private final Map<String, Long> applied = new LinkedHashMap<>();
    private final Map<String, Long> committedAt = new HashMap<>();
    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final PrintWriter transcript;
    private final long startNanos = System.nanoTime();
    private int electionsWon;
    private long lastElectedNanos;
    private static String ratisLog = "warn";

    private LeaderFailoverBench(Path dir) throws IOException {
        this.dir = dir;
        this.transcript = new PrintWriter(Files.newBufferedWriter(dir.resolve("events.log")), true);
    }

    public static void main(String[] args) throws Exception {
        int rounds = 20;
        Path dir = null;
        long settleMs = 5000;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--dir" -> dir = Path.of(args[i + 1]);
                case "--settle-ms" -> settleMs = Long.parseLong(args[i + 1]);
                case "--ratis-log" -> ratisLog = args[i + 1];
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        dir = dir == null ? Files.createTempDirectory("ganglion-failover") : Files.createDirectories(dir);
        LeaderFailoverBench bench = new LeaderFailoverBench(dir);
        try {
            bench.run(rounds, settleMs);
        } finally {
            bench.stopAll();
        }
    }

    private void run(int rounds, long settleMs) throws Exception {
        List<String> ids = List.of("n1", "n2", "n3");
        int[] ports = freePorts(ids.size());
        for (int i = 0; i < ids.size(); i++) {
            voterArgs.add(ids.get(i) + "=127.0.0.1:" + ports[i]);
        }
        System.out.println("storage and logs under " + dir + "; " + loadAverage());
        for (String id : ids) {
            start(id);
        }
        String warmLeader = leader();
        for (int i = 0; i < 20; i++) {
            propose(ids.get(i % ids.size()), "warm-" + i);
        }
        for (int i = 0; i < 20; i++) {
            awaitCommitted("warm-" + i);
        }
        awaitCaughtUp();
        int spurious = settle(settleMs);
        System.out.printf("warm-up done, leader %s, spurious leader changes %d%n", warmLeader, spurious);

        long[] failover = new long[rounds];
        long[] elected = new long[rounds];
        for (int round = 0; round < rounds; round++) {
            String killed = leader();
            List<String> survivors =
                    ids.stream().filter(id -> !id.equals(killed)).toList();
            long killedAt = System.nanoTime();
            processes.get(killed).destroyForcibly();
            transcript.printf("%10.3f %s killed at %s%n", (killedAt - startNanos) / 1e9, killed, LocalTime.now());
            leaders.put(killed, false);
            String first = "r" + round + "-" + survivors.get(0);
            String second = "r" + round + "-" + survivors.get(1);
            propose(survivors.get(0), first);
            propose(survivors.get(1), second);
            long firstCommit = Math.min(awaitCommitted(first), awaitCommitted(second));
            failover[round] = firstCommit - killedAt;
            String newLeader = leader();
            elected[round] = lastElectedNanos - killedAt;

            processes.get(killed).waitFor();
            start(killed);
            awaitCaughtUp();
            spurious += settle(settleMs);
            System.out.printf(
                    "round %2d: killed leader %s, %s leads (ready %6.1f ms after the kill), first commit %6.1f ms%n",
                    round + 1, killed, newLeader, elected[round] / 1e6, failover[round] / 1e6);
        }

        long[] sorted = failover.clone();
        Arrays.sort(sorted);
        long[] sortedElected = elected.clone();
        Arrays.sort(sortedElected);
        System.out.printf(
                "new leader ready: p50 %.1f ms, p99 %.1f ms%n",
                percentile(sortedElected, 0.50) / 1e6, percentile(sortedElected, 0.99) / 1e6);
        System.out.printf(
                "failover over %d rounds: p50 %.1f ms, p99 %.1f ms, min %.1f ms, max %.1f ms, mean %.1f ms;"
                        + " spurious leader changes in healthy windows: %d%n",
                rounds,
                percentile(sorted, 0.50) / 1e6,
                percentile(sorted, 0.99) / 1e6,
                sorted[0] / 1e6,
                sorted[sorted.length - 1] / 1e6,
                Arrays.stream(sorted).average().orElse(0) / 1e6,
                spurious);
        System.out.println(loadAverage());
    }

    /** The machine's load, for reading the figures: other processes on the same cores delay elections. */
    private static String loadAverage() {
        try {
            return "load average " + Files.readString(Path.of("/proc/loadavg")).strip() + " on "
                    + Runtime.getRuntime().availableProcessors() + " cores";
        } catch (IOException e) {
            return "load average unknown";
        }
    }

    /** Nearest rank: the smallest sample with at least {@code fraction} of the samples at or below it. */
    private static long percentile(long[] sorted, double fraction) {
        int rank = (int) Math.ceil(fraction * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    private void start(String id) throws IOException, InterruptedException {
        Path storage = dir.resolve(id);
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED",
                "-Dorg.slf4j.simpleLogger.log.org.apache.ratis.server=" + ratisLog,
                "-cp",
                System.getProperty("java.class.path"),
                BenchNode.class.getName(),
                id,
                storage.toString()));
        command.addAll(voterArgs);
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(
                        dir.resolve(id + ".log").toFile()))
                .start();
        processes.put(id, process);
        inputs.put(
                id, new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true));
        leaders.put(id, false);
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader lines = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                            events.add(new Event(id, line, System.nanoTime()));
                        }
                    } catch (IOException e) {
                        // the process was killed: its output ends
                    }
                },
                "bench-" + id + "-" + process.pid());
        reader.setDaemon(true);
        reader.start();
        awaitLine(event -> event.node().equals(id) && event.line().equals("READY"), id + " to start");
    }

    private void propose(String node, String name) {
        transcript.printf("%10.3f %s <- propose %s%n", (System.nanoTime() - startNanos) / 1e9, node, name);
        inputs.get(node).println("propose " + name);
    }

    /** The one live node that leads, waiting for it if the group is between leaders. */
    private String leader() throws InterruptedException {
        while (true) {
            List<String> current = leaders.entrySet().stream()
                    .filter(Map.Entry::getValue)
                    .map(Map.Entry::getKey)
                    .toList();
            if (current.size() == 1) {
                return current.get(0);
            }
            awaitLine(event -> event.line().startsWith("LEADER "), "a single leader, now " + current);
        }
    }

    private void awaitCaughtUp() throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (System.nanoTime() < deadline) {
            applied.clear();
            inputs.values().forEach(input -> input.println("status"));
            while (applied.size() < inputs.size()) {
                awaitLine(event -> event.line().startsWith("STATUS "), "status replies");
            }
            if (applied.values().stream().distinct().count() == 1) {
                return;
            }
            Event poll = events.poll(20, TimeUnit.MILLISECONDS);
            if (poll != null) {
                record(poll);
            }
        }
        throw new IllegalStateException("voters did not catch up: " + applied);
    }

    /** Watches the healthy group for {@code millis}; returns how many times a leader was elected meanwhile. */
    private int settle(long millis) throws InterruptedException {
        int before = electionsWon;
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (long left = millis; left > 0; left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())) {
            Event event = events.poll(left, TimeUnit.MILLISECONDS);
            if (event != null) {
                record(event);
            }
        }
        return electionsWon - before;
    }

    /** When {@code name} committed, as this process saw the line, waiting for it if need be. */
    private long awaitCommitted(String name) throws InterruptedException {
        while (!committedAt.containsKey(name)) {
            awaitLine(event -> event.line().equals("COMMITTED " + name), "command " + name + " to commit");
        }
        return committedAt.get(name);
    }

    private Event awaitLine(Predicate<Event> wanted, String what) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (true) {
            Event event = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (event == null) {
                throw new IllegalStateException("timed out waiting for " + what + "; logs in " + dir);
            }
            record(event);
            if (wanted.test(event)) {
                return event;
            }
        }
    }

    private void record(Event event) {
        String line = event.line();
        transcript.printf("%10.3f %s %s%n", (event.nanos() - startNanos) / 1e9, event.node(), line);
        if (line.startsWith("LEADER ")) {
            boolean leader = Boolean.parseBoolean(line.substring("LEADER ".length()));
            leaders.put(event.node(), leader);
            if (leader) {
                electionsWon++;
                lastElectedNanos = event.nanos();
            }
        } else if (line.startsWith("STATUS ")) {
            applied.put(event.node(), Long.parseLong(line.substring("STATUS ".length())));
        } else if (line.startsWith("COMMITTED ")) {
            committedAt.put(line.substring("COMMITTED ".length()), event.nanos());
        } else if (line.startsWith("FAILED ")) {
            System.out.println(event.node() + ": " + line);
        }
    }

    private void stopAll() {
        transcript.close();
        inputs.values().forEach(PrintWriter::close);
        for (Process process : processes.values()) {
            process.destroyForcibly();
        }
        for (Process process : processes.values()) {
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static int[] freePorts(int count) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                sockets.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
            }
            return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            for (ServerSocket socket : sockets) {
                try {
                    socket.close();
                } catch (IOException e) {
                    // a socket we only opened to learn a free port
                }
            }
        }
    }
}
