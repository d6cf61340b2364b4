package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import java.util.Map;
import java.util.Objects;

/**
 * What a replica's storage recovered at process start: the retained log {@code start..end} (all durable after
 * recovery), its epoch history, the sealed epoch from the replica state file, and the publish ids of its newest
 * records (for dedupe of re-sent publishes; the replica keeps {@link ReplicationConfig#publishIndexCapacity} at most).
 */
public record RecoveredLog(
        long start, long end, EpochHistory history, Epoch sealedEpoch, Map<PublishId, Long> published) {
    public static final RecoveredLog EMPTY = new RecoveredLog(0, -1, EpochHistory.EMPTY, Epoch.NONE, Map.of());

    public RecoveredLog {
        Objects.requireNonNull(history, "history");
        Objects.requireNonNull(sealedEpoch, "sealedEpoch");
        published = Map.copyOf(published);
        if (end < start - 1) {
            throw new IllegalArgumentException("end " + end + " before start " + start);
        }
    }
}
