package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica's snapshot file {@code <offset, 20 digits>.snapshot}, written atomically and forced before the replica's
 * segments are reset. It carries the epoch history too, so recovery can adopt a snapshot whose journal record was
 * lost but whose reset already reached the segments.
 *
 * <pre>
 *   0  int    magic 'GSN2'
 *   4  int    version (1)
 *   8  long   offset: the snapshot holds the object's state through this offset
 *  16  int    epoch history length h
 *  20  int    data length n
 *  24  int    CRC32C of bytes 0..23 and everything after byte 28
 *  28  h      epoch history ({@link EpochHistory#encode})
 *  ..  n      data
 * </pre>
 */
final class SnapshotFile {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotFile.class);
    static final String SUFFIX = ".snapshot";
    private static final int MAGIC = 0x47534E32;
    private static final int VERSION = 1;
    private static final int HEADER = 28;

    /** A snapshot and the epoch history through its offset. */
    record Content(Snapshot snapshot, EpochHistory history) {}

    private SnapshotFile() {}

    static String name(long offset) {
        return String.format("%020d%s", offset, SUFFIX);
    }

    /** The offset named by a snapshot file name, or -1 if the name is not one. */
    static long offsetOf(String fileName) {
        if (!fileName.endsWith(SUFFIX) || fileName.length() != 20 + SUFFIX.length()) {
            return -1;
        }
        try {
            return Long.parseLong(fileName.substring(0, 20));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static void write(Path replicaDirectory, long offset, EpochHistory history, ByteBuffer data) throws IOException {
        int historyLength = history.encodedLength();
        ByteBuffer buffer = ByteBuffer.allocate(HEADER + historyLength + data.remaining());
        buffer.putInt(MAGIC)
                .putInt(VERSION)
                .putLong(offset)
                .putInt(historyLength)
                .putInt(data.remaining());
        buffer.putInt(0);
        history.encode(buffer);
        buffer.put(data.duplicate());
        buffer.putInt(24, crc(buffer));
        DurableFiles.writeAtomically(replicaDirectory.resolve(name(offset)), buffer.flip());
    }

    /** @throws StorageException if the file is malformed or its CRC fails */
    static Optional<Content> read(Path replicaDirectory, long offset) throws IOException {
        Path file = replicaDirectory.resolve(name(offset));
        Optional<ByteBuffer> content = DurableFiles.readIfExists(file);
        if (content.isEmpty()) {
            return Optional.empty();
        }
        ByteBuffer buffer = content.get();
        int length = buffer.remaining();
        if (length < HEADER
                || buffer.getInt(0) != MAGIC
                || buffer.getInt(4) != VERSION
                || buffer.getLong(8) != offset
                || buffer.getInt(16) < 4
                || buffer.getInt(20) < 0
                || (long) HEADER + buffer.getInt(16) + buffer.getInt(20) != length
                || buffer.getInt(24) != crc(buffer)) {
            throw new StorageException("corrupt snapshot file " + file);
        }
        int historyLength = buffer.getInt(16);
        EpochHistory history;
        try {
            history = EpochHistory.decode(buffer.slice(HEADER, historyLength));
        } catch (RuntimeException e) {
            throw new StorageException("corrupt snapshot file " + file + ": " + e.getMessage());
        }
        ByteBuffer data =
                buffer.slice(HEADER + historyLength, buffer.getInt(20)).asReadOnlyBuffer();
        return Optional.of(new Content(new Snapshot(offset, data), history));
    }

    /**
     * The installed snapshot at {@code offset}.
     *
     * @throws StorageException if its file is missing or corrupt
     */
    static Content readInstalled(Path replicaDirectory, long offset) throws IOException {
        return read(replicaDirectory, offset)
                .orElseThrow(() -> new StorageException("snapshot file " + name(offset) + " is missing"));
    }

    /** Deletes a snapshot a newer durable one replaced; a failure is logged, not thrown (nothing needs the file). */
    static void deleteReplaced(Path replicaDirectory, long offset, long objectId) {
        try {
            Files.deleteIfExists(replicaDirectory.resolve(name(offset)));
        } catch (IOException e) {
            LOG.warn("deleting a replaced snapshot failed: object={} offset={}", objectId, offset, e);
        }
    }

    private static int crc(ByteBuffer buffer) {
        CRC32C crc = new CRC32C();
        crc.update(buffer.array(), 0, 24);
        crc.update(buffer.array(), HEADER, buffer.capacity() - HEADER);
        return (int) crc.getValue();
    }
}
