package io.ganglion.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.Epoch;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class EpochHistoryTest {

    @Test
    void shouldFindTheEpochOfEveryOffset() {
        EpochHistory history = EpochHistory.of(1, 0, 2, 40, 5, 97);
        assertThat(history.epochAt(0)).isEqualTo(Epoch.of(1));
        assertThat(history.epochAt(39)).isEqualTo(Epoch.of(1));
        assertThat(history.epochAt(40)).isEqualTo(Epoch.of(2));
        assertThat(history.epochAt(1000)).isEqualTo(Epoch.of(5));
        assertThat(history.lastEpoch()).isEqualTo(Epoch.of(5));
        assertThat(history.startOf(Epoch.of(2))).hasValue(40);
        assertThat(history.startOf(Epoch.of(3))).isEmpty();
    }

    @Test
    void shouldRefuseAnEpochGoingBackwards() {
        EpochHistory history = EpochHistory.of(2, 0);
        assertThatThrownBy(() -> history.append(Epoch.of(1), 5)).isInstanceOf(IllegalArgumentException.class);
        assertThat(history.append(Epoch.of(2), 9)).isSameAs(history);
    }

    @Test
    void shouldTruncateDivergentSuffixByEpochHistory() {
        EpochHistory owner = EpochHistory.of(1, 0, 2, 40, 3, 97);
        EpochHistory behind = EpochHistory.of(1, 0, 2, 40);
        EpochHistory diverged = EpochHistory.of(1, 0, 2, 40);
        assertThat(EpochHistory.commonPrefix(owner, 120, behind, 90))
                .as("a prefix: agree up to its end")
                .isEqualTo(91);
        assertThat(EpochHistory.commonPrefix(owner, 120, diverged, 99))
                .as("epoch 2 past 96 never happened at the owner")
                .isEqualTo(97);
        assertThat(EpochHistory.commonPrefix(owner, 120, EpochHistory.of(1, 0, 4, 30), 50))
                .isEqualTo(30);
        assertThat(EpochHistory.commonPrefix(owner, 120, EpochHistory.EMPTY, -1))
                .isZero();
        assertThat(owner.truncateFrom(97)).isEqualTo(EpochHistory.of(1, 0, 2, 40));
        assertThat(owner.truncateFrom(98)).isEqualTo(owner);
    }

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 50);
    }

    /** commonPrefix agrees with a record-by-record comparison of two random logs sharing a random prefix. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldAgreeWithARecordByRecordComparison(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long[] a = randomEpochs(random, new long[0]);
        long[] b = randomEpochs(random, java.util.Arrays.copyOf(a, random.nextInt(a.length + 1)));
        long expected = 0;
        while (expected < Math.min(a.length, b.length) && a[(int) expected] == b[(int) expected]) {
            expected++;
        }
        assertThat(EpochHistory.commonPrefix(history(a), a.length - 1, history(b), b.length - 1))
                .as("seed %d", seed)
                .isEqualTo(expected);
    }

    private static long[] randomEpochs(SplittableRandom random, long[] prefix) {
        int length = prefix.length + random.nextInt(30);
        long[] epochs = java.util.Arrays.copyOf(prefix, length);
        long epoch = prefix.length == 0 ? 1 : prefix[prefix.length - 1];
        for (int i = prefix.length; i < length; i++) {
            if (random.nextInt(6) == 0) {
                epoch += 1 + random.nextInt(2);
            }
            epochs[i] = epoch;
        }
        return epochs;
    }

    private static EpochHistory history(long[] epochs) {
        EpochHistory history = EpochHistory.EMPTY;
        for (int i = 0; i < epochs.length; i++) {
            history = history.append(Epoch.of(epochs[i]), i);
        }
        return history;
    }
}
