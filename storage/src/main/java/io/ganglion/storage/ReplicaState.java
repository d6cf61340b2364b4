package io.ganglion.storage;

/**
 * The parts of a replica that change rarely and are kept in its state file: the sealed epoch, the epoch history, the
 * installed snapshot and the damage verdict. Immutable; the shard thread publishes a new one on every change.
 *
 * @param sealedEpoch -1 when never sealed
 * @param snapshotOffset -1 when no snapshot is installed
 * @param damage why the replica is damaged, empty when it is not
 */
record ReplicaState(long sealedEpoch, EpochHistory history, long snapshotOffset, String damage) {
    static final ReplicaState INITIAL = new ReplicaState(-1, EpochHistory.empty(), -1, "");

    boolean damaged() {
        return !damage.isEmpty();
    }

    ReplicaState withSealedEpoch(long epoch) {
        return epoch <= sealedEpoch ? this : new ReplicaState(epoch, history, snapshotOffset, damage);
    }

    ReplicaState withHistory(EpochHistory next) {
        return next == history ? this : new ReplicaState(sealedEpoch, next, snapshotOffset, damage);
    }

    ReplicaState withSnapshot(long offset, EpochHistory next) {
        return new ReplicaState(sealedEpoch, next, offset, "");
    }

    ReplicaState withDamage(String reason) {
        return damaged() ? this : new ReplicaState(sealedEpoch, history, snapshotOffset, reason);
    }
}
