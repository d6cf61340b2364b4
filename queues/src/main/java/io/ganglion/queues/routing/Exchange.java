package io.ganglion.queues.routing;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A declared exchange. Two declarations are equivalent when type, durable, auto-delete, internal and arguments match;
 * a redeclare that is not equivalent is refused with 406 PRECONDITION_FAILED, naming the first difference.
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
        return difference(other).isEmpty();
    }

    /**
     * How a redeclaration {@code requested} differs from this exchange, in RabbitMQ's order: type, durable,
     * auto_delete, internal, then the arguments kept ({@code alternate-exchange}).
     */
    public Optional<Equivalence.Difference> difference(Exchange requested) {
        return Equivalence.field("type", type, requested.type)
                .or(() -> Equivalence.field("durable", durable, requested.durable))
                .or(() -> Equivalence.field("auto_delete", autoDelete, requested.autoDelete))
                .or(() -> Equivalence.field("internal", internal, requested.internal))
                .or(() -> Equivalence.arguments(arguments, requested.arguments, List.copyOf(arguments.keySet()))
                        .or(() -> Equivalence.arguments(
                                arguments, requested.arguments, List.copyOf(requested.arguments.keySet()))));
    }

    /** True for names clients may not declare or delete: the {@code amq.} prefix is reserved. */
    public static boolean reservedName(String name) {
        return name.startsWith("amq.");
    }
}
