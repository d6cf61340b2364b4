package io.ganglion.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code ganglion ctl}: talks to a running broker's HTTP API. */
@Command(
        name = "ctl",
        description = "Manage a running broker.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  bin/ganglion ctl status",
            "  bin/ganglion ctl --http-port 15673 queues",
            "  bin/ganglion ctl node drain ganglion-2",
            "  bin/ganglion ctl settings set replication.follower_loss_hold_ms 500",
            "  bin/ganglion ctl users add alice s3cret --tags administrator",
            "  bin/ganglion ctl vhosts add staging"
        },
        subcommands = {
            Ctl.Status.class,
            Ctl.Nodes.class,
            Ctl.Node.class,
            Ctl.SettingsCommand.class,
            Ctl.Vhosts.class,
            Ctl.Users.class,
            Ctl.Queues.class
        })
final class Ctl {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "broker host (default ${DEFAULT-VALUE})")
    String host;

    @Option(names = "--http-port", defaultValue = "15672", description = "HTTP API port (default ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--user", defaultValue = "guest", description = "an administrator (default ${DEFAULT-VALUE})")
    String user;

    @Option(names = "--password", defaultValue = "guest", description = "its password")
    String password;

    JsonNode call(String method, String path) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10))
                .header(
                        "Authorization",
                        "Basic "
                                + Base64.getEncoder()
                                        .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)))
                .build();
        HttpResponse<String> response;
        try {
            response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("cannot reach a broker at " + host + ":" + port + " (" + e + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
        JsonNode body;
        try {
            body = JSON.readTree(response.body());
        } catch (IOException e) {
            throw new IllegalStateException("broker answered " + response.statusCode() + " with something not JSON");
        }
        if (response.statusCode() != 200) {
            throw new IllegalStateException(body.path("error").asText("HTTP " + response.statusCode()));
        }
        return body;
    }

    static String encode(String part) {
        return URLEncoder.encode(part, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @Command(name = "status", description = "The broker, the controller and the live set with incarnations.")
    static final class Status implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Override
        public void run() {
            JsonNode overview = ctl.call("GET", "/api/overview");
            overview.fields()
                    .forEachRemaining(field -> System.out.println(
                            field.getKey() + ": " + field.getValue().asText()));
            System.out.println();
            printNodes(ctl.call("GET", "/api/nodes"));
        }
    }

    static void printNodes(JsonNode body) {
        System.out.println("controller: " + body.path("controller").asText("none"));
        System.out.println("node\tstatus\tincarnation\tdraining\treason");
        body.path("nodes")
                .forEach(node -> System.out.println(node.path("node").asText() + "\t"
                        + node.path("status").asText() + "\t"
                        + node.path("incarnation").asLong() + "\t"
                        + (node.path("draining").asBoolean()
                                ? "yes"
                                : node.path("drain_requested").asBoolean() ? "requested" : "no")
                        + "\t"
                        + (node.path("reason").isNull()
                                ? "-"
                                : node.path("reason").asText())));
    }

    @Command(name = "nodes", description = "The controller and every node with its status and incarnation.")
    static final class Nodes implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Override
        public void run() {
            printNodes(ctl.call("GET", "/api/nodes"));
        }
    }

    @Command(name = "node", description = "drain NODE | undrain NODE: move copies away from a node, or stop doing so")
    static final class Node implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Parameters(index = "0", description = "drain or undrain")
        String action;

        @Parameters(index = "1", arity = "0..1", description = "the node id")
        String node;

        @Override
        public void run() {
            boolean draining = switch (action) {
                case "drain" -> true;
                case "undrain" -> false;
                default -> throw new Main.UsageError("unknown action '" + action + "': expected drain or undrain");
            };
            ctl.call("PUT", "/api/nodes/" + encode(required(node, "node id")) + "?draining=" + draining);
            System.out.println(node + (draining ? " draining" : " no longer draining"));
        }
    }

    @Command(name = "settings", description = "list | get NAME | set NAME VALUE: the cluster's runtime settings")
    static final class SettingsCommand implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Parameters(index = "0", description = "list, get or set")
        String action;

        @Parameters(index = "1", arity = "0..1", description = "the setting")
        String name;

        @Parameters(index = "2", arity = "0..1", description = "the value (set)")
        String value;

        @Override
        public void run() {
            switch (action) {
                case "list" -> ctl.call("GET", "/api/settings").forEach(Ctl::printSetting);
                case "get" -> printSetting(ctl.call("GET", "/api/settings/" + encode(required(name, "setting name"))));
                case "set" -> {
                    ctl.call(
                            "PUT",
                            "/api/settings/" + encode(required(name, "setting name")) + "?value="
                                    + encode(required(value, "value")));
                    printSetting(ctl.call("GET", "/api/settings/" + encode(name)));
                }
                default -> throw new Main.UsageError("unknown action '" + action + "': expected list, get or set");
            }
        }
    }

    static void printSetting(JsonNode setting) {
        System.out.println(
                setting.path("name").asText() + " = " + setting.path("value").asLong() + "\t(default "
                        + setting.path("default").asLong() + ")");
    }

    @Command(name = "vhosts", description = "list | add NAME | delete NAME")
    static final class Vhosts implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Parameters(index = "0", description = "list, add or delete")
        String action;

        @Parameters(index = "1", arity = "0..1", description = "the vhost")
        String name;

        @Override
        public void run() {
            switch (action) {
                case "list" -> ctl.call("GET", "/api/vhosts").forEach(vhost -> System.out.println(vhost.asText()));
                case "add" -> ctl.call("PUT", "/api/vhosts/" + encode(required(name, "vhost name")));
                case "delete" -> ctl.call("DELETE", "/api/vhosts/" + encode(required(name, "vhost name")));
                default -> throw new Main.UsageError("unknown action '" + action + "': expected list, add or delete");
            }
        }
    }

    @Command(name = "users", description = "list | add NAME PASSWORD [--tags a,b] | delete NAME")
    static final class Users implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Parameters(index = "0", description = "list, add or delete")
        String action;

        @Parameters(index = "1", arity = "0..1", description = "the user")
        String name;

        @Parameters(index = "2", arity = "0..1", description = "the password (add)")
        String password;

        @Option(names = "--tags", defaultValue = "", description = "comma-separated tags, e.g. administrator")
        String tags;

        @Override
        public void run() {
            switch (action) {
                case "list" ->
                    ctl.call("GET", "/api/users")
                            .forEach(
                                    user -> System.out.println(user.path("name").asText() + "\t" + user.path("tags")));
                case "add" ->
                    ctl.call(
                            "PUT",
                            "/api/users/" + encode(required(name, "user name")) + "?password="
                                    + encode(required(password, "password")) + "&tags=" + encode(tags));
                case "delete" -> ctl.call("DELETE", "/api/users/" + encode(required(name, "user name")));
                default -> throw new Main.UsageError("unknown action '" + action + "': expected list, add or delete");
            }
        }
    }

    @Command(
            name = "queues",
            description = "Queues: owner (or home), copies, epoch, followers, recovery state; for replicated queues the"
                    + " followers held by the follower loss hold (and until when), the learners, and each copy's"
                    + " durable offset as the owner counts it.")
    static final class Queues implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Override
        public void run() {
            System.out.println(
                    "vhost\tname\ttype\tdurable\towner\tcopies\tepoch\tfollowers\tstate\theld\tlearners\tdurable_offsets");
            ctl.call("GET", "/api/queues").forEach(q -> {
                boolean replicated = q.has("copies");
                System.out.println(q.path("vhost").asText() + "\t"
                        + q.path("name").asText() + "\t"
                        + q.path("type").asText() + "\t" + q.path("durable").asBoolean() + "\t"
                        + q.path("owner").asText() + "\t"
                        + (replicated
                                ? q.path("copies").asInt() + " "
                                        + q.path("durability").asText()
                                : "1") + "\t"
                        + (replicated ? q.path("epoch").asLong() : "-") + "\t"
                        + (replicated ? q.path("followers").toString() : "-") + "\t"
                        + (replicated ? state(q) : "-") + "\t"
                        + (replicated ? held(q.path("held"), q.path("leaving")) : "-") + "\t"
                        + (replicated ? learners(q.path("owner_status")) : "-") + "\t"
                        + (replicated ? durableOffsets(q) : "-"));
            });
        }

        /** active, inactive, or recovering to an epoch with its step: sealing 1/2, installing, activating. */
        static String state(JsonNode q) {
            JsonNode recovery = q.path("recovery");
            if (!recovery.isMissingNode()) {
                String step = recovery.path("step").asText();
                return "recovering(epoch " + recovery.path("epoch").asLong() + ", " + step
                        + (step.equals("sealing")
                                ? " " + recovery.path("seals").asInt() + "/"
                                        + recovery.path("seals_needed").asInt()
                                : "")
                        + ")";
            }
            return q.path("active").asBoolean() ? "active" : "inactive";
        }

        /**
         * Held followers, since when (their last heartbeat) and until when (the hold's end): {@code
         * ganglion-2(since 2026-11-29T17:55:00Z until 2026-11-29T18:00:00Z)}; then followers leaving the epoch (their
         * hold over): {@code ganglion-3(leaving)}; or -.
         */
        static String held(JsonNode held, JsonNode leaving) {
            List<String> rows = new ArrayList<>();
            held.forEach(h -> rows.add(h.path("node").asText() + "(since "
                    + java.time.Instant.ofEpochMilli(h.path("since_ms").asLong()) + " until "
                    + java.time.Instant.ofEpochMilli(h.path("until_ms").asLong()) + ")"));
            leaving.forEach(node -> rows.add(node.asText() + "(leaving)"));
            return rows.isEmpty() ? "-" : String.join(",", rows);
        }

        static String learners(JsonNode status) {
            List<String> rows = new ArrayList<>();
            status.path("learners").forEach(node -> rows.add(node.asText()));
            return rows.isEmpty() ? "-" : String.join(",", rows);
        }

        /** owner=durable and each follower=durable, as the owner counts them, or why they are not known. */
        static String durableOffsets(JsonNode q) {
            JsonNode status = q.path("owner_status");
            if (status.has("error")) {
                return "? (" + status.path("error").asText() + ")";
            }
            if (!status.has("durable")) {
                return "-";
            }
            List<String> rows = new ArrayList<>();
            rows.add(q.path("owner").asText() + "=" + status.path("durable").asLong());
            status.path("follower_durable")
                    .properties()
                    .forEach(e -> rows.add(e.getKey() + "=" + e.getValue().asLong()));
            return String.join(",", rows) + " commit=" + status.path("commit").asLong();
        }
    }

    static String required(String value, String what) {
        if (value == null || value.isBlank()) {
            throw new Main.UsageError(what + " is required");
        }
        return value;
    }
}
