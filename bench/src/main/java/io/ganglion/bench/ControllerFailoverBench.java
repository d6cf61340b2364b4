package io.ganglion.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.ganglion.cli.BrokerChild;
import io.ganglion.cli.Main;
import io.ganglion.cli.Waits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
        mixinStandardHelpOptions = true,
        description = "Kill the controller repeatedly; print p50/p99 of kill -> first command of the new controller.")
final class ControllerFailoverBench implements Runnable {
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
        Map<String, String> urls = new LinkedHashMap<>();
        brokers.forEach(b -> urls.put(b.nodeId(), "http://127.0.0.1:" + b.httpPort));
        GanglionApi api = new GanglionApi(urls, "guest", "guest");
        List<String> all = List.copyOf(urls.keySet());
        Waits.until(
                Duration.ofSeconds(60),
                Duration.ofMillis(20),
                "the cluster did not show every broker live within 60 s",
                () -> api.healthy(all));
        long[] millis = new long[kills];
        for (int i = 0; i < kills; i++) {
            String controller = api.controller().orElseThrow(() -> new IllegalStateException("no controller"));
            BrokerChild victim = brokers.stream()
                    .filter(b -> b.nodeId().equals(controller))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("controller " + controller + " is not ours"));
            long incarnation = GanglionApi.row(api.nodes(controller), controller)
                    .path("incarnation")
                    .asLong();
            List<String> survivors =
                    all.stream().filter(id -> !id.equals(controller)).toList();
            long killedAt = System.nanoTime();
            victim.kill();
            millis[i] = awaitDown(api, survivors, controller, killedAt);
            System.out.printf(
                    Locale.ROOT,
                    "kill %2d/%d at %s: controller %s killed, %s took over, first command committed after %d ms%n",
                    i + 1,
                    kills,
                    java.time.LocalTime.now()
                            .minusNanos((System.nanoTime() - killedAt))
                            .truncatedTo(java.time.temporal.ChronoUnit.MILLIS),
                    controller,
                    api.controller().orElse("?"),
                    millis[i]);
            victim.launch().awaitListening();
            Waits.until(
                    Duration.ofSeconds(60),
                    Duration.ofMillis(20),
                    "the cluster did not show every broker live within 60 s",
                    () -> api.healthy(all)
                            && GanglionApi.row(api.nodes(controller), controller)
                                            .path("incarnation")
                                            .asLong()
                                    > incarnation);
            Waits.pause(Duration.ofMillis(settleMs));
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

    /** Polls the survivors until one shows {@code killed} down, committed by another controller; returns the ms. */
    private static long awaitDown(GanglionApi api, List<String> survivors, String killed, long killedAt)
            throws IOException, InterruptedException {
        Waits.until(
                Duration.ofSeconds(60),
                Duration.ofMillis(POLL_MS),
                "no new controller committed within 60 s of killing " + killed,
                () -> {
                    for (String survivor : survivors) {
                        try {
                            JsonNode nodes = api.nodes(survivor);
                            if (GanglionApi.row(nodes, killed)
                                            .path("status")
                                            .asText()
                                            .equals("down")
                                    && !nodes.path("controller").asText(killed).equals(killed)) {
                                return true;
                            }
                        } catch (IOException e) {
                            // that survivor is busy or restarting: ask the other
                        }
                    }
                    return false;
                });
        return (System.nanoTime() - killedAt) / 1_000_000;
    }
}
