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
 * <p>Implementation notes. The replica's shard thread (during recovery, the opening thread) owns everything here
 * except {@link #dirty}, which the checkpointer clears, and {@link #force()}, which the checkpointer calls. A force
 * racing a close (the shard deleted the segment) fails with a {@link java.nio.channels.ClosedChannelException}, which
 * the checkpointer ignores: the deletion is in the journal.
 */
final class Segment {
    static final String SUFFIX = ".segment";

    private final long baseOffset;
    private final Path path;
    private final FileChannel channel;
    private int[] positions = new int[256];
    private int count;
    private int size;

    /** Set by the shard after a write, cleared by the checkpointer before it forces. */
    volatile boolean dirty;

    private Segment(long baseOffset, Path path, FileChannel channel) {
        this.baseOffset = baseOffset;
        this.path = path;
        this.channel = channel;
    }

    static String name(long baseOffset) {
        return String.format("%020d%s", baseOffset, SUFFIX);
    }

    /** Creates an empty segment file, replacing any file of that name. */
    static Segment create(Path directory, long baseOffset, FileIo io) throws IOException {
        Path path = directory.resolve(name(baseOffset));
        FileChannel channel = io.open(
                path,
                Set.of(
                        StandardOpenOption.CREATE,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING));
        return new Segment(baseOffset, path, channel);
    }

    /** Opens an existing segment file; {@link #recover} must run before anything else. */
    static Segment open(Path path, long baseOffset, FileIo io) throws IOException {
        FileChannel channel = io.open(path, Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
        return new Segment(baseOffset, path, channel);
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
        FrameScanner.Result result = FrameScanner.scan(channel, 0, maxFrameLength, (buffer, at, position) -> {
            RecordType type = RecordDescriptor.type(buffer, at);
            long offset = RecordDescriptor.offset(buffer, at);
            if (RecordDescriptor.objectId(buffer, at) != objectId || !type.logRecord() || offset != nextOffset()) {
                return false;
            }
            index((int) position, RecordDescriptor.frameLength(buffer, at));
            observer.record(RecordDescriptor.epoch(buffer, at), offset);
            return true;
        });
        return result;
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

    int size() {
        return size;
    }

    boolean isEmpty() {
        return count == 0;
    }

    long fileSize() throws IOException {
        return channel.size();
    }

    /** Appends one frame at the end. On failure cuts the file back, so a torn frame never stays behind. */
    void append(ByteBuffer frame) throws IOException {
        int length = frame.remaining();
        try {
            DurableFiles.writeFully(channel, frame.duplicate(), size);
        } catch (IOException e) {
            channel.truncate(size);
            throw e;
        }
        index(size, length);
    }

    private void index(int position, int length) {
        if (count == positions.length) {
            positions = Arrays.copyOf(positions, count * 2);
        }
        positions[count++] = position;
        size = position + length;
    }

    /** Keeps the records before {@code next} (an offset of this segment or its next offset), cutting the file. */
    void truncateBefore(long next) throws IOException {
        int keep = (int) (next - baseOffset);
        int newSize = keep >= count ? size : positions[keep];
        channel.truncate(newSize);
        count = Math.min(keep, count);
        size = newSize;
    }

    /** Cuts the file at a byte position found by {@link #recover}. */
    void cutAt(long position) throws IOException {
        channel.truncate(position);
    }

    /**
     * Reads whole frames from {@code from}: as many as fit in {@code maxBytes}, and at least one.
     *
     * @return a buffer holding the frames, position 0; the caller verifies each
     */
    ByteBuffer read(long from, int maxBytes) throws IOException {
        int first = (int) (from - baseOffset);
        int start = positions[first];
        // the last record whose end is within the budget, at least the first
        int low = first;
        int high = count - 1;
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
        channel.force(false);
    }

    void close() throws IOException {
        channel.close();
    }

    void closeAndDelete() throws IOException {
        channel.close();
        Files.deleteIfExists(path);
    }
}
