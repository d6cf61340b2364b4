package io.ganglion.storage;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A control record (truncate, discard, seal, snapshot, delete) a replica submitted to the {@link JournalWriter},
 * which writes it in order with the replica's appends. Its durability is reported once, by the completer, to its
 * future.
 */
final class ControlRecord {
    private static final Object SUCCEEDED = new Object();
    private static final VarHandle COMPLETION;

    static {
        try {
            COMPLETION = MethodHandles.lookup().findVarHandle(ControlRecord.class, "completion", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ReplicaLog replica;
    /** The encoded frame, position 0; read by the journal writer. */
    final ByteBuffer frame;

    private final RecordType type;
    private final long endAfter;
    private final long result;
    private final long recordsThrough;
    /** null while pending; then SUCCEEDED or the failure; or the future someone asked for while pending. */
    @SuppressWarnings("unused")
    private volatile Object completion;

    /**
     * @param frame the encoded frame, position 0
     * @param endAfter the replica's last offset once this change is applied; becomes its durable offset
     * @param result what the future completes with
     * @param recordsThrough the replica's last record appended before this; the journal takes it after them and
     *     before any later one
     */
    ControlRecord(
            ReplicaLog replica, ByteBuffer frame, RecordType type, long endAfter, long result, long recordsThrough) {
        this.replica = replica;
        this.frame = frame;
        this.type = type;
        this.endAfter = endAfter;
        this.result = result;
        this.recordsThrough = recordsThrough;
    }

    ReplicaLog replica() {
        return replica;
    }

    RecordType type() {
        return type;
    }

    long endAfter() {
        return endAfter;
    }

    long recordsThrough() {
        return recordsThrough;
    }

    /** The future of this entry's durability: completes with {@code result}. Any thread, any number of calls. */
    @SuppressWarnings("unchecked")
    CompletableFuture<Long> future() {
        Object current = completion;
        if (current == null) {
            CompletableFuture<Long> future = new CompletableFuture<>();
            if (COMPLETION.compareAndSet(this, null, future)) {
                return future;
            }
            current = completion;
        }
        if (current instanceof CompletableFuture<?> future) {
            return (CompletableFuture<Long>) future;
        }
        return current == SUCCEEDED
                ? CompletableFuture.completedFuture(result)
                : CompletableFuture.failedFuture((Throwable) current);
    }

    /** On the completer. */
    @SuppressWarnings("unchecked")
    void succeed() {
        if (!COMPLETION.compareAndSet(this, null, SUCCEEDED)) {
            ((CompletableFuture<Long>) completion).complete(result);
        }
    }

    /** On the completer. */
    void fail(StorageException error) {
        if (!COMPLETION.compareAndSet(this, null, error)) {
            ((CompletableFuture<?>) completion).completeExceptionally(error);
        }
    }
}
