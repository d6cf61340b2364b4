package io.ganglion.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ganglion.cli.BrokerChild;
import io.ganglion.cli.Main;
import io.ganglion.cli.Waits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A RabbitMQ cluster of three nodes on this machine, from Debian's {@code rabbitmq-server} package: each node with its
 * own node name, ports, data and log folders under one temporary folder and a shared Erlang cookie, clustered with
 * {@code rabbitmqctl join_cluster}. Kill is {@code kill -9} of the node's beam process (its pid file); restart starts
 * it again, and it rejoins the cluster from its own data. RabbitMQ has no controller and no follower loss hold.
 *
 * <p>Queue leaders come from {@code rabbitmqctl list_queues name leader members --formatter json}; a quorum queue's
 * leader is first placed on the node it was declared through (the default {@code client-local} locator).
 */
final class RabbitMqTarget implements FailoverTarget {
    static final Path HOME = Path.of("/usr/lib/rabbitmq");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path root;
    private final Map<String, Node> nodes = new LinkedHashMap<>();

    private record Node(String name, int index, int amqpPort, Map<String, String> environment, Path dir) {}

    private RabbitMqTarget(Path root) {
        this.root = root;
    }

    static boolean installed() {
        return Files.isExecutable(HOME.resolve("bin/rabbitmq-server"));
    }

    static String version() {
        try {
            return FailoverTarget.shell("dpkg-query -W -f '${Version}' rabbitmq-server", Map.of(), 10)
                    .strip();
        } catch (IOException e) {
            return "unknown version";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown version";
        }
    }

    /** Starts {@code count} nodes under {@code root} and clusters them with the first. */
    static RabbitMqTarget start(Path root, int count) throws IOException, InterruptedException {
        Files.createDirectories(root);
        byte[] random = new byte[12];
        new SecureRandom().nextBytes(random);
        String cookie = HexFormat.of().formatHex(random).toUpperCase(java.util.Locale.ROOT);
        Path cookieFile = root.resolve(".erlang.cookie");
        Files.writeString(cookieFile, cookie);
        Files.setPosixFilePermissions(cookieFile, PosixFilePermissions.fromString("r--------"));
        Files.writeString(root.resolve("enabled_plugins"), "[].\n");
        Files.writeString(root.resolve("rabbitmq.conf"), "loopback_users = none\n");
        RabbitMqTarget target = new RabbitMqTarget(root);
        // node names must be unique on this machine's epmd: another engineer may run the same bench
        String prefix = "gbench" + ProcessHandle.current().pid() + "n";
        try {
            for (int i = 1; i <= count; i++) {
                Path dir = root.resolve("node" + i);
                Files.createDirectories(dir);
                int amqpPort = BrokerChild.freePort();
                int distPort = distPort();
                String name = prefix + i + "@localhost";
                Map<String, String> env = new LinkedHashMap<>();
                env.put("HOME", root.toString());
                env.put("RABBITMQ_NODENAME", name);
                env.put("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1");
                env.put("RABBITMQ_NODE_PORT", Integer.toString(amqpPort));
                env.put("RABBITMQ_DIST_PORT", Integer.toString(distPort));
                env.put("RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString());
                env.put("RABBITMQ_LOG_BASE", dir.resolve("log").toString());
                env.put("RABBITMQ_PID_FILE", dir.resolve("pid").toString());
                env.put(
                        "RABBITMQ_ENABLED_PLUGINS_FILE",
                        root.resolve("enabled_plugins").toString());
                env.put("RABBITMQ_CONFIG_FILE", root.resolve("rabbitmq").toString());
                target.nodes.put(name, new Node(name, i, amqpPort, Map.copyOf(env), dir));
            }
            for (Node node : target.nodes.values()) {
                target.launch(node);
            }
            for (Node node : target.nodes.values()) {
                target.awaitStartup(node);
            }
            Node first = target.nodes.values().iterator().next();
            for (Node node : target.nodes.values()) {
                if (node != first) {
                    target.ctl(node, "stop_app");
                    target.ctl(node, "join_cluster " + first.name());
                    target.ctl(node, "start_app");
                }
            }
            target.awaitHealthy();
            return target;
        } catch (IOException | InterruptedException | RuntimeException e) {
            target.close();
            throw e;
        }
    }

    /** A free port low enough that the CLI tools' port (distribution port + 10000) is valid too. */
    private static int distPort() throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = BrokerChild.freePort();
            if (port < 55_000) {
                return port;
            }
        }
        throw new IOException("no free port below 55000 for Erlang distribution");
    }

    private void launch(Node node) throws IOException {
        Files.deleteIfExists(node.dir().resolve("pid"));
        ProcessBuilder builder = new ProcessBuilder(
                        HOME.resolve("bin/rabbitmq-server").toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        node.dir().resolve("server.out").toFile()));
        builder.environment().putAll(node.environment());
        builder.start();
    }

    private void awaitStartup(Node node) throws IOException, InterruptedException {
        Waits.until(
                Duration.ofSeconds(120),
                Duration.ofMillis(500),
                "RabbitMQ node " + node.name() + " did not start within 120 s, see "
                        + node.dir().resolve("server.out"),
                () -> {
                    ctl(node, "await_startup"); // throws until the node runs
                    return true;
                });
    }

    private String ctl(Node node, String arguments) throws IOException, InterruptedException {
        return FailoverTarget.shell(
                HOME.resolve("bin/rabbitmqctl") + " -q -n " + node.name() + " " + arguments, node.environment(), 120);
    }

    @Override
    public String description() {
        return "rabbitmq " + version() + " (" + nodes.size() + " nodes started by the bench)";
    }

    @Override
    public List<String> nodes() {
        return List.copyOf(nodes.keySet());
    }

    @Override
    public String amqpUri(String node) {
        return "amqp://guest:guest@127.0.0.1:" + nodes.get(node).amqpPort();
    }

    @Override
    public void kill(String name) throws IOException, InterruptedException {
        Node node = nodes.get(name);
        String pid = Files.readString(node.dir().resolve("pid")).strip();
        FailoverTarget.shell(
                "kill -9 " + pid + " && while kill -0 " + pid + " 2>/dev/null; do sleep 0.01; done", Map.of(), 30);
    }

    @Override
    public void restart(String name) throws IOException, InterruptedException {
        Node node = nodes.get(name);
        launch(node);
        awaitStartup(node);
    }

    @Override
    public void awaitHealthy() throws IOException, InterruptedException {
        for (Node node : nodes.values()) {
            awaitStartup(node);
        }
        Node first = nodes.values().iterator().next();
        Waits.until(
                Duration.ofSeconds(120),
                Duration.ofMillis(500),
                "the RabbitMQ cluster did not show every node running within 120 s",
                () -> JSON.readTree(ctl(first, "cluster_status --formatter json"))
                                .path("running_nodes")
                                .size()
                        == nodes.size());
    }

    @Override
    public Map<String, Placement> placements(List<String> queues) throws IOException, InterruptedException {
        IOException last = null;
        for (Node node : nodes.values()) {
            try {
                return parsePlacements(ctl(node, "list_queues name leader members --formatter json"), queues);
            } catch (IOException e) {
                last = e; // that node is down: ask the next one
            }
        }
        throw new IOException("no RabbitMQ node answered list_queues", last);
    }

    /**
     * Reads {@code [{"name": .., "leader": .., "members": [..]}]} (what {@code rabbitmqctl list_queues name leader members
     * --formatter json} prints, {@code owner} accepted for {@code leader}) for the given queues; a queue with no leader
     * (classic, or none elected) is left out.
     */
    static Map<String, Placement> parsePlacements(String json, List<String> queues) throws IOException {
        Map<String, Placement> placements = new LinkedHashMap<>();
        for (JsonNode row : JSON.readTree(json)) {
            String name = row.path("name").asText();
            String leader = row.has("leader")
                    ? row.path("leader").asText()
                    : row.path("owner").asText();
            if (!queues.contains(name) || leader.isEmpty()) {
                continue;
            }
            List<String> members = new ArrayList<>();
            for (JsonNode member : row.path("members")) {
                members.add(member.asText());
            }
            if (!members.contains(leader)) {
                members.add(0, leader);
            }
            placements.put(name, new Placement(leader, members));
        }
        return placements;
    }

    @Override
    public Optional<String> controller() {
        return Optional.empty();
    }

    @Override
    public boolean hasController() {
        return false;
    }

    @Override
    public OptionalLong defaultHoldMs() {
        return OptionalLong.empty();
    }

    @Override
    public void setHoldMs(long ms) {
        throw new Main.UsageError("RabbitMQ has no follower loss hold: run it with --holds default");
    }

    @Override
    public void close() {
        for (Node node : nodes.values()) {
            try {
                ctl(node, "stop");
            } catch (IOException e) {
                // already down (killed and not restarted): make sure no beam is left behind
                try {
                    Path pid = node.dir().resolve("pid");
                    if (Files.exists(pid)) {
                        FailoverTarget.shell(
                                "kill -9 " + Files.readString(pid).strip() + " 2>/dev/null; true", Map.of(), 10);
                    }
                } catch (IOException | InterruptedException again) {
                    System.err.println(
                            "bench: could not stop RabbitMQ node " + node.name() + ": " + again.getMessage());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
