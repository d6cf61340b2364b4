package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PublishIndexTest {
    private static PublishId id(long sequence) {
        return new PublishId(7, sequence);
    }

    @Test
    void remembersTheNewestMessagesOnlyOldestForgottenFirst() {
        PublishIndex index = new PublishIndex(4);
        for (long offset = 0; offset < 10; offset++) {
            index.put(id(offset), offset);
        }
        assertThat(index.size()).isEqualTo(4);
        assertThat(index.get(id(5))).isNull();
        assertThat(index.get(id(6))).isEqualTo(6);
        assertThat(index.get(id(9))).isEqualTo(9);
    }

    @Test
    void truncationForgetsTheNewestAndAnIdAppendedAgainKeepsItsNewOffset() {
        PublishIndex index = new PublishIndex(4);
        index.put(id(1), 10);
        index.put(id(2), 11);
        index.put(id(1), 12); // re-sent after it left a smaller window: appended again
        index.put(id(3), 13);
        index.removeFrom(13);
        assertThat(index.get(id(3))).isNull();
        assertThat(index.get(id(1))).isEqualTo(12);
        index.put(id(4), 13);
        index.put(id(5), 14); // evicts (1 at 10): its id now means offset 12 and stays
        assertThat(index.get(id(1))).isEqualTo(12);
        index.removeFrom(12);
        assertThat(index.get(id(1))).isNull();
        assertThat(index.get(id(2))).isEqualTo(11);
    }

    @Test
    void builtFromARecoveredLogKeepsItsNewestByOffset() {
        PublishIndex index = PublishIndex.of(Map.of(id(1), 3L, id(2), 1L, id(3), 2L), 2);
        assertThat(index.get(id(2))).isNull();
        assertThat(index.get(id(3))).isEqualTo(2);
        assertThat(index.get(id(1))).isEqualTo(3);
    }
}
