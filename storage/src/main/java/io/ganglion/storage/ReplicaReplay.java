package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds one replica's log when the store opens: reads its state file, scans its segments, cuts them back to their
 * stable prefix, replays the journal's records of the replica over it and decides whether the replica is damaged.
 *
 * <p>Order of use, all on the opening thread: {@link #open}, then {@link #prepare} once the first journal pass knows
 * the lowest truncate or snapshot point of the replica, then one call per journal record of the replica in journal
 * order, then {@link #finish}. The replay holds its replica's log and changes it through the log's package-private
 * recovery methods; the log knows nothing of the replay.
 */
final class ReplicaReplay {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaReplay.class);

    private final ReplicaLog log;
    /** The checkpoint's synced offset of the replica, -1 when none: the segments held every record through it. */
    private final long syncedThrough;
    /** Epochs of the records the segments held when they were scanned. */
    private final EpochHistory scannedHistory;

    private long lowestRewrite = Long.MAX_VALUE;

    private ReplicaReplay(ReplicaLog log, long syncedThrough, EpochHistory scannedHistory) {
        this.log = log;
        this.syncedThrough = syncedThrough;
        this.scannedHistory = scannedHistory;
    }

    /**
     * Opens a replica's files: reads its state file, scans every segment (CRC, object, contiguous offsets) and cuts
     * at the first bad record. Whether that cut was a torn tail or damage is decided in {@link #finish()}, after the
     * journal replay.
     */
    static ReplicaReplay open(Storage storage, long objectId, Path directory, long syncedThrough) throws IOException {
        ReplicaState state;
        try {
            state = ReplicaStateFile.read(directory).orElse(ReplicaState.INITIAL);
        } catch (StorageException e) {
            state = ReplicaState.INITIAL.withDamage(e.getMessage());
        }
        List<Segment> segments = new ArrayList<>();
        List<Segment> cut = new ArrayList<>();
        EpochHistory[] observed = {EpochHistory.empty()};
        boolean deleted = scanSegments(storage, objectId, directory, segments, cut, observed);
        SegmentChain chain =
                new SegmentChain(directory, storage.io(), segments, Math.max(0, state.snapshotOffset() + 1));
        ReplicaLog log = ReplicaLog.recovered(storage, objectId, directory, state, chain);
        if (deleted) {
            log.markDirectoryDirty();
        }
        for (Segment segment : cut) {
            log.markDirty(segment);
        }
        return new ReplicaReplay(log, syncedThrough, observed[0]);
    }

    /**
     * Opens and checks the segment files in offset order into {@code segments}, cutting the first bad one at its
     * first bad record ({@code cut}) and deleting every file after it or after a gap.
     *
     * @return whether a file was deleted
     */
    private static boolean scanSegments(
            Storage storage,
            long objectId,
            Path directory,
            List<Segment> segments,
            List<Segment> cut,
            EpochHistory[] observed)
            throws IOException {
        TreeMap<Long, Path> files = new TreeMap<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "*" + Segment.SUFFIX)) {
            for (Path file : stream) {
                String name = file.getFileName().toString();
                files.put(Long.parseLong(name.substring(0, name.length() - Segment.SUFFIX.length())), file);
            }
        }
        boolean stopped = false;
        boolean deleted = false;
        for (var file : files.entrySet()) {
            if (stopped
                    || (!segments.isEmpty()
                            && file.getKey() != segments.getLast().nextOffset())) {
                if (!stopped) {
                    LOG.warn(
                            "segment gap: object={} expected={} found={}",
                            objectId,
                            segments.getLast().nextOffset(),
                            file.getKey());
                }
                stopped = true;
                Files.delete(file.getValue());
                deleted = true;
                continue;
            }
            Segment segment = Segment.open(file.getValue(), file.getKey(), storage.io());
            segments.add(segment);
            FrameScanner.Result result = segment.recover(
                    objectId,
                    storage.config().maxRecordBytes(),
                    (epoch, offset) -> observed[0] = observed[0].observe(epoch, offset));
            if (result.stop() != FrameScanner.Stop.END_OF_FILE) {
                LOG.warn(
                        "segment cut at first bad record: object={} segment={} offset={} position={} stop={}"
                                + " fileSize={}",
                        objectId,
                        file.getKey(),
                        segment.nextOffset(),
                        result.end(),
                        result.stop(),
                        segment.fileSize());
                segment.cutAt(result.end());
                cut.add(segment);
                stopped = true;
            }
        }
        return deleted;
    }

    ReplicaLog log() {
        return log;
    }

    long objectId() {
        return log.objectId();
    }

    /**
     * Cuts the segments back to their stable prefix before the journal is replayed: the records at or below both
     * the checkpoint's synced offset and the lowest truncate or snapshot point the journal holds for this replica
     * ({@code lowestRewriteInJournal}). Nothing since the checkpoint changed that prefix, and every durable record
     * above it is in the journal, so replaying the journal over it is exact. Whatever the segments held above it (a
     * later state, records never made durable, pages a power loss left half written) is rebuilt or dropped.
     */
    void prepare(long lowestRewriteInJournal) throws IOException {
        lowestRewrite = lowestRewriteInJournal;
        long stableEnd = Math.min(syncedThrough, lowestRewriteInJournal);
        // the history of the stable prefix: the state file's (it may be later), and the scanned records' epochs in
        // case the state file is older or missing
        ReplicaState state = log.state();
        EpochHistory history = state.history().truncateAfter(stableEnd);
        for (EpochHistory.Entry entry : scannedHistory.truncateAfter(stableEnd).entries()) {
            history = history.observe(entry.epoch(), entry.firstOffset());
        }
        log.setState(state.withHistory(history));
        if (stableEnd < log.lastOffset()) {
            log.truncateFiles(stableEnd);
        }
    }

    void record(ByteBuffer frame, long offset, long epoch) throws IOException {
        // the epoch history follows every replayed record, also those below the log start: after a discard the
        // segments no longer show where an epoch began
        ReplicaState state = log.state();
        log.setState(state.withHistory(state.history().observe(epoch, offset)));
        if (offset != log.nextOffset() || log.state().damaged()) {
            return; // in the stable prefix already, or discarded
        }
        log.appendReplayed(frame, offset);
    }

    void truncate(long after) throws IOException {
        ReplicaState state = log.state();
        log.setState(state.withHistory(state.history().truncateAfter(after)));
        if (after < log.lastOffset()) {
            log.truncateFiles(after);
        }
    }

    void discard(long before) throws IOException {
        log.discardFiles(before);
    }

    void seal(long epoch) {
        log.setState(log.state().withSealedEpoch(epoch));
    }

    void snapshot(long offset, EpochHistory history) throws IOException {
        log.resetFiles(offset);
        log.setState(log.state().withSnapshot(offset, history));
    }

    /**
     * Ends recovery: applies an installed snapshot the segments do not reflect yet, checks the snapshot file, and
     * declares the replica damaged if a record that was forced to its segments (at or below the checkpoint's synced
     * offset, and not removed by a replayed truncate or snapshot) is missing or corrupt.
     */
    void finish() throws IOException {
        long snapshotOffset = log.state().snapshotOffset();
        if (snapshotOffset >= 0 && log.startOffset() <= snapshotOffset) {
            log.resetFiles(snapshotOffset);
        }
        Path directory = log.directory();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "*" + SnapshotFile.SUFFIX)) {
            for (Path file : stream) {
                if (!file.getFileName().toString().equals(SnapshotFile.name(snapshotOffset))) {
                    Files.delete(file);
                    log.markDirectoryDirty();
                }
            }
        }
        if (snapshotOffset >= 0) {
            try {
                if (SnapshotFile.read(directory, snapshotOffset).isEmpty()) {
                    log.markDamaged("snapshot file " + SnapshotFile.name(snapshotOffset) + " is missing");
                }
            } catch (StorageException e) {
                log.markDamaged(e.getMessage());
            }
        }
        long required = Math.min(syncedThrough, lowestRewrite);
        long last = log.lastOffset();
        if (last < required) {
            log.markDamaged(
                    "records " + (last + 1) + ".." + required + " were forced to segments but are missing or corrupt");
        }
        log.setState(log.state().withHistory(log.state().history().truncateAfter(last)));
        log.resumeAfterRecovery();
    }
}
