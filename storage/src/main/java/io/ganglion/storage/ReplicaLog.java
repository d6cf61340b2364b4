package io.ganglion.storage;

import io.ganglion.storage.AppendOutcome.Appended;
import io.ganglion.storage.AppendOutcome.Failed;
import io.ganglion.storage.AppendOutcome.Reason;
import io.ganglion.storage.AppendOutcome.Rejected;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log of one object's replica on this broker: offsets 0, 1, 2, ... with no gaps, held in segment files and made
 * durable by the data directory's journal.
 *
 * <p>Appends return at once with the assigned offset and a future that completes when the journal forced the record.
 * Seal and discard take effect at once and complete their future when their control record is forced, in order with
 * the appends before them. Truncate and snapshot install are journaled and forced first and return once done. Reads
 * see every appended record, durable or not; {@link #durableOffset()} says how far the log is durable.
 *
 * <p>Implementation notes.
 *
 * <ul>
 *   <li>Threads. One shard thread owns the replica (DESIGN.md section 3) and makes every call, except {@link
 *       #objectId()}, {@link #durableOffset()}, {@link #damaged()} and {@link #durabilityListener}, which any thread
 *       may make. The shard thread must not be interrupted inside a call: an interrupt closes the file channel under
 *       the replica.
 *   <li>Fields. {@code chain} (the segments and their index), the chunk chain ({@code oldestChunk} .. {@code
 *       appendChunk}) and the {@code cached*} copies of {@code state} belong to the shard thread. {@code nextOffset}
 *       and {@code state} are written by it and read by other threads (volatile; {@code state} is immutable): {@code
 *       nextOffset} is the commit point of appends. {@code journalCursor} belongs to the journal writer, {@code segmentCursor} to the
 *       segment writer (see {@link JournalWriter} and {@link SegmentWriter} for when the shard may reset them), and
 *       {@code completerMark} to the completer. {@code journalFailed} is written only by the journal writer. {@code
 *       persisted} belongs to the checkpointer. The segment files are guarded by {@code files}, taken by the segment
 *       writer to write and by the shard to truncate, discard, reset or delete, never to append.
 *   <li>Types. The log holds its {@link SegmentChain} (which knows nothing of the log) and its chunks; {@link
 *       ReplicaReplay} rebuilds it at open. The writers and the completer read the fields named above; the segment
 *       writer's only calls back are {@link #markDirty} and {@link #markDirectoryDirty}.
 *   <li>Byte count. Each side counts the bytes of the replica's frames up to where it is: the shard through its last
 *       append ({@code appendedBytes}), the journal writer through what it copied, the segment writer through what it
 *       was handed and what it wrote. Their differences are what is held in memory ({@code BACKLOG} refusals, the
 *       segment writer's write sizes, the store's backlog). A chunk notes the count at its first byte.
 *   <li>Order of an append, with no file system call: reserve the frame's place in the active segment (a roll only
 *       starts a new index; the writer creates the file), encode the frame straight into the current chunk at the
 *       matching place, advance {@code nextOffset} (the commit), queue the replica's journal cursor unless it is
 *       queued. The journal writer copies the committed frames into its batch (a run per chunk), then hands over how
 *       far they are written to the segment writer, which writes them from the chunk to their reserved places (one
 *       write per chunk) and publishes {@code writtenThrough} and the chunk it reached; the shard then gives the
 *       chunks behind it back to the pool. Reads serve records above {@code writtenThrough} from the chunks (copied:
 *       the memory is reused).
 *   <li>A checkpoint reads the journal position, then waits for the segment writer to write everything handed over
 *       so far ({@link SegmentWriter#flushAll()}), so the segments it forces hold every record before that position,
 *       and it records {@code writtenThrough} as the synced offset.
 *   <li>Destructive changes (truncate, snapshot install) go the other way round: journal record first, wait for
 *       its force, then change the files. So the files may run ahead of the journal only by appended records at
 *       the tail, never by a removal the journal could lose; a checkpoint does not pass such a record until the
 *       files show it ({@code pendingRewritePosition}).
 *   <li>Recovery cuts the segments back to their stable prefix (at or below the checkpoint's synced offset and the
 *       lowest truncate or snapshot point in the journal), which nothing since the checkpoint changed, and replays
 *       the journal over it exactly; see {@link ReplicaReplay}. Whatever the files held above the prefix, a later
 *       state or a half-written one, does not matter.
 * </ul>
 */
public final class ReplicaLog {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaLog.class);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final long objectId;
    private final Path directory;
    private final Storage storage;
    private final StorageConfig config;
    /** The segments, oldest first; the shard's (see the class notes). */
    private final SegmentChain chain;
    /** {@code chain.active()}, kept here for appends: one object fewer to reach; set again after each chain change. */
    private Segment active;

    private final AppendChunk.Pool pool;
    /** The shard's checksum, reused for every append. */
    private final CRC32C crc = new CRC32C();

    /** The commit point: records below it may be copied by the journal writer. */
    volatile long nextOffset;

    private volatile ReplicaState state;
    /** Shard only: parts of {@code state} an append checks, kept here so that it reads one object. */
    private long cachedSealedEpoch;

    private long cachedLastEpoch;
    private boolean cachedDamaged;
    /** Set by {@link #deleteFiles} (shard, or the opening thread in a replay): the replica is gone. */
    private volatile boolean deleted;

    /**
     * The oldest chunk still held, null when none is; the journal and segment writers read it only while their cursor
     * is before the first chunk of the chain, when the shard cannot have given that chunk back.
     */
    AppendChunk oldestChunk;
    /** Shard only: the chunk appends go to, and where. */
    private AppendChunk appendChunk;

    private int appendPosition;
    /** Shard only: the byte count through the last append (see the class notes). */
    private long appendedBytes;
    /** Shard only: the segment writer's byte count as last read; at most the current one. */
    private long knownWrittenBytes;

    private long chunkSequence;
    private int nextChunkBytes = AppendChunk.MIN_BYTES;

    /** Guards the segment files (see the class notes). */
    final Object files = new Object();

    final JournalWriter.Cursor journalCursor = new JournalWriter.Cursor(this);
    final SegmentWriter.Cursor segmentCursor = new SegmentWriter.Cursor();
    /** Control records submitted and not yet written by the journal writer, in order. */
    final ConcurrentLinkedQueue<ControlRecord> controls = new ConcurrentLinkedQueue<>();
    /** The futures of appends of the current generation; replaced by the shard when a truncate or reset is durable. */
    volatile AppendFutures futures = new AppendFutures(-1, Long.MAX_VALUE, null);

    /** Set by the owner; called by the completer. */
    volatile DurabilityListener durabilityListener;
    /** The completer's notes while it reports a batch. */
    final Completer.Mark completerMark = new Completer.Mark();
    /**
     * Journal position of a truncate or snapshot record that is written but not yet applied to the files; a
     * checkpoint must not pass it. Set by the journal writer, cleared by the shard once the files changed.
     */
    volatile long pendingRewritePosition = Long.MAX_VALUE;
    /** Written by the journal writer only: a log record of this replica failed in the journal. */
    volatile boolean journalFailed;
    /** Set by the shard when a file was created or deleted in the directory; cleared by the checkpointer. */
    volatile boolean directoryDirty;
    /** The state last written to the state file; checkpointer only. */
    ReplicaState persisted;

    private ReplicaLog(long objectId, Path directory, Storage storage, ReplicaState state, SegmentChain chain) {
        this.objectId = objectId;
        this.directory = directory;
        this.storage = storage;
        this.config = storage.config();
        this.pool = storage.chunkPool();
        this.chain = chain;
        this.active = chain.active();
        this.nextOffset = active.nextOffset();
        setState(state);
    }

    static String directoryName(long objectId) {
        return String.format("%016x", objectId);
    }

    /** A new, empty replica in a new directory. */
    static ReplicaLog create(Storage storage, long objectId, Path directory) throws IOException {
        Files.createDirectories(directory);
        SegmentChain chain = new SegmentChain(directory, storage.io(), List.of(), 0);
        ReplicaLog log = new ReplicaLog(objectId, directory, storage, ReplicaState.INITIAL, chain);
        log.markDirectoryDirty();
        storage.markReplicasDirectoryDirty();
        return log;
    }

    /**
     * A replica opened from its files by {@link ReplicaReplay}, with the state its state file holds and the segments
     * its scan kept; the replay then brings it up to date and calls {@link #resumeAfterRecovery()}.
     */
    static ReplicaLog recovered(
            Storage storage, long objectId, Path directory, ReplicaState state, SegmentChain chain) {
        ReplicaLog log = new ReplicaLog(objectId, directory, storage, state, chain);
        log.persisted = state;
        return log;
    }

    // ---------------------------------------------------------------- recovery (opening thread, from ReplicaReplay)

    /** Appends a replayed journal frame at the next offset, straight to its segment file. */
    void appendReplayed(ByteBuffer frame, long offset) throws IOException {
        Segment segment = activeSegmentFor(frame.remaining());
        if (segment.isEmpty()) {
            markDirectoryDirty(); // its file may be created now
        }
        segment.append(frame);
        markDirty(segment);
        nextOffset = offset + 1;
    }

    /** After the replay: everything held is durable and in the files; the writers' cursors start at the end. */
    void resumeAfterRecovery() {
        long last = lastOffset();
        journalCursor.reset(last, appendedBytes);
        journalCursor.durableOffset = last;
        segmentCursor.reset(last, appendedBytes);
        futures = new AppendFutures(last, Long.MAX_VALUE, null);
    }

    // ---------------------------------------------------------------- appends (shard thread)

    /**
     * Appends a record as the owner: it gets the next offset and a timestamp from the store's clock.
     *
     * <p>Makes no file system call: the record goes to the journal queue, and to its segment file later, from the
     * segment writer; until then reads serve it from memory.
     *
     * @param payload read from its position to its limit; not changed, may be reused once this returns
     * @return {@link Appended} with the offset and its durability future, {@link Rejected} when the replica refuses
     *     (sealed epoch, stale epoch, damaged, failed, too large, closed, deleted, backlog), or {@link Failed} while
     *     the store's segment writes are failing
     */
    public AppendOutcome append(long epoch, RecordType type, ByteBuffer payload) {
        // on the shard thread
        AppendOutcome refusal = refuse(epoch, type, payload.remaining(), false);
        return refusal != null
                ? refusal
                : write(nextOffset, epoch, type, config.epochMillis().getAsLong(), EMPTY, payload);
    }

    /**
     * Appends a record as a follower, copying the owner's record at its offset.
     *
     * @return as {@link #append}, and also {@link Reason#GAP} when {@code offset} is past {@link #nextOffset()},
     *     {@link Reason#OVERLAP} when the log already holds it
     */
    public AppendOutcome appendAt(long offset, long epoch, RecordType type, long timestamp, ByteBuffer payload) {
        return appendAt(offset, epoch, type, timestamp, EMPTY, payload);
    }

    /**
     * As {@link #appendAt(long, long, RecordType, long, ByteBuffer)}, with a payload of {@code prefix} then {@code
     * body}: a caller that frames a body it holds writes it once, into the log, with no buffer of its own.
     */
    public AppendOutcome appendAt(
            long offset, long epoch, RecordType type, long timestamp, ByteBuffer prefix, ByteBuffer body) {
        // on the shard thread
        if (offset != nextOffset) {
            return Rejected.of(offset > nextOffset ? Reason.GAP : Reason.OVERLAP);
        }
        AppendOutcome refusal = refuse(epoch, type, prefix.remaining() + body.remaining(), false);
        return refusal != null ? refusal : write(offset, epoch, type, timestamp, prefix, body);
    }

    /**
     * Appends a record copied from another replica by a recovery install (DESIGN.md section 8, step 4): as {@link
     * #appendAt}, except that a record of the sealed epoch or an earlier one is taken. A seal fences the sealed epoch's
     * owner, which must not stream more; an install of epoch e + 1 seals e and then copies records of epochs up to e
     * from a sealed replica up to the recovery point. The caller decides that a record is such a copy.
     *
     * @return as {@link #appendAt}, never {@link Reason#SEALED_EPOCH}
     */
    public AppendOutcome appendCopy(long offset, long epoch, RecordType type, long timestamp, ByteBuffer payload) {
        return appendCopy(offset, epoch, type, timestamp, EMPTY, payload);
    }

    /** As {@link #appendCopy(long, long, RecordType, long, ByteBuffer)}, with a payload of {@code prefix} then {@code body}. */
    public AppendOutcome appendCopy(
            long offset, long epoch, RecordType type, long timestamp, ByteBuffer prefix, ByteBuffer body) {
        // on the shard thread
        if (offset != nextOffset) {
            return Rejected.of(offset > nextOffset ? Reason.GAP : Reason.OVERLAP);
        }
        AppendOutcome refusal = refuse(epoch, type, prefix.remaining() + body.remaining(), true);
        return refusal != null ? refusal : write(offset, epoch, type, timestamp, prefix, body);
    }

    private AppendOutcome refuse(long epoch, RecordType type, int payloadLength, boolean belowSealAllowed) {
        if (!type.logRecord()) {
            throw notALogRecord(type);
        }
        AppendOutcome storeRefusal =
                storage.appendRefusal(); // closed, journal stopped, segment writes failing, backlog
        if (storeRefusal != null) {
            return storeRefusal;
        }
        if (deleted) {
            return Rejected.of(Reason.DELETED);
        }
        if (cachedDamaged) {
            return Rejected.of(Reason.DAMAGED);
        }
        if (journalFailed) {
            return Rejected.of(Reason.FAILED);
        }
        if (epoch <= cachedSealedEpoch && !belowSealAllowed) {
            return Rejected.of(Reason.SEALED_EPOCH);
        }
        if (epoch < cachedLastEpoch) {
            return Rejected.of(Reason.STALE_EPOCH);
        }
        if (RecordDescriptor.frameLength(payloadLength) > config.maxRecordBytes()) {
            return Rejected.of(Reason.TOO_LARGE);
        }
        if (appendedBytes - knownWrittenBytes > config.maxWriteBehindBytes()) {
            // the segment writer's count only grows: read it (a line it writes) only when the last one seen is too low
            knownWrittenBytes = segmentCursor.writtenBytes;
            if (appendedBytes - knownWrittenBytes > config.maxWriteBehindBytes()) {
                return Rejected.of(Reason.BACKLOG); // the segment writer is stuck or far behind
            }
        }
        return null;
    }

    private AppendOutcome write(
            long offset, long epoch, RecordType type, long timestamp, ByteBuffer prefix, ByteBuffer body) {
        // no file system call here: the segment writer puts the frame in its file later (see the class notes)
        int length = RecordDescriptor.frameLength(prefix.remaining() + body.remaining());
        Segment segment = activeSegmentFor(length);
        AppendChunk chunk = appendChunk;
        if (chunk == null || chunk.segment != segment || appendPosition + length > chunk.capacity()) {
            chunk = nextChunk(segment, length, offset);
        }
        int position = appendPosition;
        RecordDescriptor.encode(
                chunk.buffer, chunk.view, position, crc, objectId, epoch, offset, timestamp, type, prefix, body);
        segment.reserve(length); // at chunk.fileBase + position
        appendPosition = position + length;
        appendedBytes += length;
        if (epoch > cachedLastEpoch) {
            ReplicaState current = state;
            setState(current.withHistory(current.history().observe(epoch, offset)));
        }
        nextOffset = offset + 1; // the commit: from here the journal writer may copy it
        journalCursor.notify(storage.journalQueue());
        return new Appended(offset, futures);
    }

    /**
     * Starts a new chunk for a record of {@code length} bytes at {@code offset}, the next place in {@code segment}:
     * closes the current one (its limit before its link, both before the record is committed), and gives back the
     * chunks the segment writer is done with. Chunks double in size, up to {@link AppendChunk#MAX_BYTES}, each time
     * one fills up, so that a busy replica writes large runs and a quiet one holds little memory.
     */
    private AppendChunk nextChunk(Segment segment, int length, long offset) {
        AppendChunk current = appendChunk;
        if (current != null) {
            if (current.segment == segment && nextChunkBytes < AppendChunk.MAX_BYTES) {
                nextChunkBytes *= 2; // this one is full
            }
            current.limit = appendPosition;
            current.lastOffset = offset - 1;
        }
        int bytes = nextChunkBytes;
        while (bytes < length && bytes < AppendChunk.MAX_BYTES) {
            bytes *= 2;
        }
        AppendChunk chunk = pool.take(bytes, length, segment, segment.size(), offset, appendedBytes, ++chunkSequence);
        if (current != null) {
            current.next = chunk;
        } else {
            oldestChunk = chunk;
        }
        appendChunk = chunk;
        appendPosition = 0;
        releaseWrittenChunks();
        return chunk;
    }

    /** Gives back the chunks wholly behind the segment writer's cursor (and so behind the journal writer's). */
    private void releaseWrittenChunks() {
        AppendChunk oldest = oldestChunk;
        if (oldest == null || oldest == appendChunk) {
            return;
        }
        long done = segmentCursor.chunkSequence;
        while (oldest != appendChunk && oldest.sequence < done) {
            AppendChunk next = oldest.next;
            oldest.release(pool);
            oldest = next;
        }
        oldestChunk = oldest;
    }

    /** The last offset of a chunk of the chain. */
    private long lastOffsetOf(AppendChunk chunk) {
        return chunk == appendChunk ? nextOffset - 1 : chunk.lastOffset;
    }

    /** The segment the next record goes to; starts a new one (its index, not its file) when this one is full. */
    private Segment activeSegmentFor(int frameLength) {
        Segment last = active;
        if (!last.isEmpty() && last.size() + (long) frameLength > config.segmentBytes()) {
            last = chain.roll();
            active = last;
        }
        return last;
    }

    // ---------------------------------------------------------------- reads (shard thread)

    /**
     * Reads records from {@code from}: those that fit in {@code maxBytes} of frames, at least one if any, all from one
     * segment (call again from the next offset). Each record's CRC, object and offset are checked.
     *
     * @return the records, empty when {@code from} is {@link #nextOffset()} or beyond
     * @throws ReplicaDamagedException if the replica is damaged, or a record fails its check now (the replica is then
     *     marked damaged and serves nothing more until a snapshot is installed)
     * @throws IllegalArgumentException if {@code from} is below {@link #startOffset()} (discarded: reseed)
     * @throws IOException if reading the segment fails
     */
    public List<LogRecord> read(long from, int maxBytes) throws IOException {
        // on the shard thread
        ReplicaState current = state;
        if (deleted) {
            throw new StorageException("replica deleted: object=" + objectId);
        }
        if (current.damaged()) {
            throw damagedException(current);
        }
        if (from < startOffset()) {
            throw belowStart(from, startOffset());
        }
        if (from >= nextOffset) {
            return List.of();
        }
        releaseWrittenChunks(); // before reading writtenThrough: a chunk given back holds nothing above it
        long written = segmentCursor.writtenThrough;
        if (from > written) {
            return AppendChunk.read(oldestChunk, from, maxBytes, appendChunk, appendPosition, nextOffset);
        }
        try {
            return chain.read(from, written, maxBytes, objectId, config.maxRecordBytes());
        } catch (SegmentChain.FailedCheck e) {
            markDamaged(e.getMessage());
            throw damagedException(state);
        }
    }

    // ---------------------------------------------------------------- control (shard thread)

    /**
     * Removes every record after {@code offset} (a divergent suffix), durably: the truncate record is journaled and
     * forced first, then the segments are cut, so the files never show a truncate the journal could lose. Blocks
     * the calling shard thread for one journal force; truncation is a recovery step, not the data path.
     *
     * @return the durable offset afterwards (at most {@code offset})
     * @throws IllegalArgumentException if {@code offset} is below {@link #startOffset()} - 1
     * @throws IllegalStateException if called on the journal writer thread (from a completion callback)
     * @throws ReplicaDamagedException if the replica is damaged, or cutting its files failed (it is then damaged)
     * @throws StorageException if the journal failed; the log is unchanged
     */
    public long truncateAfter(long offset) throws IOException {
        // on the shard thread
        storage.checkNotOnJournalThread();
        if (offset < startOffset() - 1) {
            throw belowStart(offset + 1, startOffset());
        }
        if (state.damaged()) {
            throw damagedException(state);
        }
        long end = Math.min(nextOffset - 1, offset);
        awaitDurable(submitControl(RecordType.TRUNCATE, 0, offset, EMPTY, end, end));
        try {
            if (offset < nextOffset - 1) {
                // records past the cut may still be on their way to the segment writer: let it take them in, so
                // that truncateFiles drops them
                storage.segmentWriter().awaitTakenIn();
                truncateFiles(offset);
                futures = futures.next(offset); // offsets after the cut now mean new records
            }
        } catch (IOException e) {
            markDamaged("truncate after " + offset + " failed: " + e);
            throw damagedException(state);
        } finally {
            pendingRewritePosition = Long.MAX_VALUE;
        }
        return durableOffset();
    }

    /**
     * Deletes whole segments all of whose records are below {@code offset} (retention); the active segment stays.
     *
     * @return completes with the new {@link #startOffset()} once the discard is durable
     */
    public CompletableFuture<Long> discardBefore(long offset) {
        // on the shard thread
        try {
            discardFiles(offset);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        return submitControl(RecordType.DISCARD, 0, offset, EMPTY, nextOffset - 1, startOffset());
    }

    /**
     * Seals {@code epoch}: from now on appends of epoch &lt;= it are refused. The seal is persisted (journal, then
     * state file at the next checkpoint) before the future completes.
     *
     * @return completes with the replica's reply once the seal is durable; exceptionally if the replica is damaged
     *     or the journal failed
     */
    public CompletableFuture<SealResult> seal(long epoch) {
        // on the shard thread
        ReplicaState current = state;
        if (current.damaged()) {
            return CompletableFuture.failedFuture(damagedException(current));
        }
        setState(current.withSealedEpoch(epoch));
        long sealedEpoch = state.sealedEpoch();
        long lastOffset = nextOffset - 1;
        long lastEpoch = state.history().lastEpoch();
        return submitControl(RecordType.SEAL, epoch, lastOffset, EMPTY, lastOffset, lastOffset)
                .thenApply(durable -> new SealResult(sealedEpoch, lastEpoch, lastOffset, durable));
    }

    /**
     * Replaces the replica's contents with a snapshot of the object at {@code offset} (a reseed): every segment is
     * deleted and the log continues from {@code offset + 1}. The snapshot file is written and forced, the switch is
     * journaled and forced, and only then are the segments reset. Blocks the calling shard thread for those forces.
     * Clears damage.
     *
     * @param history the epoch history through {@code offset}, taken from the copy the snapshot came from
     * @return the durable offset afterwards, {@code offset}
     * @throws IllegalStateException if called on the journal writer thread (from a completion callback)
     * @throws StorageException if writing the snapshot or the journal failed; the log is then unchanged
     */
    public long installSnapshot(long offset, EpochHistory history, ByteBuffer data) throws IOException {
        // on the shard thread
        storage.checkNotOnJournalThread();
        if (offset < -1) {
            throw new IllegalArgumentException("snapshot offset " + offset);
        }
        EpochHistory kept = history.truncateAfter(offset);
        long previous = state.snapshotOffset();
        SnapshotFile.write(directory, offset, kept, data);
        ByteBuffer payload = ByteBuffer.allocate(kept.encodedLength());
        kept.encode(payload);
        awaitDurable(submitControl(RecordType.SNAPSHOT, kept.lastEpoch(), offset, payload.flip(), offset, offset));
        try {
            storage.segmentWriter().awaitTakenIn(); // so that it holds nothing of the chunks given back here
            resetFiles(offset);
            setState(state.withSnapshot(offset, kept));
            futures = new AppendFutures(offset, Long.MAX_VALUE, null);
        } catch (IOException e) {
            markDamaged("installing snapshot " + offset + " failed: " + e);
            throw damagedException(state);
        } finally {
            pendingRewritePosition = Long.MAX_VALUE;
        }
        if (previous >= 0 && previous != offset) {
            SnapshotFile.deleteReplaced(directory, previous, objectId); // the new one is durable
        }
        return durableOffset();
    }

    void awaitDurable(CompletableFuture<Long> durable) throws StorageException {
        try {
            durable.join(); // uninterruptible: once journaled, the change must reach the files
        } catch (CompletionException e) {
            pendingRewritePosition = Long.MAX_VALUE;
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw cause instanceof StorageException storageException
                    ? storageException
                    : new StorageException("journal failed", cause);
        }
    }

    /**
     * The installed snapshot, read from its file.
     *
     * @throws ReplicaDamagedException if the snapshot file is missing or corrupt
     */
    public Optional<Snapshot> snapshot() throws IOException {
        long offset = state.snapshotOffset();
        if (offset < 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(SnapshotFile.readInstalled(directory, offset).snapshot());
        } catch (StorageException e) {
            markDamaged(e.getMessage());
            throw damagedException(state);
        }
    }

    CompletableFuture<Long> submitControl(
            RecordType type, long epoch, long offset, ByteBuffer payload, long endAfter, long result) {
        if (storage.closed()) {
            return CompletableFuture.failedFuture(new StorageException("storage closed"));
        }
        ByteBuffer frame = RecordDescriptor.encode(
                objectId, epoch, offset, config.epochMillis().getAsLong(), type, payload);
        ControlRecord entry = new ControlRecord(this, frame, type, endAfter, result, nextOffset - 1);
        CompletableFuture<Long> future = entry.future();
        storage.journal().submit(entry);
        return future;
    }

    // ---------------------------------------------------------------- file changes (shard or opening thread)

    void truncateFiles(long after) throws IOException {
        long next = after + 1;
        synchronized (files) {
            // records past the cut must never reach the files: out of the chain, and out of the writers' cursors
            cutChain(next);
            if (chain.truncateBefore(next)) {
                markDirectoryDirty();
            }
            active = chain.active();
            markDirty(active);
            nextOffset = active.nextOffset();
        }
        setState(state.withHistory(state.history().truncateAfter(after)));
    }

    void discardFiles(long before) throws IOException {
        if (!chain.canDiscard(before)) {
            return;
        }
        synchronized (files) {
            if (chain.discardBefore(before)) {
                markDirectoryDirty();
            }
        }
    }

    void resetFiles(long offset) throws IOException {
        synchronized (files) {
            clearChain(offset, offset); // the snapshot holds everything through offset
            chain.reset(offset + 1);
            active = chain.active();
            markDirectoryDirty();
            nextOffset = offset + 1;
        }
    }

    /**
     * Drops the records from {@code next} on from the chunk chain and moves the writers' cursors back to it. Under
     * {@code files}, with the writers not touching the replica: its truncate record was forced (so the journal writer
     * is done with everything before it) and the segment writer took in all it was handed.
     */
    private void cutChain(long next) {
        AppendChunk chunk = oldestChunk;
        if (chunk == null || next < chunk.firstOffset) {
            // everything held goes; everything before it is in the files
            clearChain(next - 1, Math.min(next - 1, segmentCursor.writtenThrough));
            return;
        }
        while (chunk != appendChunk && lastOffsetOf(chunk) < next) {
            chunk = chunk.next;
        }
        if (lastOffsetOf(chunk) < next) {
            return; // nothing to cut
        }
        int position = 0;
        for (long offset = chunk.firstOffset; offset < next; offset++) {
            position += chunk.buffer.getInt(position);
        }
        for (AppendChunk after = chunk.next; after != null; after = after.next) {
            after.release(pool);
        }
        chunk.limit = Integer.MAX_VALUE;
        chunk.next = null;
        appendChunk = chunk;
        appendPosition = position;
        appendedBytes = chunk.streamBase + position;
        knownWrittenBytes = Math.min(knownWrittenBytes, appendedBytes);
        journalCursor.cut(chunk, position, next - 1);
        long held = segmentCursor.held();
        segmentCursor.cut(chunk, position, next - 1);
        dropped(held - segmentCursor.held());
    }

    /**
     * Gives back every chunk and resets the writers' cursors to {@code last}, with the files holding everything through
     * {@code written}. Under {@code files}, as {@link #cutChain}.
     */
    private void clearChain(long last, long written) {
        for (AppendChunk chunk = oldestChunk; chunk != null; chunk = chunk.next) {
            chunk.release(pool);
        }
        oldestChunk = null;
        appendChunk = null;
        appendPosition = 0;
        journalCursor.reset(last, appendedBytes);
        dropped(segmentCursor.held());
        segmentCursor.reset(written, appendedBytes);
        knownWrittenBytes = appendedBytes;
    }

    /** Frees the store's accounting of records handed to the segment writer and now dropped unwritten. */
    private void dropped(long bytes) {
        SegmentWriter writer = storage.segmentWriter();
        if (bytes > 0 && writer != null) {
            writer.dropped(bytes);
        }
    }

    /**
     * Deletes every file of the replica and its directory; the replica takes nothing more. The caller made the
     * deletion durable in the journal first, and forces the parent directory after.
     */
    void deleteFiles() throws IOException {
        deleted = true;
        synchronized (files) {
            clearChain(nextOffset - 1, nextOffset - 1);
            chain.deleteAll();
        }
        DurableFiles.deleteDirectory(directory);
    }

    /** Marks the replica deleted at once: appends are refused from here on. */
    void markDeleted() {
        deleted = true;
    }

    /** Shard or segment writer: the segment has unforced writes. */
    void markDirty(Segment segment) {
        if (!segment.dirty) {
            segment.dirty = true;
            storage.markDirty(segment);
        }
    }

    /** Shard or segment writer: a file was created or deleted in the directory. */
    void markDirectoryDirty() {
        if (!directoryDirty) {
            directoryDirty = true;
            storage.markDirectoryDirty(this);
        }
    }

    /** Publishes a new state; shard (or the opening thread). */
    void setState(ReplicaState next) {
        state = next;
        cachedSealedEpoch = next.sealedEpoch();
        cachedLastEpoch = next.history().lastEpoch();
        cachedDamaged = next.damaged();
    }

    /** The last offset whose record is in its segment file; any thread. */
    long writtenThrough() {
        return segmentCursor.writtenThrough;
    }

    void markDamaged(String reason) {
        ReplicaState current = state;
        if (!current.damaged()) {
            setState(current.withDamage(reason));
            LOG.error("replica damaged: object={} reason={}", objectId, reason);
            storage.requestCheckpoint();
        }
    }

    // ---------------------------------------------------------------- state

    public long objectId() {
        return objectId;
    }

    Path directory() {
        return directory;
    }

    ReplicaState state() {
        return state;
    }

    /**
     * Retention by size: the first offset to keep so that the whole segments kept, the newest ones, hold at most {@code
     * maxBytes} of records; the active segment is always kept, however large. {@link #discardBefore} with it deletes
     * the older segments. {@link #startOffset()} when every segment fits. On the shard thread.
     */
    public long retainedStart(long maxBytes) {
        return chain.retainedStart(maxBytes);
    }

    /**
     * Retention by age: the first offset to keep so that only whole segments all of whose records were appended
     * before {@code timestampMillis} go, the oldest first; the active segment is always kept. Reads the last record of
     * each segment that goes, and of one more. On the shard thread.
     *
     * @throws IOException if reading a record fails
     */
    public long retainedStartByAge(long timestampMillis) throws IOException {
        return chain.retainedStartByAge(timestampMillis, this::timestampAt);
    }

    /** The timestamp of the record at {@code offset}, {@link Long#MAX_VALUE} when there is none. */
    private long timestampAt(long offset) throws IOException {
        List<LogRecord> records = read(offset, 1);
        return records.isEmpty() ? Long.MAX_VALUE : records.getFirst().timestamp();
    }

    /** The first offset held; records below it were discarded or replaced by a snapshot. */
    public long startOffset() {
        return chain.startOffset();
    }

    /** The offset the next append gets. */
    public long nextOffset() {
        return nextOffset;
    }

    /** The last offset held, {@code startOffset() - 1} when the log is empty. Any thread (volatile read). */
    public long lastOffset() {
        return nextOffset - 1;
    }

    /**
     * The last offset whose record, and every one before it, is durable. Any thread (volatile reads); on the shard
     * thread never above {@link #lastOffset()}.
     */
    public long durableOffset() {
        return Math.min(journalCursor.durableOffset, nextOffset - 1);
    }

    /** The sealed epoch, -1 when never sealed. */
    public long sealedEpoch() {
        return state.sealedEpoch();
    }

    public EpochHistory epochHistory() {
        return state.history();
    }

    /** Whether the replica is damaged and must be reseeded. Any thread (volatile read). */
    public boolean damaged() {
        return state.damaged();
    }

    /** Why the replica is damaged, if it is. */
    public Optional<String> damage() {
        ReplicaState current = state;
        return current.damaged() ? Optional.of(current.damage()) : Optional.empty();
    }

    /**
     * Registers the listener that hears of this replica's durability once per journal batch (see {@link
     * DurabilityListener}); replaces the previous one, {@code null} removes it. The cheap alternative to a future per
     * append. Any thread (volatile write); takes effect for the next batch reported.
     */
    public void durabilityListener(DurabilityListener listener) {
        durabilityListener = listener;
    }

    /** Whether an append failed in the journal; cleared by {@link #truncateAfter} at or below the durable offset. */
    public boolean failed() {
        return journalFailed;
    }

    /** Segment files, oldest first; for tests and tools. */
    List<Path> segmentFiles() {
        return chain.paths();
    }

    void closeFiles() throws IOException {
        chain.closeAll();
    }

    private ReplicaDamagedException damagedException(ReplicaState current) {
        return new ReplicaDamagedException(objectId, current.damage());
    }

    private static IllegalArgumentException belowStart(long offset, long start) {
        return new IllegalArgumentException(
                "offset " + offset + " is below the log start " + start + ": the replica must be reseeded");
    }

    private static IllegalArgumentException notALogRecord(RecordType type) {
        return new IllegalArgumentException(type + " is a control record, not a log record");
    }
}
