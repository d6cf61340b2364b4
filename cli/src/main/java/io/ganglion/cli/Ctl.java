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
import java.util.Base64;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code ganglion ctl}: talks to a running broker's HTTP API. */
@Command(
        name = "ctl",
        description = "Manage a running broker.",
        subcommands = {Ctl.Status.class, Ctl.Vhosts.class, Ctl.Users.class, Ctl.Queues.class})
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

    @Command(name = "status", description = "The broker's node, cluster and counts.")
    static final class Status implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Override
        public void run() {
            JsonNode overview = ctl.call("GET", "/api/overview");
            overview.fields()
                    .forEachRemaining(field -> System.out.println(
                            field.getKey() + ": " + field.getValue().asText()));
        }
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

    @Command(name = "queues", description = "Queues with their owner.")
    static final class Queues implements Runnable {
        @ParentCommand
        Ctl ctl;

        @Override
        public void run() {
            System.out.println("vhost\tname\ttype\tdurable\towner");
            ctl.call("GET", "/api/queues")
                    .forEach(q -> System.out.println(q.path("vhost").asText() + "\t"
                            + q.path("name").asText() + "\t"
                            + q.path("type").asText() + "\t" + q.path("durable").asBoolean() + "\t"
                            + q.path("owner").asText()));
        }
    }

    static String required(String value, String what) {
        if (value == null || value.isBlank()) {
            throw new Main.UsageError(what + " is required");
        }
        return value;
    }
}
