package io.ganglion.metadata;

import io.ganglion.coordination.DurabilityMode;
import io.ganglion.coordination.NodeId;
import io.ganglion.coordination.ObjectId;
import io.ganglion.coordination.ObjectKind;
import io.ganglion.coordination.ObjectSpec;
import io.ganglion.queues.routing.Equivalence;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A declared queue.
 *
 * @param objectId the id of the queue's log in storage, drawn by the broker that declared it; a queue declared again
 *     after a delete gets a new one, so it never sees the old log
 * @param exclusiveOwner the connection that owns an exclusive queue, empty for a shared one
 * @param arguments the declare arguments as plain values, kept to check that a redeclare is equivalent
 * @param home in a cluster, the broker that hosts the queue's messages (the one it was declared through); the others
 *     forward to it. Empty on a single broker. For a replicated queue (whose owner is the coordination's): the
 *     broker placement prefers as its first owner (x-queue-leader-locator client-local, the broker it was declared
 *     through), or empty (balanced).
 * @param copies how many copies a replicated queue wants; 0 for a queue that is not a coordination object (a single
 *     broker's queue, or a cluster's queue kept by its home)
 * @param durability a replicated queue's durability mode (its write requirement W); ignored when copies is 0
 */
public record QueueDef(
        String name,
        long objectId,
        QueueType type,
        boolean durable,
        String exclusiveOwner,
        boolean autoDelete,
        Map<String, Object> arguments,
        String home,
        int copies,
        DurabilityMode durability) {

    /** A queue kept by its home broker (not replicated). */
    public QueueDef(
            String name,
            long objectId,
            QueueType type,
            boolean durable,
            String exclusiveOwner,
            boolean autoDelete,
            Map<String, Object> arguments,
            String home) {
        this(
                name,
                objectId,
                type,
                durable,
                exclusiveOwner,
                autoDelete,
                arguments,
                home,
                0,
                DurabilityMode.OWNER_DURABLE);
    }

    /** A queue of a single broker (no home). */
    public QueueDef(
            String name,
            long objectId,
            QueueType type,
            boolean durable,
            String exclusiveOwner,
            boolean autoDelete,
            Map<String, Object> arguments) {
        this(name, objectId, type, durable, exclusiveOwner, autoDelete, arguments, "", 0, DurabilityMode.OWNER_DURABLE);
    }

    public QueueDef {
        Objects.requireNonNull(home, "home");
        Objects.requireNonNull(durability, "durability");
        if (copies < 0) {
            throw new IllegalArgumentException("copies must not be negative: " + copies);
        }
        Objects.requireNonNull(name, "name");
        if (objectId <= 0) {
            throw new IllegalArgumentException("object id must be positive: " + objectId);
        }
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(exclusiveOwner, "exclusiveOwner");
        arguments =
                java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(arguments)); // void values are null
    }

    /** Whether the queue is a coordination object with copies on several brokers. */
    public boolean replicated() {
        return copies > 0;
    }

    /** The coordination object of a replicated queue in {@code vhost}. */
    public ObjectSpec spec(String vhost) {
        return new ObjectSpec(
                ObjectId.of(vhost, name),
                ObjectKind.QUEUE,
                copies,
                durability,
                home.isEmpty() ? Optional.empty() : Optional.of(new NodeId(home)));
    }

    public boolean exclusive() {
        return !exclusiveOwner.isEmpty();
    }

    /** The same durable, exclusive, auto-delete flags, type and arguments: a redeclare that may succeed. */
    public boolean equivalent(QueueDef other) {
        return exclusive() == other.exclusive() && difference(other).isEmpty();
    }

    /**
     * How a redeclaration {@code requested} differs from this queue, leaving out the exclusive owner (405, checked
     * apart): durable, auto_delete, then the arguments in RabbitMQ's order of its declare arguments, the type compared
     * as {@code x-queue-type} (an absent one is classic).
     */
    public Optional<Equivalence.Difference> difference(QueueDef requested) {
        return Equivalence.field("durable", durable, requested.durable)
                .or(() -> Equivalence.field("auto_delete", autoDelete, requested.autoDelete))
                .or(() -> Equivalence.arguments(arguments, requested.arguments, ARGUMENTS_BEFORE_TYPE))
                .or(() -> typeDifference(requested))
                .or(() -> Equivalence.arguments(arguments, requested.arguments, ARGUMENTS_AFTER_TYPE));
    }

    private Optional<Equivalence.Difference> typeDifference(QueueDef requested) {
        if (type == requested.type) {
            return Optional.empty();
        }
        // a queue declared before its type was kept among its arguments has the type alone
        boolean hasCurrent = arguments.containsKey(TYPE_ARGUMENT) || type != QueueType.CLASSIC;
        boolean hasReceived = requested.arguments.containsKey(TYPE_ARGUMENT) || requested.type != QueueType.CLASSIC;
        return Equivalence.argument(TYPE_ARGUMENT, hasCurrent, type.wireName(), hasReceived, requested.type.wireName());
    }

    private static final String TYPE_ARGUMENT = "x-queue-type";

    /** RabbitMQ 3.10's declare arguments in the order it checks them, those before the type and after it. */
    private static final List<String> ARGUMENTS_BEFORE_TYPE = List.of(
            "x-expires",
            "x-message-ttl",
            "x-dead-letter-exchange",
            "x-dead-letter-routing-key",
            "x-max-length",
            "x-max-length-bytes",
            "x-max-priority",
            "x-overflow",
            "x-queue-mode",
            "x-single-active-consumer");

    private static final List<String> ARGUMENTS_AFTER_TYPE = List.of(
            "x-quorum-initial-group-size",
            "x-delivery-limit",
            "x-dead-letter-strategy",
            "x-max-age",
            "x-stream-max-segment-size-bytes",
            "x-initial-cluster-size",
            "x-queue-leader-locator",
            "x-copies",
            "x-durability");
}
