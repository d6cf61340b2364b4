package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovery of a data directory on open, after the store locked it and read its checkpoint: opens every replica (see
 * {@link ReplicaReplay}), reads the journal from the checkpoint position twice and rebuilds each replica from it.
 * Pass 1 finds where the journal ends (its last whole run, see RecordDescriptor, "Journal runs") and the lowest
 * truncate or snapshot point of each replica; each replica is then cut to its stable prefix, and pass 2 replays the
 * journal over it exactly. The store then checkpoints at the end found and keeps journal files for reuse.
 *
 * <p>On the opening thread only. The replicas' logs go into the store's map as they are opened, so a failed open
 * closes them; a replayed deletion takes its replica out again.
 */
final class JournalReplay {
    private static final Logger LOG = LoggerFactory.getLogger(JournalReplay.class);

    private final Storage storage;
    private final Path directory;
    private final Path journalDirectory;
    private final Path replicasDirectory;
    private final StorageConfig config;
    private final Map<Long, ReplicaLog> replicas;

    /** The replay of each replica recovered, by object id. */
    private final Map<Long, ReplicaReplay> replays = new HashMap<>();
    /** Objects whose deletion the journal holds (pass 1), then those the replay has deleted so far (pass 2). */
    private final Set<Long> deletedInJournal = new HashSet<>();
    /** Per journal file (by start position), where its last whole run ends. */
    private final Map<Long, Long> journalRunEnds = new HashMap<>();

    private CheckpointFile.Checkpoint recoveredCheckpoint = CheckpointFile.Checkpoint.INITIAL;

    /** @param replicas the store's replicas, filled here */
    JournalReplay(Storage storage, Path directory, Map<Long, ReplicaLog> replicas) {
        this.storage = storage;
        this.directory = directory;
        this.journalDirectory = directory.resolve(Storage.JOURNAL);
        this.replicasDirectory = directory.resolve(Storage.REPLICAS);
        this.config = storage.config();
        this.replicas = replicas;
    }

    /**
     * Opens every replica and replays the journal from the checkpoint into them.
     *
     * @return the journal position after the last good frame, where the journal writer continues
     */
    long replay(CheckpointFile.Checkpoint checkpoint) throws IOException {
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

    /** Opens a replica's files for its replay; from here its log is one of the store's (closed if the open fails). */
    private ReplicaReplay recoverReplica(long objectId, CheckpointFile.Checkpoint checkpoint) throws IOException {
        Path replicaDirectory = replicasDirectory.resolve(ReplicaLog.directoryName(objectId));
        Files.createDirectories(replicaDirectory);
        ReplicaReplay replay = ReplicaReplay.open(
                storage, objectId, replicaDirectory, checkpoint.syncedThrough().getOrDefault(objectId, -1L));
        replays.put(objectId, replay);
        replicas.put(objectId, replay.log());
        return replay;
    }

    /**
     * After recovery every file of the journal directory is behind the checkpoint: keeps up to {@link
     * JournalWriter#MAX_RECYCLED} + 1 whole preallocated ones (the next file and the pool) as {@code reuse-<i>.tmp},
     * so a restarted store fills no new journal file with zeros, and deletes the rest.
     */
    List<Path> keepJournalFilesForReuse() throws IOException {
        List<Path> reusable = new ArrayList<>();
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
        return reusable;
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
}
