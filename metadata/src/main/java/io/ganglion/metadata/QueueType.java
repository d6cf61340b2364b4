package io.ganglion.metadata;

import java.util.Optional;

/** The queue types clients may ask for with {@code x-queue-type}. */
public enum QueueType {
    /** One copy, {@code owner_durable}. */
    CLASSIC("classic"),
    /** Replicated, {@code majority_durable}. */
    QUORUM("quorum"),
    /**
     * A replicated stream, {@code majority_durable}: an append-only log every consumer reads from an offset of its
     * choosing, without removing anything.
     */
    STREAM("stream");

    private final String wireName;

    QueueType(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public static Optional<QueueType> parse(String name) {
        for (QueueType type : values()) {
            if (type.wireName.equals(name)) {
                return Optional.of(type);
            }
        }
        return Optional.empty();
    }
}
