package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
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
import java.util.TreeMap;
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
 * durable.
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
    /** Recovery only: the replay of each replica recovered, by object id; emptied once recovery ends. */
    private final Map<Long, ReplicaReplay> replays = new HashMap<>();
    /** Recovery only: objects whose deletion the journal holds, and those the replay has deleted so far. */
    private final Set<Long> deletedInJournal = new java.util.HashSet<>();

    private CheckpointFile.Checkpoint recoveredCheckpoint = CheckpointFile.Checkpoint.INITIAL;
    /** Recovery only: per journal file (by start position), where its last whole run ends. */
    private final Map<Long, Long> journalRunEnds = new HashMap<>();
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
        recoveredCheckpoint = checkpoint;
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(replicasDirectory)) {
            for (Path replicaDirectory : stream) {
                long objectId =
                        Long.parseUnsignedLong(replicaDirectory.getFileName().toString(), 16);
                recoverReplica(objectId, checkpoint);
            }
        }
        // pass 1: where does the journal rewrite each replica? Everything below that and the synced offset is
        // untouched since the checkpoint; everything above it that is durable is in the journal
        Map<Long, Long> lowestRewrite = new HashMap<>();
        long end = scanJournal(checkpoint, (buffer, at) -> noteRewrite(buffer, at, lowestRewrite));
        for (long objectId : checkpoint.syncedThrough().keySet()) {
            // a deleted replica's directory is gone by design; the replay deletes whatever is left of it
            if (!replicas.containsKey(objectId) && !deletedInJournal.contains(objectId)) {
                LOG.error("replica directory missing: object={}", objectId);
                recoverReplica(objectId, checkpoint);
            }
        }
        deletedInJournal.clear(); // from here: the objects the replay has deleted so far
        for (ReplicaReplay replay : replays.values()) {
            replay.prepare(lowestRewrite.getOrDefault(replay.objectId(), Long.MAX_VALUE));
        }
        // pass 2: replay exactly over that stable prefix
        scanJournal(checkpoint, this::replayFrame);
        for (ReplicaReplay replay : replays.values()) {
            replay.finish();
        }
        replays.clear();
        checkpointNow(end);
        keepJournalFilesForReuse();
        DurableFiles.forceDirectory(journalDirectory);
        LOG.info(
                "storage recovered: dir={} replicas={} journalPosition={} damaged={}",
                directory,
                replicas.size(),
                end,
                replicas.values().stream().filter(ReplicaLog::damaged).count());
        return end;
    }

    /**
     * The file position where the last whole run of a journal file ends (see RecordDescriptor, "Journal runs"),
     * reading from {@code from}. The run {@code from} falls in was forced before the checkpoint that points into it was
     * written, so its commit frame only has to name a start at or before {@code from}; every later run must match its
     * commit frame exactly.
     */
    private long endOfRuns(FileChannel channel, long fileStart, long from) throws IOException {
        long[] run = {fileStart + from, 0, 0, from}; // start, frames, CRC sum, end of the last whole run
        FrameScanner.scan(channel, from, config.maxRecordBytes(), (buffer, at, filePosition) -> {
            if (RecordDescriptor.type(buffer, at) != RecordType.COMMIT) {
                run[1]++;
                run[2] += RecordDescriptor.crcField(buffer, at);
                return true;
            }
            boolean whole = RecordDescriptor.commitMatches(buffer, at, run[0], run[1], (int) run[2])
                    || (run[3] == from
                            && from > 0
                            && RecordDescriptor.offset(buffer, at) < run[0]
                            && RecordDescriptor.offset(buffer, at) >= fileStart);
            if (!whole) {
                return false;
            }
            run[3] = filePosition + RecordDescriptor.COMMIT_LENGTH;
            run[0] = fileStart + run[3];
            run[1] = 0;
            run[2] = 0;
            return true;
        });
        return run[3];
    }

    /** Opens a replica's files for its replay; its log is one of {@link #replicas} from here (closed on a failure). */
    private ReplicaReplay recoverReplica(long objectId, CheckpointFile.Checkpoint checkpoint) throws IOException {
        Path replicaDirectory = replicasDirectory.resolve(ReplicaLog.directoryName(objectId));
        Files.createDirectories(replicaDirectory);
        ReplicaReplay replay = ReplicaReplay.open(
                this, objectId, replicaDirectory, checkpoint.syncedThrough().getOrDefault(objectId, -1L));
        replays.put(objectId, replay);
        replicas.put(objectId, replay.log());
        return replay;
    }

    /**
     * After recovery every file of the journal directory is behind the checkpoint: keeps up to {@link
     * JournalWriter#MAX_RECYCLED} + 1 whole preallocated ones (the next file and the pool) as {@code reuse-<i>.tmp},
     * so a restarted store fills no new journal file with zeros, and deletes the rest.
     */
    private void keepJournalFilesForReuse() throws IOException {
        int keep = config.preallocateJournal() ? JournalWriter.MAX_RECYCLED + 1 : 0;
        List<Path> whole = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(journalDirectory)) {
            for (Path file : stream) {
                if (whole.size() < keep && Files.size(file) == config.journalFileBytes()) {
                    whole.add(file);
                } else {
                    Files.delete(file);
                }
            }
        }
        for (int i = 0; i < whole.size(); i++) {
            Path target = journalDirectory.resolve("reuse-" + i + ".tmp");
            if (!whole.get(i).equals(target)) {
                // a kept file may hold the name; it is renamed itself in its turn, so go through a name of its own
                Path aside = journalDirectory.resolve(
                        "reuse-" + i + "-" + whole.get(i).getFileName() + ".aside");
                Files.move(whole.get(i), aside, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                whole.set(i, aside);
            }
        }
        for (int i = 0; i < whole.size(); i++) {
            Path target = journalDirectory.resolve("reuse-" + i + ".tmp");
            if (!whole.get(i).equals(target)) {
                Files.move(whole.get(i), target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
            reusable.add(target);
        }
    }

    /** Receives each good journal frame during recovery; returns false to refuse it as corrupt. */
    @FunctionalInterface
    private interface JournalVisitor {
        boolean frame(ByteBuffer buffer, int at) throws IOException;
    }

    /**
     * Reads the journal from the checkpoint position, file by file, stopping at the first frame that is not whole
     * and intact (a torn tail) or at a file that does not start where the previous one ended. Cuts the journal there,
     * so a second pass stops at the same place.
     *
     * @return the journal position after the last good frame
     */
    private long scanJournal(CheckpointFile.Checkpoint checkpoint, JournalVisitor visitor) throws IOException {
        TreeMap<Long, Path> files = new TreeMap<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(journalDirectory, "*" + JournalWriter.SUFFIX)) {
            for (Path file : stream) {
                String name = file.getFileName().toString();
                files.put(Long.parseLong(name.substring(0, name.length() - JournalWriter.SUFFIX.length())), file);
            }
        }
        long position = checkpoint.journalPosition();
        int frames = 0;
        for (var file : files.entrySet()) {
            long start = file.getKey();
            long size = Files.size(file.getValue());
            if (start < position && start + size <= position) {
                continue; // wholly behind the checkpoint
            }
            if (start > position) {
                LOG.warn(
                        "journal file does not continue the journal: dir={} expected={} found={}",
                        directory,
                        position,
                        start);
                break;
            }
            try (FileChannel channel =
                    FileChannel.open(file.getValue(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                // what follows the last whole run is zeros, a reused file's old frames or a torn write: never read
                Long known = journalRunEnds.get(start); // pass 2 reads up to where pass 1 found the last whole run
                long runsEnd = known != null ? known : endOfRuns(channel, start, position - start);
                journalRunEnds.put(start, runsEnd);
                int[] count = {0};
                FrameScanner.Result result = FrameScanner.scan(
                        channel, position - start, runsEnd, config.maxRecordBytes(), (buffer, at, filePosition) -> {
                            if (RecordDescriptor.type(buffer, at) == RecordType.COMMIT) {
                                return true;
                            }
                            count[0]++;
                            return visitor.frame(buffer, at);
                        });
                frames += count[0];
                position = start + result.end();
                if (result.stop() == FrameScanner.Stop.TRUNCATED || result.stop() == FrameScanner.Stop.CORRUPT) {
                    LOG.warn(
                            "journal cut at first bad record: file={} position={} stop={} bytesAfter={}",
                            file.getValue().getFileName(),
                            position,
                            result.stop(),
                            size - result.end());
                    // nothing after a bad frame may ever be replayed, even if this open stops before it checkpoints
                    channel.truncate(result.end());
                    channel.force(true);
                    break;
                }
            }
        }
        LOG.info(
                "journal scanned: dir={} from={} to={} records={}",
                directory,
                checkpoint.journalPosition(),
                position,
                frames);
        return position;
    }

    private boolean noteRewrite(ByteBuffer buffer, int at, Map<Long, Long> lowest) throws IOException {
        long objectId = RecordDescriptor.objectId(buffer, at);
        RecordType type = RecordDescriptor.type(buffer, at);
        if (type == RecordType.DELETE) {
            deletedInJournal.add(objectId);
            return true;
        }
        replicaForReplay(objectId);
        if (type == RecordType.SNAPSHOT && snapshotHistory(buffer, at) == null) {
            return false; // refused here exactly as the replay refuses it
        }
        if (type == RecordType.TRUNCATE || type == RecordType.SNAPSHOT) {
            lowest.merge(objectId, RecordDescriptor.offset(buffer, at), Math::min);
        }
        return true;
    }

    /**
     * The replica a journal record belongs to, recovered from its directory when first seen. After a replayed
     * deletion the object starts anew: nothing of it was ever synced.
     */
    private ReplicaReplay replicaForReplay(long objectId) throws IOException {
        ReplicaReplay replay = replays.get(objectId);
        if (replay == null) {
            replay = recoverReplica(
                    objectId,
                    deletedInJournal.contains(objectId) ? CheckpointFile.Checkpoint.INITIAL : recoveredCheckpoint);
        }
        return replay;
    }

    /** The epoch history in a snapshot record, or null if its payload is malformed. */
    private static EpochHistory snapshotHistory(ByteBuffer buffer, int at) {
        try {
            return EpochHistory.decode(RecordDescriptor.payload(buffer, at));
        } catch (RuntimeException e) {
            return null;
        }
    }

    private boolean replayFrame(ByteBuffer buffer, int at) throws IOException {
        long objectId = RecordDescriptor.objectId(buffer, at);
        long offset = RecordDescriptor.offset(buffer, at);
        long epoch = RecordDescriptor.epoch(buffer, at);
        RecordType type = RecordDescriptor.type(buffer, at);
        if (type == RecordType.DELETE) {
            replayDelete(objectId);
            return true;
        }
        ReplicaReplay replay = replicaForReplay(objectId);
        switch (type) {
            case DATA, EPOCH_START ->
                replay.record(buffer.slice(at, RecordDescriptor.frameLength(buffer, at)), offset, epoch);
            case TRUNCATE -> replay.truncate(offset);
            case DISCARD -> replay.discard(offset);
            case SEAL -> replay.seal(epoch);
            case SNAPSHOT -> {
                EpochHistory history = snapshotHistory(buffer, at);
                if (history == null) {
                    return false;
                }
                replay.snapshot(offset, history);
            }
            case DELETE -> throw new IllegalStateException("handled above");
        }
        return true;
    }

    /** Finishes a journaled deletion: whatever is left of the replica's files goes, durably. */
    private void replayDelete(long objectId) throws IOException {
        deletedInJournal.add(objectId);
        replays.remove(objectId);
        ReplicaLog replica = replicas.remove(objectId);
        if (replica != null) {
            replica.deleteFiles();
        } else {
            DurableFiles.deleteDirectory(replicasDirectory.resolve(ReplicaLog.directoryName(objectId)));
        }
        DurableFiles.forceDirectory(replicasDirectory);
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
