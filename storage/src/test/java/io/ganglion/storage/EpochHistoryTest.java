package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.storage.EpochHistory.Entry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EpochHistoryTest {
    @Test
    void shouldAddAnEntryOnlyForAHigherEpoch() {
        EpochHistory history =
                EpochHistory.empty().observe(1, 0).observe(1, 5).observe(3, 10).observe(2, 11);
        assertThat(history.entries()).containsExactly(new Entry(1, 0), new Entry(3, 10));
        assertThat(history.lastEpoch()).isEqualTo(3);
        assertThat(history.observe(3, 12)).isSameAs(history);
    }

    @Test
    void shouldDropEpochsStartingAfterTruncationPoint() {
        EpochHistory history = EpochHistory.empty().observe(1, 0).observe(2, 10).observe(4, 20);
        assertThat(history.truncateAfter(20).entries()).hasSize(3);
        assertThat(history.truncateAfter(19).entries()).containsExactly(new Entry(1, 0), new Entry(2, 10));
        assertThat(history.truncateAfter(-1).isEmpty()).isTrue();
        assertThat(history.truncateAfter(100)).isSameAs(history);
    }

    @Test
    void shouldFindEpochOfAnOffset() {
        EpochHistory history = EpochHistory.empty().observe(1, 0).observe(2, 10).observe(4, 20);
        assertThat(history.epochAt(0)).isEqualTo(1);
        assertThat(history.epochAt(19)).isEqualTo(2);
        assertThat(history.epochAt(1000)).isEqualTo(4);
        assertThat(EpochHistory.empty().observe(2, 5).epochAt(4)).isEqualTo(-1);
        assertThat(history.firstOffset(2)).isEqualTo(OptionalLong.of(10));
        assertThat(history.firstOffset(3)).isEmpty();
    }

    @Test
    void shouldRejectEntriesOutOfOrder() {
        assertThatThrownBy(() -> EpochHistory.of(List.of(new Entry(2, 0), new Entry(1, 5))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EpochHistory.of(List.of(new Entry(1, 5), new Entry(2, 4))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 7, 99, 20261129})
    void shouldRoundTripThroughEncoding(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Entry> entries = new ArrayList<>();
        long epoch = 0;
        long offset = 0;
        for (int i = random.nextInt(0, 20); i > 0; i--) {
            epoch += random.nextLong(1, 5);
            offset += random.nextLong(0, 1000);
            entries.add(new Entry(epoch, offset));
        }
        EpochHistory history = EpochHistory.of(entries);
        ByteBuffer buffer = ByteBuffer.allocate(history.encodedLength());
        history.encode(buffer);
        assertThat(buffer.remaining()).as("seed %d", seed).isZero();
        assertThat(EpochHistory.decode(buffer.flip())).as("seed %d", seed).isEqualTo(history);
    }

    @Test
    void shouldRejectMalformedEncoding() {
        ByteBuffer buffer = ByteBuffer.allocate(8).putInt(1000).putInt(0).flip();
        assertThatThrownBy(() -> EpochHistory.decode(buffer)).isInstanceOf(IllegalArgumentException.class);
    }
}
