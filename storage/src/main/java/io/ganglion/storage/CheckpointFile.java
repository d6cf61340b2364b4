package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The data directory's {@code checkpoint} file, replaced atomically. It says where journal replay starts and, per
 * replica, the last offset that was forced to its segments (a corrupt record at or below it is damage, not a torn
 * tail).
 *
 * <pre>
 *   0  int    magic 'GCP1'
 *   4  int    version (1)
 *   8  long   journal position: replay starts here; journal files wholly before it may be deleted
 *  16  int    replica count n, then n x (long object id, long synced-through offset)
 *  ..  int    CRC32C of every byte before it
 * </pre>
 */
final class CheckpointFile {
    static final String NAME = "checkpoint";
    private static final int MAGIC = 0x47435031;
    private static final int VERSION = 1;

    /** @param syncedThrough per object id, the last offset forced to segments */
    record Checkpoint(long journalPosition, Map<Long, Long> syncedThrough) {
        static final Checkpoint INITIAL = new Checkpoint(0, Map.of());
    }

    private CheckpointFile() {}

    static void write(Path dataDirectory, Checkpoint checkpoint) throws IOException {
        ByteBuffer buffer =
                ByteBuffer.allocate(20 + 16 * checkpoint.syncedThrough().size() + 4);
        buffer.putInt(MAGIC).putInt(VERSION).putLong(checkpoint.journalPosition());
        buffer.putInt(checkpoint.syncedThrough().size());
        checkpoint.syncedThrough().forEach((id, offset) -> buffer.putLong(id).putLong(offset));
        DurableFiles.writeAtomicallyWithCrc(dataDirectory.resolve(NAME), buffer);
    }

    /** @throws StorageException if the file is malformed */
    static Optional<Checkpoint> read(Path dataDirectory) throws IOException {
        Optional<ByteBuffer> content = DurableFiles.readIfExists(dataDirectory.resolve(NAME));
        if (content.isEmpty()) {
            return Optional.empty();
        }
        ByteBuffer buffer = content.get();
        int length = buffer.remaining();
        if (length < 24
                || !DurableFiles.endsWithCrc(buffer)
                || buffer.getInt() != MAGIC
                || buffer.getInt() != VERSION) {
            throw new StorageException("malformed checkpoint file in " + dataDirectory);
        }
        long position = buffer.getLong();
        int count = buffer.getInt();
        if (count < 0 || count > (length - 24) / 16) {
            throw new StorageException("malformed checkpoint file in " + dataDirectory + ": count " + count);
        }
        Map<Long, Long> synced = new HashMap<>();
        for (int i = 0; i < count; i++) {
            synced.put(buffer.getLong(), buffer.getLong());
        }
        return Optional.of(new Checkpoint(position, Map.copyOf(synced)));
    }
}
