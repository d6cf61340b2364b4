package io.ganglion.coordination;

import java.util.Objects;

/** What an object was declared as: its kind, how many copies it wants and its durability mode. */
public record ObjectSpec(ObjectId id, ObjectKind kind, int copies, DurabilityMode mode) {
    public ObjectSpec {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(mode, "mode");
        if (copies < 1) {
            throw new IllegalArgumentException("copies must be at least 1: " + copies);
        }
    }

    /** The write requirement W. It comes from the declared copies, never from how many members an epoch happens to have. */
    public int writeRequirement() {
        return mode.writeRequirement(copies);
    }
}
