package io.ganglion.bench;

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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What {@code bench failover} asks a Ganglion cluster over its HTTP API: queue owners ({@code /api/queues}), the
 * controller and the live set ({@code /api/nodes}), and the follower loss hold ({@code /api/settings}). Each request
 * goes to the first node that answers, so a killed node is simply skipped.
 */
final class GanglionApi {
    static final String HOLD = "replication.follower_loss_hold_ms";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Node name -> base URL such as {@code http://127.0.0.1:15672}. */
    private final Map<String, String> baseUrls;

    private final String authorization;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    GanglionApi(Map<String, String> baseUrls, String user, String password) {
        this.baseUrls = new LinkedHashMap<>(baseUrls);
        this.authorization =
                "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    Map<String, FailoverTarget.Placement> placements(List<String> queues) throws IOException, InterruptedException {
        Map<String, FailoverTarget.Placement> placements = new LinkedHashMap<>();
        for (JsonNode row : anyNode("GET", "/api/queues")) {
            String name = row.path("name").asText();
            if (!queues.contains(name) || !row.hasNonNull("owner")) {
                continue;
            }
            String owner = row.path("owner").asText();
            if (owner.isEmpty()) {
                continue; // not active yet: no placement to report
            }
            List<String> members = new ArrayList<>();
            members.add(owner);
            // a replicated queue lists its followers; a classic queue has its home only
            for (JsonNode follower : row.path("followers")) {
                members.add(follower.asText());
            }
            placements.put(name, new FailoverTarget.Placement(owner, members));
        }
        return placements;
    }

    Optional<String> controller() throws IOException, InterruptedException {
        JsonNode controller = anyNode("GET", "/api/nodes").path("controller");
        return controller.isNull() || controller.isMissingNode() ? Optional.empty() : Optional.of(controller.asText());
    }

    /** True when some node reports a controller and every node in {@code nodes} live. */
    boolean healthy(List<String> nodes) throws InterruptedException {
        for (String node : nodes) {
            JsonNode answer;
            try {
                answer = request(node, "GET", "/api/nodes");
            } catch (IOException e) {
                return false;
            }
            if (answer.path("controller").isNull()) {
                return false;
            }
            int live = 0;
            for (JsonNode row : answer.path("nodes")) {
                live += nodes.contains(row.path("node").asText())
                                && row.path("status").asText().equals("live")
                        ? 1
                        : 0;
            }
            if (live != nodes.size()) {
                return false;
            }
        }
        return true;
    }

    /** {@code /api/nodes} as {@code node} sees it: the controller and the live set. */
    JsonNode nodes(String node) throws IOException, InterruptedException {
        return request(node, "GET", "/api/nodes");
    }

    /** The row of {@code id} in an {@code /api/nodes} answer, or an empty object. */
    static JsonNode row(JsonNode nodes, String id) {
        for (JsonNode row : nodes.path("nodes")) {
            if (row.path("node").asText().equals(id)) {
                return row;
            }
        }
        return JSON.createObjectNode();
    }

    OptionalLong defaultHoldMs() throws IOException, InterruptedException {
        JsonNode setting = anyNode("GET", "/api/settings/" + HOLD);
        return setting.has("default") ? OptionalLong.of(setting.path("default").asLong()) : OptionalLong.empty();
    }

    void setHoldMs(long ms) throws IOException, InterruptedException {
        anyNode(
                "PUT",
                "/api/settings/" + HOLD + "?value=" + URLEncoder.encode(Long.toString(ms), StandardCharsets.UTF_8));
    }

    private JsonNode anyNode(String method, String path) throws IOException, InterruptedException {
        IOException last = null;
        for (String node : baseUrls.keySet()) {
            try {
                return request(node, method, path);
            } catch (IOException e) {
                last = e;
            }
        }
        throw new IOException("no Ganglion node answered " + method + " " + path, last);
    }

    private JsonNode request(String node, String method, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrls.get(node) + path))
                .timeout(Duration.ofSeconds(3))
                .header("Authorization", authorization)
                .method(method, HttpRequest.BodyPublishers.noBody())
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() / 100 != 2) {
            throw new IOException(
                    method + " " + path + " on " + node + ": HTTP " + response.statusCode() + " " + response.body());
        }
        return response.body().isBlank() ? JSON.createObjectNode() : JSON.readTree(response.body());
    }
}
