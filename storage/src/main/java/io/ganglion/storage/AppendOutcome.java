package io.ganglion.storage;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** What an append did. A refusal is a returned value, not an exception: it is an expected event on the hot path. */
public sealed interface AppendOutcome {

    /**
     * The record was given {@code offset} and handed to the journal.
     *
     * @param durable completes with the offset once the journal batch holding the record was forced, or
     *     exceptionally with a {@link StorageException} if the journal failed; it completes on the journal writer
     *     thread, so dependents must not block
     */
    record Appended(long offset, CompletableFuture<Long> durable) implements AppendOutcome {}

    /** The replica refused the append; nothing was written. */
    record Rejected(Reason reason) implements AppendOutcome {
        private static final Rejected[] CACHE = new Rejected[Reason.values().length];

        static {
            for (Reason reason : Reason.values()) {
                CACHE[reason.ordinal()] = new Rejected(reason);
            }
        }

        static Rejected of(Reason reason) {
            return CACHE[reason.ordinal()];
        }
    }

    /** Writing the record to its segment failed (disk full, IO error); nothing was appended. */
    record Failed(IOException cause) implements AppendOutcome {}

    enum Reason {
        /** The epoch is at or below the replica's sealed epoch. */
        SEALED_EPOCH,
        /** The epoch is below the epoch of the replica's last record. */
        STALE_EPOCH,
        /** A follower append left a gap: its offset is past the next offset. */
        GAP,
        /** A follower append is at an offset the log already holds; truncate first. */
        OVERLAP,
        /** The replica is damaged and must be reseeded. */
        DAMAGED,
        /** An earlier append of this replica failed in the journal; truncate after the durable offset first. */
        FAILED,
        /** The record is larger than the configured maximum. */
        TOO_LARGE,
        /** The store is closed or its journal failed for good. */
        CLOSED
    }
}
