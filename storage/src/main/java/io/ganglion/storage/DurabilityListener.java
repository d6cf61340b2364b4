package io.ganglion.storage;

/**
 * Hears when a replica's records become durable: once per journal batch that holds records of the replica, not once
 * per record. The cheap way to confirm many appends: register one listener per replica ({@link
 * ReplicaLog#durabilityListener}) and confirm everything up to the offset it is given, instead of waiting on each
 * append's future.
 *
 * <p>Called on the store's completion thread ({@code ganglion-durable-*}), or for a small batch on the journal writer
 * ({@code ganglion-journal-*}), in journal order either way; it must not block and must
 * not call {@link ReplicaLog#truncateAfter}, {@link ReplicaLog#installSnapshot} or {@link Storage#deleteReplica}.
 * What it throws is logged and otherwise ignored.
 */
public interface DurabilityListener {
    /** Every record of the replica through {@code offset} is durable (the journal was forced). */
    void durable(long offset);

    /**
     * Records of the replica failed in the journal: those after its durable offset are not durable and the replica
     * refuses appends until it is truncated back to it (or the store stopped for good).
     */
    default void failed(StorageException cause) {}
}
