package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The quorum arithmetic: W per durability mode, R = |E| - W + 1, and that every seal set meets every confirm set. */
class QuorumTest {

    @Test
    void shouldGiveWriteRequirementPerMode() {
        assertThat(DurabilityMode.OWNER_DURABLE.writeRequirement(3)).isEqualTo(1);
        assertThat(DurabilityMode.MAJORITY_DURABLE.writeRequirement(1)).isEqualTo(1);
        assertThat(DurabilityMode.MAJORITY_DURABLE.writeRequirement(2)).isEqualTo(2);
        assertThat(DurabilityMode.MAJORITY_DURABLE.writeRequirement(3)).isEqualTo(2);
        assertThat(DurabilityMode.MAJORITY_DURABLE.writeRequirement(4)).isEqualTo(3);
        assertThat(DurabilityMode.MAJORITY_DURABLE.writeRequirement(5)).isEqualTo(3);
        assertThat(DurabilityMode.ALL_DURABLE.writeRequirement(5)).isEqualTo(5);
    }

    @Test
    void shouldGiveRecoveryThresholdOfTheSeed() {
        EligibleSet three = EligibleSet.of(Generators.nodes(3));
        assertThat(three.recoveryThreshold(2)).isEqualTo(2);
        assertThat(three.recoveryThreshold(1)).isEqualTo(3);
        assertThat(three.recoveryThreshold(3)).isEqualTo(1);
        assertThat(EligibleSet.empty().recoveryThreshold(2))
                .as("nothing to seal before epoch 1")
                .isZero();
    }

    @Test
    void shouldRejectZeroCopiesAndUnknownModes() {
        assertThatThrownBy(() -> DurabilityMode.MAJORITY_DURABLE.writeRequirement(0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DurabilityMode.parse("most_durable"))
                .hasMessageContaining("most_durable")
                .hasMessageContaining("majority_durable");
        assertThat(DurabilityMode.parse("all_durable")).isEqualTo(DurabilityMode.ALL_DURABLE);
    }

    @ParameterizedTest
    @EnumSource(DurabilityMode.class)
    void shouldKeepRecoveryAndWriteRequirementAboveEligibleSetForEveryCopyCount(DurabilityMode mode) {
        for (int n = 1; n <= 7; n++) {
            int w = mode.writeRequirement(n);
            int r = EligibleSet.of(Generators.nodes(n)).recoveryThreshold(w);
            assertThat(w).as("W for N=%d", n).isBetween(1, n);
            assertThat(r + w).as("R + W > |E| for %s, N=%d", mode, n).isGreaterThan(n);
        }
    }

    static LongStream seeds() {
        return Generators.seeds(300);
    }

    /** Exhaustive over subsets for one random (mode, N): every W-subset of E meets every R-subset. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void shouldMakeEverySealSetMeetEveryConfirmSet(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int n = random.nextInt(1, 8);
        DurabilityMode mode = Generators.mode(random);
        int w = mode.writeRequirement(n);
        int r = EligibleSet.of(Generators.nodes(n)).recoveryThreshold(w);
        List<Integer> confirmSets = subsetsOfSize(n, w);
        List<Integer> sealSets = subsetsOfSize(n, r);
        for (int confirm : confirmSets) {
            for (int seal : sealSets) {
                assertThat(confirm & seal)
                        .as("seed %d: %s N=%d W=%d R=%d confirm %s seal %s", seed, mode, n, w, r, confirm, seal)
                        .isNotZero();
            }
        }
    }

    private static List<Integer> subsetsOfSize(int n, int size) {
        List<Integer> subsets = new ArrayList<>();
        for (int mask = 0; mask < (1 << n); mask++) {
            if (Integer.bitCount(mask) == size) {
                subsets.add(mask);
            }
        }
        return subsets;
    }
}
