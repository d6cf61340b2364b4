package io.ganglion.queues.routing;

import java.util.Locale;
import java.util.Optional;

/** The exchange types Ganglion routes. */
public enum ExchangeType {
    DIRECT,
    FANOUT,
    TOPIC,
    HEADERS;

    /** The name as clients give it in {@code exchange.declare}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<ExchangeType> parse(String name) {
        for (ExchangeType type : values()) {
            if (type.wireName().equals(name)) {
                return Optional.of(type);
            }
        }
        return Optional.empty();
    }
}
