package io.ganglion.broker;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ganglion.broker.replication.ReplicaHost;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What an operator sees of one broker's copy of a replicated queue: its role and epoch, its log (start, end, durable
 * offset), and on the owner the commit offset, the learners and each follower's durable offset. The same map goes into
 * {@code /api/queues} (fetched from the owner over the peer link, {@link RemoteQueues#OP_STATUS}) and {@code
 * /api/replicas}.
 */
final class ReplicaStatus {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ReplicaStatus() {}

    /** The status of {@code queue}'s replica; empty map for a queue that is not replicated. Any thread. */
    static CompletableFuture<Map<String, Object>> of(LocalQueue queue) {
        if (!(queue instanceof ReplicatedQueue replicated) || replicated.host() == null) {
            return CompletableFuture.completedFuture(Map.of());
        }
        return replicated.host().status().thenApply(ReplicaStatus::toMap);
    }

    static Map<String, Object> toMap(ReplicaHost.Status status) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put(
                "role",
                status.failed()
                        ? "failed"
                        : status.owning().isPresent()
                                ? "owner"
                                : status.following().isPresent() ? "follower" : "idle");
        row.put(
                "epoch",
                status.owning()
                        .or(status::following)
                        .map(epoch -> epoch.value())
                        .orElse(0L));
        row.put("sealed_epoch", status.sealedEpoch().value());
        row.put("start", status.start());
        row.put("end", status.end());
        row.put("durable", status.durable());
        if (status.owning().isPresent()) {
            row.put("commit", status.commit());
            List<String> learners = new ArrayList<>();
            status.learners().forEach(node -> learners.add(node.value()));
            row.put("learners", learners);
            Map<String, Long> durable = new LinkedHashMap<>();
            status.followerDurable().forEach((node, offset) -> durable.put(node.value(), offset));
            row.put("follower_durable", durable);
        }
        return row;
    }

    static byte[] encode(Map<String, Object> status) {
        try {
            return JSON.writeValueAsBytes(status);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Map<String, Object> decode(byte[] json) {
        try {
            return JSON.readValue(json, new TypeReference<Map<String, Object>>() {});
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
