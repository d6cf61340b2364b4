package io.ganglion.queues.routing;

import java.util.Map;
import java.util.Objects;

/**
 * A declared exchange. Two declarations are equivalent when type, durable, auto-delete, internal and arguments match;
 * a redeclare that is not equivalent is refused with 406 PRECONDITION_FAILED.
 */
public record Exchange(
        String name,
        ExchangeType type,
        boolean durable,
        boolean autoDelete,
        boolean internal,
        Map<String, Object> arguments) {

    /** The nameless default exchange: every queue is bound to it by its own name. */
    public static final String DEFAULT = "";

    public Exchange {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        arguments =
                java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(arguments)); // void values are null
    }

    public boolean equivalent(Exchange other) {
        return type == other.type
                && durable == other.durable
                && autoDelete == other.autoDelete
                && internal == other.internal
                && FieldValues.equal(arguments, other.arguments);
    }

    /** True for names clients may not declare or delete: the {@code amq.} prefix is reserved. */
    public static boolean reservedName(String name) {
        return name.startsWith("amq.");
    }
}
