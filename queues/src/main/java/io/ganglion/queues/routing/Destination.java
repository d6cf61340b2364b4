package io.ganglion.queues.routing;

import java.util.Objects;

/** Where a binding leads: a queue, or another exchange (exchange-to-exchange binding). */
public record Destination(Kind kind, String name) {
    public enum Kind {
        QUEUE,
        EXCHANGE
    }

    public Destination {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
    }

    public static Destination queue(String name) {
        return new Destination(Kind.QUEUE, name);
    }

    public static Destination exchange(String name) {
        return new Destination(Kind.EXCHANGE, name);
    }
}
