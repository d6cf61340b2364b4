package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The small files beside the logs: state, checkpoint and snapshot. */
class MetadataFilesTest {
    @TempDir
    Path dir;

    @Test
    void shouldRoundTripReplicaState() throws IOException {
        ReplicaState state = new ReplicaState(
                7, EpochHistory.of(List.of(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(7, 90))), 40, "");
        ReplicaStateFile.write(dir, state);
        assertThat(ReplicaStateFile.read(dir)).contains(state);
        ReplicaState damaged = state.withDamage("record 3 failed its check");
        ReplicaStateFile.write(dir, damaged);
        assertThat(ReplicaStateFile.read(dir)).contains(damaged);
        assertThat(ReplicaStateFile.read(dir.resolve("missing"))).isEmpty();
    }

    @Test
    void shouldRejectCorruptReplicaState() throws IOException {
        ReplicaStateFile.write(dir, ReplicaState.INITIAL.withSealedEpoch(3));
        flip(dir.resolve(ReplicaStateFile.NAME), 10);
        assertThatThrownBy(() -> ReplicaStateFile.read(dir)).isInstanceOf(StorageException.class);
    }

    @Test
    void shouldRoundTripCheckpointAndRejectCorruption() throws IOException {
        CheckpointFile.Checkpoint checkpoint = new CheckpointFile.Checkpoint(123456, Map.of(1L, 10L, 2L, -1L));
        CheckpointFile.write(dir, checkpoint);
        assertThat(CheckpointFile.read(dir)).contains(checkpoint);
        flip(dir.resolve(CheckpointFile.NAME), 9);
        assertThatThrownBy(() -> CheckpointFile.read(dir)).isInstanceOf(StorageException.class);
    }

    @Test
    void shouldRoundTripSnapshotWithHistoryAndRejectCorruption() throws IOException {
        EpochHistory history = EpochHistory.of(List.of(new EpochHistory.Entry(2, 5)));
        SnapshotFile.write(dir, 99, history, ByteBuffer.wrap(new byte[] {1, 2, 3, 4}));
        SnapshotFile.Content content = SnapshotFile.read(dir, 99).orElseThrow();
        assertThat(content.history()).isEqualTo(history);
        assertThat(content.snapshot().offset()).isEqualTo(99);
        assertThat(content.snapshot().data()).isEqualTo(ByteBuffer.wrap(new byte[] {1, 2, 3, 4}));
        assertThat(SnapshotFile.offsetOf(SnapshotFile.name(99))).isEqualTo(99);
        assertThat(SnapshotFile.read(dir, 100)).isEmpty();
        flip(dir.resolve(SnapshotFile.name(99)), 30);
        assertThatThrownBy(() -> SnapshotFile.read(dir, 99)).isInstanceOf(StorageException.class);
    }

    private static void flip(Path file, long position) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, position);
            one.put(0, (byte) (one.get(0) ^ 0x04)).rewind();
            channel.write(one, position);
        }
    }
}
