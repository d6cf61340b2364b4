package io.ganglion.coordination;

import java.util.Objects;
import java.util.Optional;

/**
 * What an object was declared as: its kind, how many copies it wants, its durability mode, and the node placement
 * prefers as its first owner, if any (the broker it was declared through: clients usually stay on the broker they
 * declared through, so its owner there saves a hop per message; {@link Placement} rule 4).
 */
public record ObjectSpec(
        ObjectId id, ObjectKind kind, int copies, DurabilityMode mode, Optional<NodeId> preferredOwner) {
    /** A spec with no preferred owner: placement balances. */
    public ObjectSpec(ObjectId id, ObjectKind kind, int copies, DurabilityMode mode) {
        this(id, kind, copies, mode, Optional.empty());
    }

    public ObjectSpec {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(preferredOwner, "preferredOwner");
        if (copies < 1) {
            throw new IllegalArgumentException("copies must be at least 1: " + copies);
        }
    }

    /** The write requirement W. It comes from the declared copies, never from how many members an epoch happens to have. */
    public int writeRequirement() {
        return mode.writeRequirement(copies);
    }
}
