package io.ganglion.queues.routing;

import java.util.Map;
import java.util.Objects;

/** A binding from a source exchange to a destination, with its routing key and arguments. */
public record Binding(String source, Destination destination, String routingKey, Map<String, Object> arguments) {
    public Binding {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(routingKey, "routingKey");
        arguments =
                java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(arguments)); // void values are null
    }

    /** Same source, destination, key and arguments: AMQP treats such bindings as one. */
    public boolean sameAs(Binding other) {
        return source.equals(other.source)
                && destination.equals(other.destination)
                && routingKey.equals(other.routingKey)
                && FieldValues.equal(arguments, other.arguments);
    }
}
