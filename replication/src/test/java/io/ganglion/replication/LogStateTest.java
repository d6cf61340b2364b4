package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.LogPosition;
import io.ganglion.replication.ReplicaEffect.Append;
import io.ganglion.replication.ReplicaEffect.Discard;
import io.ganglion.replication.ReplicaEffect.Reseed;
import io.ganglion.replication.ReplicaEffect.Truncate;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LogStateTest {
    private final Effects out = new Effects();

    private static Record message(long epoch, long offset) {
        return new Record.Message(Epoch.of(epoch), offset, new PublishId(1, offset), ByteBuffer.allocate(0));
    }

    @Test
    void shouldMirrorTheRecoveredLog() {
        RecoveredLog recovered =
                new RecoveredLog(3, 9, EpochHistory.of(1, 0, 2, 5), Epoch.of(1), Map.of(new PublishId(1, 7), 7L));
        LogState log = new LogState(recovered, out, Replica.PUBLISH_INDEX_CAPACITY);
        assertThat(log.start()).isEqualTo(3);
        assertThat(log.durable()).as("all of a recovered log is durable").isEqualTo(9);
        assertThat(log.position()).isEqualTo(new LogPosition(Epoch.of(2), 9));
        assertThat(log.fenced(Epoch.of(1))).isTrue();
        assertThat(log.fenced(Epoch.of(2))).isFalse();
        assertThat(log.published().get(new PublishId(1, 7))).isEqualTo(7L);
    }

    @Test
    void shouldEmitTheStorageEffectOfEachChange() {
        LogState log = new LogState(RecoveredLog.EMPTY, out, Replica.PUBLISH_INDEX_CAPACITY);
        log.append(List.of(message(1, 0), message(1, 1), message(2, 2)));
        assertThat(log.markDurable(5)).as("capped at the end").isTrue();
        assertThat(log.durable()).isEqualTo(2);
        assertThat(log.markDurable(2)).isFalse();
        log.truncate(2);
        assertThat(log.history()).isEqualTo(EpochHistory.of(1, 0));
        assertThat(log.durable()).isEqualTo(1);
        assertThat(log.published().get(new PublishId(1, 2))).isNull();
        log.truncate(7); // past the end: nothing to cut
        log.discard(1);
        log.reseed(10, EpochHistory.of(1, 0, 3, 8));
        assertThat(log.end()).isEqualTo(9);
        assertThat(log.holds(new LogPosition(Epoch.of(3), 9)))
                .as("below a reseeded start, the history still shows where the log stood")
                .isTrue();
        assertThat(out.take())
                .containsExactly(
                        new Append(List.of(message(1, 0), message(1, 1), message(2, 2))),
                        new Truncate(2),
                        new Discard(1),
                        new Reseed(10, EpochHistory.of(1, 0, 3, 8)));
    }

    @Test
    void shouldRefuseAGap() {
        LogState log = new LogState(RecoveredLog.EMPTY, out, Replica.PUBLISH_INDEX_CAPACITY);
        assertThatThrownBy(() -> log.append(List.of(message(1, 1)))).isInstanceOf(IllegalStateException.class);
    }
}
