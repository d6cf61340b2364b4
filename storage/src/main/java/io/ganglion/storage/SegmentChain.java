package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The segments of one replica, oldest first: each holds the offsets from its base offset up to the next one's, and the
 * last is the active segment appends go to. It answers which segment holds an offset and where retention may cut, and
 * changes the chain (roll, truncate, discard, reset).
 *
 * <p>Implementation notes. The chain belongs to the replica's shard thread (the opening thread during recovery).
 * Changes that cut or delete files run under the replica's file lock, which the caller holds; the chain knows nothing
 * of the replica or the store: a change that creates or deletes a file says so in its result, and the caller reports
 * it to the checkpointer. There is always at least one segment.
 */
final class SegmentChain {
    private final Path directory;
    private final FileIo io;
    private final ArrayList<Segment> segments;

    /** A chain of the given segments, oldest first, or of one empty segment at {@code base} when there are none. */
    SegmentChain(Path directory, FileIo io, List<Segment> segments, long base) {
        this.directory = directory;
        this.io = io;
        this.segments = new ArrayList<>(segments);
        if (this.segments.isEmpty()) {
            this.segments.add(Segment.lazy(directory, base, io));
        }
    }

    /** The segment appends go to. */
    Segment active() {
        return segments.getLast();
    }

    /** Starts a new active segment (its index, not its file) at the next offset of the current one. */
    Segment roll() {
        Segment next = Segment.lazy(directory, active().nextOffset(), io);
        segments.add(next);
        return next;
    }

    /** The segment holding {@code offset}, which lies at or above {@link #startOffset()}. */
    Segment segmentFor(long offset) {
        int low = 0;
        int high = segments.size() - 1;
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (segments.get(mid).baseOffset() <= offset) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return segments.get(low);
    }

    /** A record read from a segment failed its check; the message says which. */
    static final class FailedCheck extends IOException {
        FailedCheck(String message) {
            super(message);
        }
    }

    /**
     * Reads records from {@code from}, at most through {@code writtenThrough} (all in their files): those that fit in
     * {@code maxBytes} of frames, at least one, all from one segment. Checks each record's CRC, object and offset.
     *
     * @throws FailedCheck if a record fails its check
     */
    List<LogRecord> read(long from, long writtenThrough, int maxBytes, long objectId, int maxRecordBytes)
            throws IOException {
        Segment segment = segmentFor(from);
        ByteBuffer bytes = segment.read(from, writtenThrough, maxBytes);
        List<LogRecord> records = new ArrayList<>();
        int at = 0;
        long expected = from;
        while (at < bytes.limit()) {
            int length = RecordDescriptor.check(bytes, at, bytes.limit() - at, maxRecordBytes);
            if (length <= 0
                    || RecordDescriptor.objectId(bytes, at) != objectId
                    || RecordDescriptor.offset(bytes, at) != expected
                    || !RecordDescriptor.type(bytes, at).logRecord()) {
                throw new FailedCheck("record " + expected + " in segment "
                        + segment.path().getFileName() + " failed its check (CRC, object or offset)");
            }
            records.add(RecordDescriptor.logRecord(bytes, at, expected));
            at += length;
            expected++;
        }
        return records;
    }

    /** The first offset held: the first segment's base. */
    long startOffset() {
        return segments.getFirst().baseOffset();
    }

    /**
     * The first offset to keep so that the whole segments kept, the newest ones, hold at most {@code maxBytes}; the
     * active segment is always kept. {@link #startOffset()} when every segment fits.
     */
    long retainedStart(long maxBytes) {
        long kept = active().size();
        for (int i = segments.size() - 2; i >= 0; i--) {
            kept += segments.get(i).size();
            if (kept > maxBytes) {
                return segments.get(i + 1).baseOffset();
            }
        }
        return startOffset();
    }

    /** Reads the timestamp of a record of the chain, {@link Long#MAX_VALUE} when there is none. */
    @FunctionalInterface
    interface Timestamps {
        long at(long offset) throws IOException;
    }

    /**
     * The first offset to keep so that only whole segments all of whose records were appended before {@code
     * timestampMillis} go, the oldest first; the active segment is always kept. A segment is old when its last record
     * is (timestamps grow with offsets, as one store's clock makes them), so this reads one record per segment that
     * goes, and one more.
     */
    long retainedStartByAge(long timestampMillis, Timestamps timestamps) throws IOException {
        for (int i = 0; i < segments.size() - 1; i++) {
            if (timestamps.at(segments.get(i + 1).baseOffset() - 1) >= timestampMillis) {
                return segments.get(i).baseOffset();
            }
        }
        return active().baseOffset();
    }

    /** Whether {@link #discardBefore} would delete a segment. */
    boolean canDiscard(long before) {
        return segments.size() > 1 && segments.get(1).baseOffset() <= before;
    }

    /**
     * Deletes the whole segments all of whose records lie below {@code before}; the active segment stays. The new
     * first segment's file is created before the old ones go: recovery finds the log start by the first file, and the
     * segment writer may not have reached it yet. Under the file lock.
     *
     * @return whether a file was created or deleted
     */
    boolean discardBefore(long before) throws IOException {
        boolean changed = false;
        while (canDiscard(before)) {
            segments.get(1).createFile();
            segments.removeFirst().closeAndDelete(); // the segment writer drops what it holds for it
            changed = true;
        }
        return changed;
    }

    /**
     * Keeps the records before {@code next}: deletes the segments that start at or after it (never the first) and
     * cuts the one that holds it, which becomes the active segment. Under the file lock.
     *
     * @return whether a file was deleted
     */
    boolean truncateBefore(long next) throws IOException {
        boolean deleted = false;
        while (segments.size() > 1 && segments.getLast().baseOffset() >= next) {
            segments.removeLast().closeAndDelete();
            deleted = true;
        }
        Segment last = segments.getLast();
        last.truncateBefore(Math.max(next, last.baseOffset()));
        return deleted;
    }

    /** Deletes every segment and starts again with one empty segment at {@code base}. Under the file lock. */
    void reset(long base) throws IOException {
        deleteAll();
        segments.clear();
        segments.add(Segment.lazy(directory, base, io));
    }

    /** Closes and deletes every segment file. Under the file lock. */
    void deleteAll() throws IOException {
        for (Segment segment : segments) {
            segment.closeAndDelete();
        }
    }

    void closeAll() throws IOException {
        for (Segment segment : segments) {
            segment.close();
        }
    }

    /** Segment files, oldest first. */
    List<Path> paths() {
        return segments.stream().map(Segment::path).toList();
    }
}
