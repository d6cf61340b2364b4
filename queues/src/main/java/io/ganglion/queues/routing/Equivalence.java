package io.ganglion.queues.routing;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The first difference between a declaration and the exchange or queue already there, with RabbitMQ's words for it:
 * {@code inequivalent arg 'durable' for queue 'q' in vhost '/': received 'false' but current is 'true'}. Argument
 * values are plain Java values (as field tables decode to them); their AMQP type names follow the Java type.
 */
public final class Equivalence {
    /** The property or argument that differs, and RabbitMQ's account of the two values. */
    public record Difference(String arg, String detail) {
        /** The whole reply text, for {@code kind} ({@code exchange} or {@code queue}) {@code name} in {@code vhost}. */
        public String text(String kind, String name, String vhost) {
            return "inequivalent arg '" + arg + "' for " + ResourceName.of(kind, vhost, name) + ": " + detail;
        }
    }

    private Equivalence() {}

    /** A property both declarations carry ({@code type}, {@code durable}, ...): shown as its value. */
    public static Optional<Difference> field(String arg, Object current, Object received) {
        if (FieldValues.equal(current, received)) {
            return Optional.empty();
        }
        return Optional.of(
                new Difference(arg, "received '" + show(received) + "' but current is '" + show(current) + "'"));
    }

    /** The first of {@code keys}, in order, whose argument differs; an argument absent on one side is "none". */
    public static Optional<Difference> arguments(
            Map<String, Object> current, Map<String, Object> received, List<String> keys) {
        for (String key : keys) {
            Optional<Difference> difference = argument(
                    key, current.containsKey(key), current.get(key), received.containsKey(key), received.get(key));
            if (difference.isPresent()) {
                return difference;
            }
        }
        return Optional.empty();
    }

    /** One argument, each side present or not. */
    public static Optional<Difference> argument(
            String key, boolean hasCurrent, Object current, boolean hasReceived, Object received) {
        if (!hasCurrent && !hasReceived) {
            return Optional.empty();
        }
        if (hasCurrent && hasReceived) {
            return field(key, current, received);
        }
        String detail = hasReceived
                ? "received " + typed(received) + " but current is none"
                : "received none but current is " + typed(current);
        return Optional.of(new Difference(key, detail));
    }

    private static String typed(Object value) {
        return "the value '" + show(value) + "' of type '" + typeName(value) + "'";
    }

    private static String show(Object value) {
        if (value instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        if (value instanceof ExchangeType type) {
            return type.wireName();
        }
        return String.valueOf(value);
    }

    /** The AMQP field type RabbitMQ names for a plain value. */
    static String typeName(Object value) {
        return switch (value) {
            case null -> "void";
            case String s -> "longstr";
            case Boolean b -> "bool";
            case Byte b -> "byte";
            case Short s -> "short";
            case Integer i -> "signedint";
            case Long l -> "long";
            case Float f -> "float";
            case Double d -> "double";
            case BigDecimal d -> "decimal";
            case byte[] bytes -> "binary";
            case List<?> list -> "array";
            case Map<?, ?> map -> "table";
            default -> value.getClass().getSimpleName();
        };
    }
}
