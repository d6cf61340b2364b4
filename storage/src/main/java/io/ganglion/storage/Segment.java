package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Set;

/**
 * One segment file of a replica: the frames of offsets {@code baseOffset ..} back to back, no file header. Named by
 * its base offset, 20 decimal digits. Written through the page cache and never forced here; a checkpoint forces it.
 * Keeps the file position of every record in memory.
 *
 * <p>The layout is decided when a record is appended ({@link #reserve}): its position is the end of the previous
 * record. The bytes reach the file later, written by the segment writer ({@link #write}); the file itself is created
 * on the first write, so an append never touches the file system.
 *
 * <p>Implementation notes.
 *
 * <ul>
 *   <li>The index ({@code positions}, {@code count}, {@code size}) belongs to the replica's shard thread (during
 *       recovery, the opening thread).
 *   <li>{@link #write}, {@link #truncateBefore}, {@link #closeAndDelete} and the creation of the file run under the
 *       replica's file lock, by the segment writer or the shard. {@code channel} is volatile: the writer creates it,
 *       and the shard reads through it only records the writer published as written, after it published them.
 *   <li>{@link #force()} is called by the checkpointer without the lock. A force racing a close (the shard deleted the
 *       segment) fails with a {@link java.nio.channels.ClosedChannelException}, which the checkpointer ignores: the
 *       deletion is in the journal.
 * </ul>
 */
final class Segment {
    static final String SUFFIX = ".segment";

    /** The segment writer forces a segment after this many bytes written, so that checkpoints find little to flush. */
    static final long WRITE_BEHIND_FORCE_BYTES = 4L << 20;

    private final long baseOffset;
    private final Path path;
    private final FileIo io;
    private volatile FileChannel channel;
    private int[] positions = new int[256];
    private int count;
    private int size;
    /** Bytes the segment writer wrote since it last forced the file itself (see {@link #write}). Writer only. */
    private long unforcedBytes;

    /** Set under the replica's file lock when the file was deleted: the writer then drops what it held for it. */
    boolean deleted;

    /** Set after a write, cleared by the checkpointer before it forces. */
    volatile boolean dirty;

    private Segment(long baseOffset, Path path, FileIo io, FileChannel channel) {
        this.baseOffset = baseOffset;
        this.path = path;
        this.io = io;
        this.channel = channel;
    }

    static String name(long baseOffset) {
        return String.format("%020d%s", baseOffset, SUFFIX);
    }

    /** A new, empty segment whose file is created by its first {@link #write} (replacing any file of that name). */
    static Segment lazy(Path directory, long baseOffset, FileIo io) {
        return new Segment(baseOffset, directory.resolve(name(baseOffset)), io, null);
    }

    /** Creates an empty segment file now, replacing any file of that name. */
    static Segment create(Path directory, long baseOffset, FileIo io) throws IOException {
        Segment segment = lazy(directory, baseOffset, io);
        segment.openFile();
        return segment;
    }

    /** Opens an existing segment file; {@link #recover} must run before anything else. */
    static Segment open(Path path, long baseOffset, FileIo io) throws IOException {
        FileChannel channel = io.open(path, Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
        return new Segment(baseOffset, path, io, channel);
    }

    /** Receives the epoch and offset of each good record a recovery scan passes. */
    @FunctionalInterface
    interface RecordObserver {
        void record(long epoch, long offset);
    }

    /**
     * Scans the file from the start, indexing each record that is intact, of {@code objectId}, a log record and at the
     * next offset. Stops at the first that is not; the caller decides whether that is a torn tail or damage.
     */
    FrameScanner.Result recover(long objectId, int maxFrameLength, RecordObserver observer) throws IOException {
        count = 0;
        size = 0;
        return FrameScanner.scan(channel, 0, maxFrameLength, (buffer, at, position) -> {
            RecordType type = RecordDescriptor.type(buffer, at);
            long offset = RecordDescriptor.offset(buffer, at);
            if (RecordDescriptor.objectId(buffer, at) != objectId || !type.logRecord() || offset != nextOffset()) {
                return false;
            }
            index((int) position, RecordDescriptor.frameLength(buffer, at));
            observer.record(RecordDescriptor.epoch(buffer, at), offset);
            return true;
        });
    }

    long baseOffset() {
        return baseOffset;
    }

    Path path() {
        return path;
    }

    /** The offset the next record appended here gets. */
    long nextOffset() {
        return baseOffset + count;
    }

    /** Bytes of the records indexed, written or not. */
    int size() {
        return size;
    }

    boolean isEmpty() {
        return count == 0;
    }

    long fileSize() throws IOException {
        FileChannel current = channel;
        return current == null ? 0 : current.size();
    }

    /** The file position of the record at {@code offset}, which this segment holds. */
    int position(long offset) {
        return positions[(int) (offset - baseOffset)];
    }

    /** Indexes the next record, {@code length} bytes at the end, and returns its file position. Writes nothing. */
    int reserve(int length) {
        int position = size;
        index(position, length);
        return position;
    }

    /** Indexes and writes one frame at the end, now; for recovery. On failure cuts the file back. */
    void append(ByteBuffer frame) throws IOException {
        int length = frame.remaining();
        FileChannel current = openFile();
        try {
            DurableFiles.writeFully(current, frame.duplicate(), size);
        } catch (IOException e) {
            current.truncate(size);
            throw e;
        }
        index(size, length);
    }

    /**
     * Writes bytes at a file position {@link #reserve} handed out, creating the file on the first write. Under the
     * replica's file lock.
     *
     * @return whether the file was created by this call
     */
    boolean write(ByteBuffer bytes, long position) throws IOException {
        boolean created = channel == null;
        int length = bytes.remaining();
        FileChannel file = openFile();
        DurableFiles.writeFully(file, bytes, position);
        unforcedBytes += length;
        if (unforcedBytes >= WRITE_BEHIND_FORCE_BYTES) {
            // a little at a time, on the segment writer: a checkpoint forcing tens of megabytes of a segment at once
            // makes the journal's forces wait behind that write-back
            unforcedBytes = 0;
            file.force(false);
        }
        return created;
    }

    /**
     * Creates the (empty) file now if the writer has not yet; the writer then fills it. Under the replica's file lock.
     *
     * @return whether the file was created by this call
     */
    boolean createFile() throws IOException {
        boolean created = channel == null;
        openFile();
        return created;
    }

    private FileChannel openFile() throws IOException {
        FileChannel current = channel;
        if (current == null) {
            current = io.open(
                    path,
                    Set.of(
                            StandardOpenOption.CREATE,
                            StandardOpenOption.READ,
                            StandardOpenOption.WRITE,
                            StandardOpenOption.TRUNCATE_EXISTING));
            channel = current;
        }
        return current;
    }

    private void index(int position, int length) {
        if (count == positions.length) {
            positions = Arrays.copyOf(positions, count * 2);
        }
        positions[count++] = position;
        size = position + length;
    }

    /**
     * Keeps the records before {@code next} (an offset of this segment or its next offset), cutting the file. Under
     * the replica's file lock.
     */
    void truncateBefore(long next) throws IOException {
        int keep = (int) (next - baseOffset);
        int newSize = keep >= count ? size : positions[keep];
        FileChannel current = channel;
        if (current != null && current.size() > newSize) {
            current.truncate(newSize);
        }
        count = Math.min(keep, count);
        size = newSize;
    }

    /** Cuts the file at a byte position found by {@link #recover}. */
    void cutAt(long position) throws IOException {
        channel.truncate(position);
    }

    /**
     * Reads whole frames from {@code from} to at most {@code last}: as many as fit in {@code maxBytes}, and at least
     * one. Only for records already written to the file.
     *
     * @return a buffer holding the frames, position 0; the caller verifies each
     */
    ByteBuffer read(long from, long last, int maxBytes) throws IOException {
        int first = (int) (from - baseOffset);
        int start = positions[first];
        // the last record whose end is within the budget, at least the first
        int low = first;
        int high = (int) Math.min(count - 1, last - baseOffset);
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (end(mid) - start <= maxBytes) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        ByteBuffer buffer = ByteBuffer.allocate(end(low) - start);
        int read = DurableFiles.readFully(channel, buffer, start);
        return buffer.flip().limit(read);
    }

    private int end(int index) {
        return index + 1 < count ? positions[index + 1] : size;
    }

    void force() throws IOException {
        FileChannel current = channel;
        if (current != null) {
            current.force(false);
        }
    }

    void close() throws IOException {
        FileChannel current = channel;
        if (current != null) {
            current.close();
        }
    }

    /** Closes and deletes the file; the writer drops whatever it still holds for it. Under the replica's file lock. */
    void closeAndDelete() throws IOException {
        deleted = true;
        close();
        Files.deleteIfExists(path);
    }
}
