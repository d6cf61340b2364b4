package io.ganglion.broker.replication;

import io.ganglion.replication.PublishId;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The publishes a {@link ReplicaHost} handed to its replica and has not yet heard the outcome of, in admission order.
 * The replica forgets them silently when it loses the owner role (their outcome is unknown there); the host then
 * refuses them all here, so the queue layer re-sends them to the new owner. On the host's shard thread.
 */
final class OutstandingPublishes {
    private final ReplicaListener listener;
    private final LinkedHashSet<PublishId> ids = new LinkedHashSet<>();

    OutstandingPublishes(ReplicaListener listener) {
        this.listener = listener;
    }

    void admitted(PublishId id) {
        ids.add(id);
    }

    void confirmed(PublishId id, long offset) {
        ids.remove(id);
        listener.confirmed(id, offset);
    }

    void refused(PublishId id, String reason) {
        ids.remove(id);
        listener.refused(id, reason);
    }

    /** Refuses every outstanding publish with {@code reason}, oldest first. */
    void refuseAll(String reason) {
        if (ids.isEmpty()) {
            return;
        }
        List<PublishId> refused = new ArrayList<>(ids);
        ids.clear();
        for (PublishId id : refused) {
            listener.refused(id, reason);
        }
    }
}
