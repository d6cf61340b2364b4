package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One data directory: its journal, the replicas whose logs live in it, checkpoints and crash recovery.
 *
 * <pre>
 *  &lt;data dir&gt;/lock                          held while open
 *  &lt;data dir&gt;/checkpoint                    journal position replay starts from; per replica, its synced offset
 *  &lt;data dir&gt;/journal/&lt;start&gt;.journal       write-ahead journal, frames of every replica, group-committed
 *  &lt;data dir&gt;/replicas/&lt;object id hex&gt;/state                   sealed epoch, epoch history, snapshot, damage
 *  &lt;data dir&gt;/replicas/&lt;object id hex&gt;/&lt;base offset&gt;.segment   the replica's records
 *  &lt;data dir&gt;/replicas/&lt;object id hex&gt;/&lt;offset&gt;.snapshot        an installed snapshot
 * </pre>
 *
 * <p>{@link #open} recovers before it returns: it scans every segment and cuts a torn tail, cuts each replica back to
 * the prefix nothing since the last checkpoint changed, replays the journal over it (idempotent by offset), declares
 * replicas damaged where checkpointed data is gone, then checkpoints, so everything it serves afterwards is
 * durable. {@link JournalReplay} reads the journal, {@link ReplicaReplay} rebuilds each replica.
 *
 * <p>Implementation notes. Five kinds of thread touch a store. Shard threads call {@link #replica} and everything on
 * a {@link ReplicaLog} (each replica owned by one shard); an append makes no file system call. The journal writer
 * ({@code ganglion-journal-*}) does group commit. The segment writer ({@code ganglion-segments-*}) writes records to
 * their segment files behind it. The completer ({@code ganglion-durable-*}) completes futures and calls durability
 * listeners. The background thread ({@code ganglion-storage-*}) runs checkpoints and preallocates journal files.
 * {@link #checkpointNow} and the file removal of {@link #deleteReplica} are synchronized on the store, so they never
 * overlap; nothing else takes that monitor ({@link #refreshAppendRefusal} has its own lock, as the segment writer
 * calls it while a checkpoint waits for it). Shared sets {@code dirtySegments} and {@code dirtyDirectories} are filled
 * by shards and the segment writer and drained by checkpoints.
 */
public final class Storage implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Storage.class);
    static final String JOURNAL = "journal";
    static final String REPLICAS = "replicas";

    private final Path directory;
    private final Path journalDirectory;
    private final Path replicasDirectory;
    private final StorageConfig config;
    private final FileIo io;
    private final ConcurrentHashMap<Long, ReplicaLog> replicas = new ConcurrentHashMap<>();
    private final AppendChunk.Pool chunkPool;
    /** Replicas whose deletion is journaled but whose files may not all be gone; checkpoints must not pass it. */
    private final ConcurrentHashMap<Long, ReplicaLog> deleting = new ConcurrentHashMap<>();

    private final Set<Segment> dirtySegments = ConcurrentHashMap.newKeySet();
    private final Set<ReplicaLog> dirtyDirectories = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean checkpointPending = new AtomicBoolean();
    private final AtomicLong checkpoints = new AtomicLong();
    private final AtomicLong checkpointForces = new AtomicLong();
    private final Object creationLock = new Object();
    private final Object refusalLock = new Object();
    private volatile boolean replicasDirectoryDirty;
    private volatile boolean closed;
    /** Why every append is refused now, or null; one field that rarely changes, read by every append. */
    private volatile AppendOutcome appendRefusal;

    private FileChannel lockChannel;
    private FileLock lock;
    private ExecutorService background;
    private JournalWriter journal;
    /** The journal writer's queue, read by every append: here, where nothing is written on the hot path. */
    private JournalQueue journalQueue;

    private Thread journalThread;
    private SegmentWriter segmentWriter;
    private Thread segmentWriterThread;
    private Completer completer;
    private Thread completerThread;

    /** Recovery only: journal files kept for the journal writer to reuse. */
    private final List<Path> reusable = new ArrayList<>();

    private Storage(Path directory, StorageConfig config, FileIo io) {
        this.directory = directory;
        this.journalDirectory = directory.resolve(JOURNAL);
        this.replicasDirectory = directory.resolve(REPLICAS);
        this.config = config;
        this.io = io;
        // as much as the journal lets the segment writer fall behind: a store that once got there keeps the memory,
        // as a heap would, instead of allocating (and zeroing) it again in the next burst
        this.chunkPool = new AppendChunk.Pool(config.maxWriteBehindBytes() / 2);
    }

    /**
     * Opens (creating if needed) and recovers a data directory, and starts its journal writer.
     *
     * @throws StorageException if another process holds the directory, or its checkpoint file is malformed
     * @throws IOException if recovery cannot read or write the files
     */
    public static Storage open(Path directory, StorageConfig config) throws IOException {
        return open(directory, config, FileIo.DEFAULT);
    }

    static Storage open(Path directory, StorageConfig config, FileIo io) throws IOException {
        Storage storage = new Storage(directory, config, io);
        try {
            long end = storage.recover();
            storage.start(end);
            return storage;
        } catch (IOException | RuntimeException e) {
            storage.releaseAfterFailedOpen();
            throw e;
        }
    }

    // ---------------------------------------------------------------- recovery (opening thread)

    private long recover() throws IOException {
        Files.createDirectories(journalDirectory);
        Files.createDirectories(replicasDirectory);
        lockDirectory();
        CheckpointFile.Checkpoint checkpoint = CheckpointFile.read(directory).orElse(CheckpointFile.Checkpoint.INITIAL);
        JournalReplay replay = new JournalReplay(this, directory, replicas);
        long end = replay.replay(checkpoint);
        checkpointNow(end);
        reusable.addAll(replay.keepJournalFilesForReuse());
        DurableFiles.forceDirectory(journalDirectory);
        LOG.info(
                "storage recovered: dir={} replicas={} journalPosition={} damaged={}",
                directory,
                replicas.size(),
                end,
                replicas.values().stream().filter(ReplicaLog::damaged).count());
        return end;
    }

    private void start(long journalPosition) throws IOException {
        String name = directory.getFileName().toString();
        background = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "ganglion-storage-" + name);
            thread.setDaemon(true);
            return thread;
        });
        segmentWriter = new SegmentWriter(directory.toString(), config, this);
        completer = new Completer(directory.toString());
        journal = new JournalWriter(
                journalDirectory,
                journalPosition,
                config,
                io,
                this::requestCheckpoint,
                this::requestSpare,
                this::refreshAppendRefusal,
                segmentWriter,
                completer);
        journalQueue = journal.queue();
        reusable.forEach(journal::keepForReuse);
        reusable.clear();
        if (config.preallocateJournal()) {
            journal.prepareSpare(); // open is not latency-critical: start on a preallocated file too
        }
        journal.openFirstFile();
        if (config.preallocateJournal()) {
            // the files the journal rolls into before its first checkpoint frees any: zeros now, not under load
            runInBackground(() -> {
                try {
                    journal.fillReusePool();
                } catch (IOException e) {
                    LOG.warn("preallocating journal files failed: dir={}", directory, e);
                }
            });
        }
        segmentWriterThread = new Thread(segmentWriter, "ganglion-segments-" + name);
        segmentWriterThread.setDaemon(true);
        segmentWriterThread.start();
        completerThread = new Thread(completer, "ganglion-durable-" + name);
        completerThread.setDaemon(true);
        completerThread.start();
        journalThread = new Thread(journal, "ganglion-journal-" + name);
        journalThread.setDaemon(true);
        journalThread.start();
    }

    private void lockDirectory() throws IOException {
        lockChannel = FileChannel.open(directory.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            lock = lockChannel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            throw new StorageException("data directory is in use by another store: " + directory);
        }
    }

    // ---------------------------------------------------------------- replicas (any thread)

    /**
     * The replica of {@code objectId}, created empty if this directory has none. Any thread; the returned replica is
     * then used by one shard thread.
     *
     * @throws StorageException if the store is closed
     */
    public ReplicaLog replica(long objectId) throws IOException {
        ReplicaLog existing = replicas.get(objectId);
        if (existing != null) {
            return existing;
        }
        synchronized (creationLock) {
            existing = replicas.get(objectId);
            if (existing != null) {
                return existing;
            }
            if (closed) {
                throw new StorageException("storage closed: " + directory);
            }
            ReplicaLog created =
                    ReplicaLog.create(this, objectId, replicasDirectory.resolve(ReplicaLog.directoryName(objectId)));
            replicas.put(objectId, created);
            return created;
        }
    }

    /** The replica of {@code objectId} if this directory holds one. */
    public Optional<ReplicaLog> existingReplica(long objectId) {
        return Optional.ofNullable(replicas.get(objectId));
    }

    /**
     * Deletes the replica of {@code objectId} and frees its disk: a {@code DELETE} record is journaled and forced
     * first, then every file of the replica and its directory are deleted and the directory removal is forced. A
     * crash at any point after the force finishes the deletion on the next open (replay deletes again); a checkpoint
     * does not pass the record until the files are durably gone, so the replay never resurrects the replica.
     *
     * <p>Appends to the replica are refused ({@link AppendOutcome.Reason#DELETED}) from the call on, and its reads
     * fail. Afterwards {@link #replica} creates a new, empty replica for the same object id. Blocks the caller for one
     * journal force; call it from the shard that owned the replica, or once no shard uses it, never from a durability
     * callback.
     *
     * @return false if the directory holds no replica of {@code objectId}, or another thread is deleting it
     * @throws IllegalStateException if called on the journal writer thread
     * @throws StorageException if the journal failed (the replica is then still there, but refuses appends) or the
     *     files could not be deleted (the next open deletes them)
     */
    public boolean deleteReplica(long objectId) throws IOException {
        ReplicaLog replica = replicas.get(objectId);
        if (replica == null) {
            return false;
        }
        checkNotOnJournalThread();
        if (!deletionsRunning.add(objectId)) {
            return false; // another thread is deleting it
        }
        try {
            return delete(objectId, replica);
        } finally {
            deletionsRunning.remove(objectId);
        }
    }

    private boolean delete(long objectId, ReplicaLog replica) throws IOException {
        if (replicas.get(objectId) != replica) {
            return false; // deleted meanwhile
        }
        replica.markDeleted();
        replica.awaitDurable(replica.submitControl(RecordType.DELETE, 0, 0, ByteBuffer.allocate(0), -1, -1));
        segmentWriter.awaitTakenIn(); // so that it holds nothing of the replica's chunks, which go now
        synchronized (this) { // no checkpoint runs while the files go
            synchronized (creationLock) {
                replicas.remove(objectId, replica);
                deleting.put(objectId, replica);
            }
            replica.deleteFiles();
            DurableFiles.forceDirectory(replicasDirectory);
            deleting.remove(objectId, replica); // durably gone: checkpoints may pass the record now
        }
        LOG.info("replica deleted: dir={} object={}", directory, objectId);
        return true;
    }

    /** Object ids whose {@link #deleteReplica} runs now: a second call for one returns false at once. */
    private final Set<Long> deletionsRunning = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Object ids of every replica in this directory. */
    public Set<Long> objectIds() {
        return Set.copyOf(replicas.keySet());
    }

    // ---------------------------------------------------------------- checkpoints

    /** Runs a checkpoint on the background thread. */
    public CompletableFuture<Void> checkpoint() {
        return CompletableFuture.runAsync(
                () -> {
                    try {
                        checkpointNow(journal.forcedPosition());
                    } catch (IOException e) {
                        throw new CompletionException(e);
                    }
                },
                background);
    }

    void requestCheckpoint() {
        if (background != null && !closed && checkpointPending.compareAndSet(false, true)) {
            runInBackground(() -> {
                checkpointPending.set(false);
                try {
                    checkpointNow(journal.forcedPosition());
                } catch (IOException e) {
                    LOG.error("checkpoint failed, journal files kept: dir={}", directory, e);
                }
            });
        }
    }

    private void requestSpare() {
        if (!closed) {
            runInBackground(() -> {
                try {
                    journal.prepareSpare();
                } catch (IOException e) {
                    LOG.warn("preallocating a journal file failed: dir={}", directory, e);
                }
            });
        }
    }

    private void runInBackground(Runnable task) {
        try {
            background.execute(task);
        } catch (RejectedExecutionException e) {
            // closing: the final checkpoint covers what this one would have done
        }
    }

    /**
     * Forces every dirty segment and directory, writes changed state files and the checkpoint file at {@code
     * position}, then deletes journal files wholly behind it. Every journal frame before {@code position} was handed
     * to the segment writer before that position was published, and the segment writer writes all it was handed
     * before the segments are forced, so the forced segments hold all of it.
     */
    synchronized void checkpointNow(long forcedPosition) throws IOException {
        long began = System.nanoTime();
        List<ReplicaLog> all = new ArrayList<>(replicas.values());
        long position = forcedPosition;
        for (ReplicaLog replica : all) {
            // a truncate or snapshot journaled but not yet applied to the files must stay in the replayed journal
            position = Math.min(position, replica.pendingRewritePosition);
        }
        for (ReplicaLog replica : deleting.values()) {
            position = Math.min(position, replica.pendingRewritePosition); // so must a deletion not yet done
        }
        if (segmentWriter != null) {
            awaitSegmentWrites();
        }
        Map<Long, Long> synced = new HashMap<>();
        for (ReplicaLog replica : all) {
            synced.put(replica.objectId(), replica.writtenThrough()); // read before forcing: all of it gets forced
        }
        long forced = 0;
        for (Iterator<Segment> it = dirtySegments.iterator(); it.hasNext(); ) {
            Segment segment = it.next();
            it.remove();
            segment.dirty = false;
            try {
                segment.force();
                forced++;
            } catch (ClosedChannelException e) {
                // deleted by its replica since: the deletion is in the journal and in a dirty directory
            }
        }
        for (Iterator<ReplicaLog> it = dirtyDirectories.iterator(); it.hasNext(); ) {
            ReplicaLog replica = it.next();
            it.remove();
            replica.directoryDirty = false;
            try {
                DurableFiles.forceDirectory(replica.directory());
                forced++;
            } catch (NoSuchFileException e) {
                // nothing to make durable
            }
        }
        if (replicasDirectoryDirty) {
            replicasDirectoryDirty = false;
            DurableFiles.forceDirectory(replicasDirectory);
            forced++;
        }
        for (ReplicaLog replica : all) {
            ReplicaState state = replica.state();
            if (state != replica.persisted) {
                ReplicaStateFile.write(replica.directory(), state);
                replica.persisted = state;
                forced += 2;
            }
        }
        CheckpointFile.write(directory, new CheckpointFile.Checkpoint(position, synced));
        forced += 2;
        if (journal != null) {
            journal.deleteFilesBefore(position);
        }
        checkpoints.incrementAndGet();
        checkpointForces.addAndGet(forced);
        LOG.info(
                "event=checkpoint dir={} position={} forces={} ms={}",
                directory,
                position,
                forced,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
    }

    /** Waits until the segment writer wrote everything the journal handed it so far. */
    void awaitSegmentWrites() throws IOException {
        try {
            segmentWriter.flushAll().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageException("interrupted while waiting for segment writes: " + directory, e);
        } catch (ExecutionException e) {
            throw new StorageException("segment writes failed, journal kept: " + directory, e.getCause());
        }
    }

    void markDirty(Segment segment) {
        dirtySegments.add(segment);
    }

    /** Why every append is refused now, or null. Any thread. */
    AppendOutcome appendRefusal() {
        return appendRefusal;
    }

    /** Recomputes {@link #appendRefusal()}; called by whoever changed one of its inputs. */
    void refreshAppendRefusal() {
        synchronized (refusalLock) { // not the store's monitor: checkpoints hold that while they wait for the writer
            appendRefusal = computeAppendRefusal();
        }
    }

    private AppendOutcome computeAppendRefusal() {
        IOException segmentFailure = segmentWriter == null ? null : segmentWriter.failure();
        AppendOutcome refusal;
        if (closed || (journal != null && journal.failure() != null)) {
            refusal = AppendOutcome.Rejected.of(AppendOutcome.Reason.CLOSED);
        } else if (segmentFailure != null) {
            refusal = new AppendOutcome.Failed(segmentFailure);
        } else {
            refusal = null;
        }
        return refusal;
    }

    void markDirectoryDirty(ReplicaLog replica) {
        dirtyDirectories.add(replica);
    }

    void markReplicasDirectoryDirty() {
        replicasDirectoryDirty = true;
    }

    // ---------------------------------------------------------------- accessors

    /** The store's clock now: the one its records' timestamps come from ({@link StorageConfig#epochMillis()}). */
    public long nowMillis() {
        return config.epochMillis().getAsLong();
    }

    StorageConfig config() {
        return config;
    }

    FileIo io() {
        return io;
    }

    AppendChunk.Pool chunkPool() {
        return chunkPool;
    }

    JournalWriter journal() {
        return journal;
    }

    JournalQueue journalQueue() {
        return journalQueue;
    }

    SegmentWriter segmentWriter() {
        return segmentWriter;
    }

    /** Truncate, snapshot install and delete wait for the journal: refused on its threads (durability callbacks). */
    void checkNotOnJournalThread() {
        Thread current = Thread.currentThread();
        if (current == journalThread || current == completerThread) {
            throw new IllegalStateException(
                    "truncate, snapshot install and delete wait for the journal: not from a durability callback");
        }
    }

    boolean closed() {
        return closed;
    }

    public Path directory() {
        return directory;
    }

    /** Journal forces (fsyncs) so far: one per batch, plus one per journal file roll. */
    public long journalForces() {
        return journal.forces();
    }

    /** Journal batches written and forced so far. */
    public long journalBatches() {
        return journal.batches();
    }

    /** Times the journal writer waited out its group commit interval before a batch (see StorageConfig). */
    public long journalGroupCommitWaits() {
        return journal.groupCommitWaits();
    }

    /** Journal bytes written and forced so far. */
    public long journalBytes() {
        return journal.bytes();
    }

    /** Write calls the segment writer made so far (each carries many records under load). */
    public long segmentWrites() {
        return segmentWriter.writes();
    }

    /** Journal files reused from behind a checkpoint so far, instead of new files filled with zeros. */
    public long journalFilesReused() {
        return journal.reusedFiles();
    }

    /** Journal entries (records and control records) made durable so far. */
    public long journalEntries() {
        return journal.entries();
    }

    public long checkpoints() {
        return checkpoints.get();
    }

    /** Forces done by checkpoints so far: segments, directories, state and checkpoint files. */
    public long checkpointForces() {
        return checkpointForces.get();
    }

    /** Why the journal stopped for good, if it did; the store must then be reopened. */
    public Optional<StorageException> failure() {
        return Optional.ofNullable(journal.failure());
    }

    // ---------------------------------------------------------------- close

    /**
     * Lets the journal writer finish what is queued, checkpoints (unless the journal failed), and closes every file.
     * Appends after close are refused with {@link AppendOutcome.Reason#CLOSED}.
     */
    @Override
    public void close() throws IOException {
        shutDown(true);
    }

    /** Stops like a crash after the last force: no checkpoint, journal left for replay. For tests. */
    void halt() throws IOException {
        shutDown(false);
    }

    private void shutDown(boolean checkpointFirst) throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        appendRefusal = AppendOutcome.Rejected.of(AppendOutcome.Reason.CLOSED);
        journal.stop();
        try {
            journalThread.join();
            journal.failRemaining(new StorageException("storage closed: " + directory));
            if (checkpointFirst && journal.failure() == null) {
                background
                        .submit(() -> {
                            checkpointNow(journal.forcedPosition());
                            return null;
                        })
                        .get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageException("interrupted while closing " + directory, e);
        } catch (ExecutionException e) {
            throw new StorageException("final checkpoint failed: " + directory, e.getCause());
        } finally {
            segmentWriter.stop(); // writes what it still holds first: a halt leaves the page cache as a crash would
            completer.stop(); // reports what is queued first
            try {
                segmentWriterThread.join();
                completerThread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            background.shutdown();
            try {
                background.awaitTermination(1, TimeUnit.MINUTES);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            // the spare and the files kept for reuse stay: the next open keeps them for reuse too
            for (ReplicaLog replica : replicas.values()) {
                replica.closeFiles();
            }
            releaseLock();
        }
    }

    private void releaseAfterFailedOpen() {
        closed = true;
        for (ReplicaLog replica : replicas.values()) {
            try {
                replica.closeFiles();
            } catch (IOException e) {
                LOG.warn("closing replica files failed: object={}", replica.objectId(), e);
            }
        }
        if (background != null) {
            background.shutdown();
        }
        try {
            releaseLock();
        } catch (IOException e) {
            LOG.warn("releasing the directory lock failed: dir={}", directory, e);
        }
    }

    private void releaseLock() throws IOException {
        if (lock != null) {
            lock.release();
        }
        if (lockChannel != null) {
            lockChannel.close();
        }
    }
}
