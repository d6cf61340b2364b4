package io.ganglion.metadata;

import io.ganglion.queues.routing.FieldValues;
import java.util.Map;
import java.util.Objects;

/**
 * A declared queue.
 *
 * @param objectId the id of the queue's log in storage, drawn by the broker that declared it; a queue declared again
 *     after a delete gets a new one, so it never sees the old log
 * @param exclusiveOwner the connection that owns an exclusive queue, empty for a shared one
 * @param arguments the declare arguments as plain values, kept to check that a redeclare is equivalent
 * @param home in a cluster, the broker that hosts the queue's messages (the one it was declared through); the others
 *     forward to it. Empty on a single broker.
 */
public record QueueDef(
        String name,
        long objectId,
        QueueType type,
        boolean durable,
        String exclusiveOwner,
        boolean autoDelete,
        Map<String, Object> arguments,
        String home) {

    /** A queue of a single broker (no home). */
    public QueueDef(
            String name,
            long objectId,
            QueueType type,
            boolean durable,
            String exclusiveOwner,
            boolean autoDelete,
            Map<String, Object> arguments) {
        this(name, objectId, type, durable, exclusiveOwner, autoDelete, arguments, "");
    }

    public QueueDef {
        Objects.requireNonNull(home, "home");
        Objects.requireNonNull(name, "name");
        if (objectId <= 0) {
            throw new IllegalArgumentException("object id must be positive: " + objectId);
        }
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(exclusiveOwner, "exclusiveOwner");
        arguments =
                java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(arguments)); // void values are null
    }

    public boolean exclusive() {
        return !exclusiveOwner.isEmpty();
    }

    /** The same durable, exclusive, auto-delete flags, type and arguments: a redeclare that may succeed. */
    public boolean equivalent(QueueDef other) {
        return type == other.type
                && durable == other.durable
                && exclusive() == other.exclusive()
                && autoDelete == other.autoDelete
                && FieldValues.equal(arguments, other.arguments);
    }
}
