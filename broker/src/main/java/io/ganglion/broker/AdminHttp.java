package io.ganglion.broker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ganglion.broker.cluster.ClusterNode;
import io.ganglion.coordination.AcceptedHistory;
import io.ganglion.coordination.Assignment;
import io.ganglion.coordination.Incarnation;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.NodeState;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.RuntimeSettings;
import io.ganglion.coordination.Setting;
import io.ganglion.metadata.MetadataCommand;
import io.ganglion.metadata.MetadataImage;
import io.ganglion.metadata.MetadataLog;
import io.ganglion.metadata.User;
import io.ganglion.metadata.Vhost;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP API on the management port: JSON for {@code bin/ganglion ctl} and tools. Requests authenticate with HTTP
 * basic as a user tagged {@code administrator}.
 *
 * <pre>
 *   GET    /api/overview
 *   GET    /api/vhosts                 PUT /api/vhosts/{name}       DELETE /api/vhosts/{name}
 *   GET    /api/users                  PUT /api/users/{name}?password=..&amp;tags=a,b   DELETE /api/users/{name}
 *   GET    /api/queues
 *   GET    /api/nodes                  PUT /api/nodes/{name}?draining=true|false
 *   GET    /api/settings               GET /api/settings/{name}     PUT /api/settings/{name}?value=..
 * </pre>
 *
 * Errors answer with a status (400, 401, 404) and {@code {"error": "..."}}.
 */
final class AdminHttp implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AdminHttp.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final HttpServer server;
    private final MetadataLog metadata;
    private final BrokerConfig config;
    private final ClusterNode cluster;
    private final Incarnation incarnation;

    private final LocalBackend backend;

    private AdminHttp(
            HttpServer server,
            MetadataLog metadata,
            BrokerConfig config,
            ClusterNode cluster,
            Incarnation incarnation,
            LocalBackend backend) {
        this.backend = backend;
        this.server = server;
        this.metadata = metadata;
        this.config = config;
        this.cluster = cluster;
        this.incarnation = incarnation;
    }

    /** @param cluster this broker's cluster part, or null for a single broker */
    static AdminHttp start(
            String host,
            int port,
            MetadataLog metadata,
            BrokerConfig config,
            ClusterNode cluster,
            Incarnation incarnation,
            LocalBackend backend)
            throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 16);
        AdminHttp http = new AdminHttp(server, metadata, config, cluster, incarnation, backend);
        server.createContext("/api/", http::handle);
        server.setExecutor(Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ganglion-http");
            thread.setDaemon(true);
            return thread;
        }));
        server.start();
        return http;
    }

    int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try {
            if (!authorized(exchange)) {
                exchange.getResponseHeaders().add("WWW-Authenticate", "Basic realm=\"ganglion\"");
                reply(exchange, 401, Map.of("error", "an administrator user and password are required"));
                return;
            }
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            List<String> parts =
                    new ArrayList<>(List.of(path.substring("/api/".length()).split("/")));
            parts.removeIf(String::isEmpty);
            route(exchange, method, parts);
        } catch (IllegalArgumentException e) {
            reply(exchange, 400, Map.of("error", e.getMessage()));
        } catch (RuntimeException e) {
            LOG.error("event=http_failed uri={}", exchange.getRequestURI(), e);
            reply(exchange, 500, Map.of("error", String.valueOf(e.getMessage())));
        } finally {
            exchange.close();
        }
    }

    private void route(HttpExchange exchange, String method, List<String> parts) throws IOException {
        MetadataImage image = metadata.image();
        String resource = parts.isEmpty() ? "" : parts.get(0);
        String name = parts.size() > 1 ? URLDecoder.decode(parts.get(1), StandardCharsets.UTF_8) : null;
        switch (resource + ":" + method + ":" + (name == null ? "" : "name")) {
            case "overview:GET:" -> reply(exchange, 200, overview(image));
            case "vhosts:GET:" -> reply(exchange, 200, new ArrayList<>(new TreeMap<>(image.vhosts()).keySet()));
            case "vhosts:PUT:name" -> command(exchange, new MetadataCommand.PutVhost(name));
            case "vhosts:DELETE:name" -> command(exchange, new MetadataCommand.DeleteVhost(name));
            case "users:GET:" -> reply(exchange, 200, users(image));
            case "users:PUT:name" -> putUser(exchange, name);
            case "users:DELETE:name" -> command(exchange, new MetadataCommand.DeleteUser(name));
            case "queues:GET:" -> reply(exchange, 200, queues(image));
            case "replicas:GET:" -> reply(exchange, 200, replicas());
            case "nodes:GET:" -> reply(exchange, 200, nodes(image));
            case "nodes:PUT:name" -> putDraining(exchange, image, name);
            case "settings:GET:" -> reply(exchange, 200, settings(image));
            case "settings:GET:name" -> reply(exchange, 200, setting(image, RuntimeSettings.named(name)));
            case "settings:PUT:name" -> putSetting(exchange, image, name);
            default ->
                reply(
                        exchange,
                        404,
                        Map.of(
                                "error",
                                "no such resource: " + exchange.getRequestURI().getPath()));
        }
    }

    private static List<Map<String, Object>> users(MetadataImage image) {
        List<Map<String, Object>> users = new ArrayList<>();
        for (User user : new TreeMap<>(image.users()).values()) {
            users.add(Map.of("name", user.name(), "tags", user.tags()));
        }
        return users;
    }

    private void putUser(HttpExchange exchange, String name) throws IOException {
        Map<String, String> query = query(exchange);
        String password = query.get("password");
        if (password == null) {
            throw new IllegalArgumentException("password is required");
        }
        List<String> tags = query.getOrDefault("tags", "").isBlank()
                ? List.of()
                : List.of(query.get("tags").split(","));
        byte[] salt = new byte[4];
        RANDOM.nextBytes(salt);
        command(exchange, new MetadataCommand.PutUser(User.withPassword(name, password, salt, tags)));
    }

    private List<Map<String, Object>> queues(MetadataImage image) {
        List<Map<String, Object>> queues = new ArrayList<>();
        Map<Map<String, Object>, CompletableFuture<Map<String, Object>>> statuses = new LinkedHashMap<>();
        for (Vhost vhost : new TreeMap<>(image.vhosts()).values()) {
            for (var queue : new TreeMap<>(vhost.queues()).values()) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("vhost", vhost.name());
                row.put("name", queue.name());
                row.put("type", queue.type().wireName());
                row.put("durable", queue.durable());
                row.put("exclusive", queue.exclusive());
                row.put("auto_delete", queue.autoDelete());
                if (queue.replicated()) {
                    replicatedColumns(row, image, vhost.name(), queue);
                    statuses.put(row, backend.ownerStatus(vhost.name(), queue));
                } else {
                    row.put("owner", queue.home().isEmpty() ? config.nodeId() : queue.home());
                }
                queues.add(row);
            }
        }
        // the owners' views (learners, each copy's durable offset), asked in parallel, each bounded
        statuses.forEach((row, status) -> row.put("owner_status", status.join()));
        return queues;
    }

    private List<Map<String, Object>> replicas() {
        List<Map<String, Object>> replicas = new ArrayList<>();
        backend.localReplicaStatuses().forEach((queue, status) -> {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("queue", queue);
            row.putAll(status.join());
            replicas.add(row);
        });
        return replicas;
    }

    private void putDraining(HttpExchange exchange, MetadataImage image, String name) throws IOException {
        String draining = query(exchange).get("draining");
        if (!"true".equals(draining) && !"false".equals(draining)) {
            throw new IllegalArgumentException("draining must be true or false");
        }
        if (!knownNode(image, name)) {
            reply(exchange, 404, Map.of("error", "no node '" + name + "' in this cluster"));
            return;
        }
        command(exchange, new MetadataCommand.SetDraining(name, Boolean.parseBoolean(draining)));
    }

    private static List<Map<String, Object>> settings(MetadataImage image) {
        List<Map<String, Object>> settings = new ArrayList<>();
        for (Setting setting : RuntimeSettings.all()) {
            settings.add(setting(image, setting));
        }
        return settings;
    }

    private void putSetting(HttpExchange exchange, MetadataImage image, String name) throws IOException {
        String value = query(exchange).get("value");
        if (value == null) {
            throw new IllegalArgumentException("value is required");
        }
        // refuses an unknown name or a bad value with the reason (IllegalArgumentException -> 400)
        image.coordination().settings().with(name, value);
        command(
                exchange,
                new MetadataCommand.Coordination(
                        new io.ganglion.coordination.CoordinationCommand.SetSettings(Map.of(name, value))));
    }

    /** Epoch, owner, followers and recovery state of a replicated queue, from the committed image. */
    static void replicatedColumns(
            Map<String, Object> row, MetadataImage image, String vhost, io.ganglion.metadata.QueueDef queue) {
        Optional<AcceptedHistory> history = image.coordination().object(ObjectId.of(vhost, queue.name()));
        Optional<Assignment> committed = history.flatMap(AcceptedHistory::committed);
        row.put("copies", queue.copies());
        row.put("durability", queue.durability().settingName());
        row.put("epoch", committed.map(a -> a.epoch().value()).orElse(0L));
        row.put("owner", committed.map(a -> a.owner().value()).orElse(""));
        List<String> followers = new ArrayList<>();
        committed.ifPresent(a -> a.followers().forEach(node -> followers.add(node.value())));
        row.put("followers", followers);
        row.put("active", history.flatMap(AcceptedHistory::validate).isPresent());
        row.put("recovery_pending", history.flatMap(AcceptedHistory::pending).isPresent());
        // a follower of the committed assignment that is down while no recovery replaces it is held (the follower
        // loss hold): it keeps its slot; since = its last heartbeat, until = when the hold ends. One whose hold ended
        // is
        // leaving the epoch (FollowerLeaving: no longer counted, out of E once the owner's proof commits)
        Set<NodeId> leaving = history.map(AcceptedHistory::leavingInCommitted).orElse(Set.of());
        row.put("leaving", leaving.stream().map(NodeId::value).sorted().toList());
        long holdMs = image.coordination().settings().value(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS);
        List<Map<String, Object>> held = new ArrayList<>();
        if (history.flatMap(AcceptedHistory::validate).isPresent()) {
            committed.get().followers().stream()
                    .filter(node -> !leaving.contains(node))
                    .forEach(node -> image.coordination()
                            .liveSet()
                            .node(node)
                            .filter(state -> !state.live())
                            .ifPresent(state -> held.add(Map.of(
                                    "node",
                                    node.value(),
                                    "since_ms",
                                    state.lastHeartbeatMs(),
                                    "until_ms",
                                    state.lastHeartbeatMs() + holdMs))));
        }
        row.put("held", held);
        history.flatMap(AcceptedHistory::pending).ifPresent(pending -> {
            Map<String, Object> recovery = new LinkedHashMap<>();
            recovery.put("epoch", pending.proposed().epoch().value());
            recovery.put("owner", pending.proposed().owner().value());
            recovery.put("seals", pending.seals().size());
            recovery.put("seals_needed", history.get().recoveryThreshold());
            recovery.put("point", pending.point().map(Object::toString).orElse(null));
            recovery.put("installed", pending.installedMembers());
            recovery.put(
                    "step",
                    pending.point().isEmpty()
                            ? "sealing"
                            : pending.installedMembers()
                                            < pending.proposed().members().size()
                                    ? "installing"
                                    : "activating");
            row.put("recovery", recovery);
        });
    }

    private static Map<String, Object> setting(MetadataImage image, Setting setting) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("name", setting.name());
        row.put("value", image.coordination().settings().value(setting));
        row.put("default", setting.defaultValue());
        row.put("min", setting.min());
        row.put("max", setting.max());
        row.put("description", setting.description());
        return row;
    }

    private boolean knownNode(MetadataImage image, String name) {
        return image.coordination().liveSet().node(new NodeId(name)).isPresent()
                || config.seeds().stream().anyMatch(seed -> seed.id().equals(name))
                || (!config.clustered() && config.nodeId().equals(name));
    }

    private Optional<String> controller() {
        if (cluster == null) {
            return Optional.of(config.nodeId());
        }
        return metadata.leaderId();
    }

    private Map<String, Object> nodes(MetadataImage image) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("controller", controller().orElse(null));
        List<Map<String, Object>> nodes = new ArrayList<>();
        for (NodeState state : image.coordination().liveSet().nodes().values()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("node", state.node().value());
            row.put("status", state.live() ? "live" : "down");
            row.put("reason", state.reason().map(Object::toString).orElse(null));
            row.put("incarnation", state.incarnation().value());
            row.put("draining", state.draining());
            row.put(
                    "drain_requested",
                    image.drainRequested().contains(state.node().value()));
            row.put("last_heartbeat_ms", state.lastHeartbeatMs());
            nodes.add(row);
        }
        body.put("nodes", nodes);
        return body;
    }

    private Map<String, Object> overview(MetadataImage image) {
        Map<String, Object> overview = new LinkedHashMap<>();
        overview.put("node", config.nodeId());
        overview.put("incarnation", incarnation.value());
        overview.put("controller", controller().orElse(null));
        overview.put("cluster_size", Math.max(1, config.seeds().size()));
        overview.put(
                "live_nodes",
                image.coordination().liveSet().nodes().values().stream()
                        .filter(NodeState::live)
                        .count());
        overview.put("metadata_index", image.appliedIndex());
        overview.put("cluster_name", config.clusterName());
        overview.put("version", Broker.VERSION);
        overview.put("vhosts", image.vhosts().size());
        overview.put("users", image.users().size());
        overview.put(
                "queues",
                image.vhosts().values().stream()
                        .mapToInt(v -> v.queues().size())
                        .sum());
        long liveAfterGc = 0;
        for (var pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == java.lang.management.MemoryType.HEAP && pool.getCollectionUsage() != null) {
                liveAfterGc += pool.getCollectionUsage().getUsed();
            }
        }
        overview.put("heap_live_after_gc_bytes", liveAfterGc);
        overview.put("heap_max_bytes", Runtime.getRuntime().maxMemory());
        return overview;
    }

    private void command(HttpExchange exchange, MetadataCommand command) throws IOException {
        MetadataImage.Applied applied = metadata.propose(command).join();
        if (applied.rejection().isPresent()) {
            int status = applied.rejection().get().kind() == io.ganglion.metadata.Rejection.Kind.NOT_FOUND ? 404 : 400;
            reply(exchange, status, Map.of("error", applied.rejection().get().message()));
        } else {
            reply(exchange, 200, Map.of("ok", true));
        }
    }

    private boolean authorized(HttpExchange exchange) {
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        if (header == null || !header.startsWith("Basic ")) {
            return false;
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(header.substring(6).strip()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return false;
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            return false;
        }
        String user = decoded.substring(0, colon);
        return metadata.image()
                .user(user)
                .filter(u -> u.tags().contains("administrator"))
                .filter(u -> u.checkPassword(decoded.substring(colon + 1)))
                .isPresent();
    }

    private static Map<String, String> query(HttpExchange exchange) {
        Map<String, String> query = new LinkedHashMap<>();
        String raw = exchange.getRequestURI().getRawQuery();
        if (raw == null) {
            return query;
        }
        for (String pair : raw.split("&")) {
            int equals = pair.indexOf('=');
            String key = URLDecoder.decode(equals < 0 ? pair : pair.substring(0, equals), StandardCharsets.UTF_8);
            String value = equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            query.put(key, value);
        }
        return query;
    }

    private static void reply(HttpExchange exchange, int status, Object body) throws IOException {
        byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(body);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
