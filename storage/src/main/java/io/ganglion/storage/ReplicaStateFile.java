package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The per-replica state file {@code state}, replaced atomically (write, force, rename, force directory).
 *
 * <pre>
 *   0  int    magic 'GRS1'
 *   4  int    version (1)
 *   8  long   sealed epoch (-1: never sealed)
 *  16  long   snapshot offset (-1: none)
 *  24  int    damage length n, then n bytes of UTF-8 (0: not damaged)
 *  ..  int    epoch history count c, then c x (long epoch, long first offset)
 *  ..  int    CRC32C of every byte before it
 * </pre>
 */
final class ReplicaStateFile {
    static final String NAME = "state";
    private static final int MAGIC = 0x47525331;
    private static final int VERSION = 1;

    private ReplicaStateFile() {}

    static void write(Path replicaDirectory, ReplicaState state) throws IOException {
        byte[] damage = state.damage().getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer =
                ByteBuffer.allocate(8 + 16 + 4 + damage.length + state.history().encodedLength() + 4);
        buffer.putInt(MAGIC).putInt(VERSION).putLong(state.sealedEpoch()).putLong(state.snapshotOffset());
        buffer.putInt(damage.length).put(damage);
        state.history().encode(buffer);
        DurableFiles.writeAtomicallyWithCrc(replicaDirectory.resolve(NAME), buffer);
    }

    /**
     * The state in the directory, empty if it has no state file.
     *
     * @throws StorageException if the file is malformed (it is replaced atomically, so this is media damage)
     */
    static Optional<ReplicaState> read(Path replicaDirectory) throws IOException {
        Optional<ByteBuffer> content = DurableFiles.readIfExists(replicaDirectory.resolve(NAME));
        if (content.isEmpty()) {
            return Optional.empty();
        }
        ByteBuffer buffer = content.get();
        try {
            int length = buffer.remaining();
            if (length < 32 || !DurableFiles.endsWithCrc(buffer)) {
                throw malformed(replicaDirectory, "bad CRC");
            }
            if (buffer.getInt() != MAGIC || buffer.getInt() != VERSION) {
                throw malformed(replicaDirectory, "bad magic or version");
            }
            long sealedEpoch = buffer.getLong();
            long snapshotOffset = buffer.getLong();
            byte[] damage = new byte[buffer.getInt()];
            buffer.get(damage);
            EpochHistory history = EpochHistory.decode(buffer);
            return Optional.of(
                    new ReplicaState(sealedEpoch, history, snapshotOffset, new String(damage, StandardCharsets.UTF_8)));
        } catch (RuntimeException e) {
            throw malformed(replicaDirectory, e.toString());
        }
    }

    private static StorageException malformed(Path directory, String why) {
        return new StorageException("malformed state file in " + directory + ": " + why);
    }
}
