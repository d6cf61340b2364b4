package io.ganglion.bench;

import io.ganglion.cli.BrokerChild;
import io.ganglion.cli.Waits;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/** Three (or more) Ganglion brokers started by the bench as real processes on loopback, data under one folder. */
final class GanglionTarget implements FailoverTarget {
    private final Map<String, BrokerChild> brokers = new LinkedHashMap<>();
    private final GanglionApi api;

    private GanglionTarget(List<BrokerChild> children) {
        Map<String, String> urls = new LinkedHashMap<>();
        for (BrokerChild child : children) {
            brokers.put(child.nodeId(), child);
            urls.put(child.nodeId(), "http://127.0.0.1:" + child.httpPort);
        }
        this.api = new GanglionApi(urls, "guest", "guest");
    }

    static GanglionTarget start(Path root, int count, List<String> jvmOptions, Map<String, String> settings)
            throws IOException, InterruptedException {
        List<BrokerChild> children = BrokerChild.cluster(root, count, 0, 0, 0, 0, jvmOptions);
        GanglionTarget target = new GanglionTarget(children);
        try {
            for (BrokerChild child : children) {
                settings.forEach(child::with);
                child.launch();
            }
            for (BrokerChild child : children) {
                child.awaitListening();
            }
            target.awaitHealthy();
            return target;
        } catch (IOException | InterruptedException | RuntimeException e) {
            target.close();
            throw e;
        }
    }

    @Override
    public String description() {
        return "ganglion (" + brokers.size() + " brokers started by the bench)";
    }

    @Override
    public List<String> nodes() {
        return List.copyOf(brokers.keySet());
    }

    @Override
    public String amqpUri(String node) {
        return "amqp://guest:guest@127.0.0.1:" + brokers.get(node).amqpPort;
    }

    @Override
    public void kill(String node) throws InterruptedException {
        brokers.get(node).kill();
    }

    @Override
    public void restart(String node) throws IOException, InterruptedException {
        brokers.get(node).launch().awaitListening();
    }

    @Override
    public void awaitHealthy() throws IOException, InterruptedException {
        Waits.until(
                Duration.ofSeconds(90),
                Duration.ofMillis(100),
                "the Ganglion cluster did not show every broker live within 90 s",
                () -> api.healthy(nodes()));
    }

    @Override
    public Map<String, Placement> placements(List<String> queues) throws IOException, InterruptedException {
        return api.placements(queues);
    }

    @Override
    public Optional<String> controller() throws IOException, InterruptedException {
        return api.controller();
    }

    @Override
    public boolean hasController() {
        return true;
    }

    @Override
    public OptionalLong defaultHoldMs() throws IOException, InterruptedException {
        return api.defaultHoldMs();
    }

    @Override
    public void setHoldMs(long ms) throws IOException, InterruptedException {
        api.setHoldMs(ms);
    }

    @Override
    public void close() {
        try {
            BrokerChild.stopTogether(List.copyOf(brokers.values()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
