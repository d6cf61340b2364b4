package io.ganglion.coordination;

import java.util.Objects;

/** A broker's stable identity, from its configuration. Ordered by name so every choice over nodes is deterministic. */
public record NodeId(String value) implements Comparable<NodeId> {
    public NodeId {
        Objects.requireNonNull(value, "value");
        if (value.isBlank()) {
            throw new IllegalArgumentException("node id must not be blank");
        }
    }

    public static NodeId of(String value) {
        return new NodeId(value);
    }

    @Override
    public int compareTo(NodeId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
