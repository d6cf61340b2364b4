package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ganglion.testing.Poll;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * What the cluster ITs share: broker processes started as one cluster on loopback ({@link BrokerChild}), their HTTP API
 * read and polled, their queues looked up, {@code ganglion ctl} run against them, and their event lines printed when a
 * case fails. It lives beside the ITs because it needs cli's {@link BrokerChild}; the waiting itself is
 * {@link Poll}'s.
 */
final class TestCluster {
    /** How long a wait on a broker's API lasts before the case fails. */
    static final Duration WAIT = Duration.ofSeconds(30);

    /** How often the API is asked: three brokers share two cores with the test. */
    static final Duration EVERY = Duration.ofMillis(50);

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private TestCluster() {}

    /**
     * Starts {@code size} brokers under {@code dir}, each with {@code settings} (key, value, ...), logging their events,
     * and waits until every one sees all of them live and a controller.
     */
    static List<BrokerChild> start(Path dir, int size, String... settings) throws Exception {
        List<BrokerChild> brokers;
        // ports are picked free, then bound by the brokers: another process may take one in between, and that broker
        // then exits at start; such a start is tried again on new ports (twice at most)
        for (int attempt = 1; ; attempt++) {
            brokers = BrokerChild.cluster(
                    dir.resolve("attempt-" + attempt),
                    size,
                    0,
                    0,
                    0,
                    0,
                    // the brokers log their events (the test classpath's default is warn) for a failed case to print
                    List.of(
                            "-Xmx256m",
                            "--enable-native-access=ALL-UNNAMED",
                            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info"));
            try {
                for (BrokerChild broker : brokers) {
                    for (int i = 0; i < settings.length; i += 2) {
                        broker.with(settings[i], settings[i + 1]);
                    }
                    broker.launch();
                }
                for (BrokerChild broker : brokers) {
                    broker.awaitListening();
                }
                break;
            } catch (IOException e) {
                for (BrokerChild broker : brokers) {
                    broker.close();
                }
                if (attempt == 3) {
                    throw e;
                }
                System.out.println("cluster start failed (" + e.getMessage() + "), trying again on other ports");
            }
        }
        for (BrokerChild broker : brokers) {
            awaitLive(broker, size);
        }
        return brokers;
    }

    /** Waits until {@code broker} sees {@code live} brokers live and a controller. */
    static void awaitLive(BrokerChild broker, int live) throws Exception {
        await(
                broker,
                "/api/nodes",
                nodes -> liveCount(nodes) == live && !nodes.path("controller").isNull());
    }

    static long liveCount(JsonNode nodes) {
        long live = 0;
        for (JsonNode node : nodes.path("nodes")) {
            if (node.path("status").asText().equals("live")) {
                live++;
            }
        }
        return live;
    }

    /** The JSON answer of {@code broker}'s HTTP API at {@code path}, as guest. */
    static JsonNode get(BrokerChild broker, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.httpPort + path))
                .timeout(Duration.ofSeconds(5))
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8)))
                .build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body());
    }

    /**
     * Polls {@code path} on {@code broker} until {@code condition} holds and returns that answer; a broker that does not
     * answer is asked again. Fails after {@link #WAIT} with the last answer and the last failure.
     */
    static JsonNode await(BrokerChild broker, String path, Predicate<JsonNode> condition) {
        AtomicReference<JsonNode> last = new AtomicReference<>();
        AtomicReference<IOException> lastFailure = new AtomicReference<>();
        return Poll.untilPresent(
                WAIT,
                EVERY,
                () -> {
                    try {
                        last.set(get(broker, path));
                        return Optional.of(last.get()).filter(condition);
                    } catch (IOException e) {
                        lastFailure.set(e);
                        return Optional.empty();
                    }
                },
                () -> "condition on " + broker.nodeId() + " " + path + " (last answer " + last.get()
                        + Optional.ofNullable(lastFailure.get())
                                .map(e -> ", last failure " + e)
                                .orElse("") + ")");
    }

    /** The queue {@code name} as {@code broker}'s API lists it; fails if it lists none. */
    static JsonNode queue(BrokerChild broker, String name) throws Exception {
        return find(get(broker, "/api/queues"), name)
                .orElseThrow(() -> new AssertionError("no queue " + name + " on " + broker.nodeId()));
    }

    /** Polls {@code broker}'s queues until {@code name} is listed and meets {@code condition}; returns it then. */
    static JsonNode awaitQueue(BrokerChild broker, String name, Predicate<JsonNode> condition) {
        JsonNode all = await(
                broker,
                "/api/queues",
                queues -> find(queues, name).filter(condition).isPresent());
        return find(all, name).orElseThrow();
    }

    private static Optional<JsonNode> find(JsonNode queues, String name) {
        for (JsonNode queue : queues) {
            if (queue.path("name").asText().equals(name)) {
                return Optional.of(queue);
            }
        }
        return Optional.empty();
    }

    /** Runs {@code ganglion ctl args} against {@code broker}, asserts its exit status and returns what it printed. */
    static String ctl(BrokerChild broker, int expectedStatus, String... args) {
        return capture(broker, expectedStatus, false, args);
    }

    /** Like {@link #ctl}, returning what it printed on standard error. */
    static String ctlErr(BrokerChild broker, int expectedStatus, String... args) {
        return capture(broker, expectedStatus, true, args);
    }

    private static synchronized String capture(BrokerChild broker, int expectedStatus, boolean err, String... args) {
        PrintStream saved = err ? System.err : System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try {
            if (err) {
                System.setErr(capture);
            } else {
                System.setOut(capture);
            }
            List<String> full = new ArrayList<>(List.of("ctl", "--http-port", Integer.toString(broker.httpPort)));
            full.addAll(List.of(args));
            assertThat(Main.run(full.toArray(String[]::new)))
                    .as("ctl %s", List.of(args))
                    .isEqualTo(expectedStatus);
            return bytes.toString(StandardCharsets.UTF_8);
        } finally {
            if (err) {
                System.setErr(saved);
            } else {
                System.setOut(saved);
            }
        }
    }

    /**
     * Prints the event, warning and error lines of every {@code broker.out} under {@code dir}: a failed case calls it
     * before its temporary folder, and the logs in it, are deleted, since a CI run keeps only its output.
     */
    static void printBrokerEvents(Path dir) {
        try (var logs = Files.walk(dir)) {
            for (Path log :
                    logs.filter(path -> path.endsWith("broker.out")).sorted().toList()) {
                List<String> events = Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                        .filter(TestCluster::worthPrinting)
                        .toList();
                System.out.println("---- " + dir.relativize(log) + ": last " + Math.min(events.size(), 500) + " of "
                        + events.size() + " event, warning and error lines");
                events.subList(Math.max(0, events.size() - 500), events.size()).forEach(System.out::println);
            }
            System.out.println("---- the brokers' whole logs are kept under " + dir);
        } catch (IOException | RuntimeException e) {
            System.out.println("---- broker logs unreadable: " + e);
        }
    }

    /** An event line, a warning or error of any logger, or a line of a stack trace. */
    private static boolean worthPrinting(String line) {
        return line.contains("event=")
                || line.contains("WARN")
                || line.contains("ERROR")
                || line.contains("SEVERE")
                || line.startsWith("\tat ")
                || line.startsWith("Caused by");
    }
}
