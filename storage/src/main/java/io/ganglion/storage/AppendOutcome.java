package io.ganglion.storage;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** What an append did. A refusal is a returned value, not an exception: it is an expected event on the hot path. */
public sealed interface AppendOutcome {

    /**
     * The record was given {@code offset} and handed to the journal.
     *
     * <p>Not a record class (it was one): its future is made only when {@link #durable()} is first called, so appends
     * confirmed through a {@link DurabilityListener} cost no future. Use {@code offset()} and {@code durable()}; a
     * record pattern {@code Appended(var offset, var durable)} no longer applies.
     */
    final class Appended implements AppendOutcome {
        private final long offset;
        private final AppendFutures futures;
        private volatile CompletableFuture<Long> future;

        Appended(long offset, AppendFutures futures) {
            this.offset = offset;
            this.futures = futures;
        }

        public long offset() {
            return offset;
        }

        /**
         * Completes with the offset once the journal batch holding the record was forced, or exceptionally with a
         * {@link StorageException} if the journal failed. It completes on the store's completion thread (for a small batch,
         * on the journal writer), so dependents
         * must not block. Any thread; every call while the record is pending returns the same future.
         */
        public CompletableFuture<Long> durable() {
            CompletableFuture<Long> current = future;
            if (current == null) {
                current = futures.future(offset);
                future = current; // another thread's call may make a second one: both complete alike
            }
            return current;
        }

        @Override
        public String toString() {
            return "Appended[offset=" + offset + "]";
        }
    }

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

    /**
     * Segment writes of this data directory are failing (disk full, IO error), so the replica takes no more records
     * until the segment writer gets them out again; nothing was appended. Records appended before stay durable through
     * the journal, and the writer retries them.
     */
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
        CLOSED,
        /** The replica was deleted ({@link Storage#deleteReplica}). */
        DELETED,
        /**
         * More than {@link StorageConfig#maxWriteBehindBytes()} of this replica's records wait to be written to its
         * segments: the segment writer is stuck or far behind. Retry later; nothing was appended.
         */
        BACKLOG
    }
}
