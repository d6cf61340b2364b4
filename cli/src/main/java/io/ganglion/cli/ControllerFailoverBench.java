package io.ganglion.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ganglion bench controller-failover}: three broker processes; kills the controller with SIGKILL many times and
 * measures, each time, how long from the kill until a survivor's image holds the first command committed by the new
 * controller (the live set change that takes the killed broker down). The killed broker is restarted and the cluster
 * is left to settle before the next kill.
 *
 * <p>The time is observed by polling the survivors' HTTP API every few milliseconds, so a figure includes up to one
 * polling interval (reported) beyond the commit itself.
 */
@Command(
        name = "controller-failover",
        description = "Kill the controller repeatedly; print p50/p99 of kill -> first command of the new controller.")
final class ControllerFailoverBench implements Runnable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long POLL_MS = 5;

    @Option(names = "--kills", defaultValue = "20", description = "how many kills (default ${DEFAULT-VALUE})")
    int kills;

    @Option(names = "--dir", description = "data folder (default: a new temporary folder)")
    Path dir;

    @Option(
            names = "--settle-ms",
            defaultValue = "1500",
            description = "pause after the killed broker rejoined (default ${DEFAULT-VALUE})")
    long settleMs;

    private final HttpClient http = HttpClient.newHttpClient();

    @Override
    public void run() {
        if (kills < 1) {
            throw new Main.UsageError("--kills must be at least 1");
        }
        try {
            Path root = dir != null ? dir : Files.createTempDirectory("ganglion-failover-bench");
            List<BrokerChild> brokers =
                    BrokerChild.cluster(root, 3, 0, 0, 0, 0, List.of("-Xmx256m", "--enable-native-access=ALL-UNNAMED"));
            try {
                for (BrokerChild broker : brokers) {
                    broker.launch();
                }
                for (BrokerChild broker : brokers) {
                    broker.awaitListening();
                }
                awaitAllLive(brokers, null, 0);
                measure(brokers);
            } finally {
                for (BrokerChild broker : brokers) {
                    broker.close();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    private void measure(List<BrokerChild> brokers) throws IOException, InterruptedException {
        long[] millis = new long[kills];
        for (int i = 0; i < kills; i++) {
            String controller = controller(brokers.get(0));
            BrokerChild victim = brokers.stream()
                    .filter(b -> b.nodeId().equals(controller))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no broker is controller"));
            long incarnation = node(get(victim, "/api/nodes"), controller)
                    .path("incarnation")
                    .asLong();
            List<BrokerChild> survivors =
                    brokers.stream().filter(b -> b != victim).toList();
            long killedAt = System.nanoTime();
            victim.kill();
            millis[i] = awaitDown(survivors, controller, killedAt);
            String next = controller(survivors.get(0));
            System.out.printf(
                    Locale.ROOT,
                    "kill %2d/%d at %s: controller %s killed, %s took over, first command committed after %d ms%n",
                    i + 1,
                    kills,
                    java.time.LocalTime.now()
                            .minusNanos((System.nanoTime() - killedAt))
                            .truncatedTo(java.time.temporal.ChronoUnit.MILLIS),
                    controller,
                    next,
                    millis[i]);
            victim.launch().awaitListening();
            awaitAllLive(brokers, controller, incarnation + 1);
            Thread.sleep(settleMs);
        }
        long[] sorted = millis.clone();
        Arrays.sort(sorted);
        System.out.printf(
                Locale.ROOT,
                "%ncontroller failover, %d kills: p50 %d ms, p99 %d ms, min %d ms, max %d ms (polled every %d ms)%n",
                kills,
                percentile(sorted, 0.50),
                percentile(sorted, 0.99),
                sorted[0],
                sorted[sorted.length - 1],
                POLL_MS);
    }

    static long percentile(long[] sorted, double p) {
        int index = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    /** Waits until a survivor's image shows {@code killed} down, committed by another controller. */
    private long awaitDown(List<BrokerChild> survivors, String killed, long killedAt)
            throws IOException, InterruptedException {
        long deadline = killedAt + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            for (BrokerChild survivor : survivors) {
                JsonNode nodes = tryGet(survivor, "/api/nodes");
                if (nodes != null
                        && node(nodes, killed).path("status").asText().equals("down")
                        && !nodes.path("controller").asText(killed).equals(killed)) {
                    return (System.nanoTime() - killedAt) / 1_000_000;
                }
            }
            Thread.sleep(POLL_MS);
        }
        throw new IllegalStateException("no new controller committed within 60 s of killing " + killed);
    }

    private void awaitAllLive(List<BrokerChild> brokers, String rejoined, long incarnation)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            boolean ready = true;
            for (BrokerChild broker : brokers) {
                JsonNode nodes = tryGet(broker, "/api/nodes");
                if (nodes == null || nodes.path("controller").isNull()) {
                    ready = false;
                    break;
                }
                int live = 0;
                for (JsonNode node : nodes.path("nodes")) {
                    live += node.path("status").asText().equals("live") ? 1 : 0;
                }
                if (live != brokers.size()
                        || (rejoined != null
                                && node(nodes, rejoined).path("incarnation").asLong() < incarnation)) {
                    ready = false;
                    break;
                }
            }
            if (ready) {
                return;
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("the cluster did not show every broker live within 60 s");
    }

    private String controller(BrokerChild broker) throws IOException, InterruptedException {
        return get(broker, "/api/nodes").path("controller").asText();
    }

    private static JsonNode node(JsonNode nodes, String id) {
        for (JsonNode node : nodes.path("nodes")) {
            if (node.path("node").asText().equals(id)) {
                return node;
            }
        }
        return JSON.createObjectNode();
    }

    private JsonNode tryGet(BrokerChild broker, String path) throws InterruptedException {
        try {
            return get(broker, path);
        } catch (IOException e) {
            return null;
        }
    }

    private JsonNode get(BrokerChild broker, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.httpPort + path))
                .timeout(Duration.ofSeconds(2))
                .header(
                        "Authorization",
                        "Basic " + Base64.getEncoder().encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8)))
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body());
    }
}
