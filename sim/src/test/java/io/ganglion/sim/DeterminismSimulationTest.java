package io.ganglion.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A seed reproduces exactly: the same seed gives the same trace hash; another seed a different one. */
class DeterminismSimulationTest {

    @Test
    void shouldGiveTheSameTraceHashForTheSameSeed() {
        for (long seed : new long[] {7, 42, 1_000_003}) {
            SimResult first = RandomFaults.run(seed);
            SimResult second = RandomFaults.run(seed);
            assertThat(second.traceHash()).as("seed %d", seed).isEqualTo(first.traceHash());
            assertThat(second.events()).isEqualTo(first.events());
            assertThat(second.virtualMs()).isEqualTo(first.virtualMs());
            assertThat(second.summary()).isEqualTo(first.summary());
            assertThat(first.events()).isGreaterThan(1_000);
        }
    }

    @Test
    void shouldGiveDifferentTracesForDifferentSeeds() {
        assertThat(RandomFaults.run(8).traceHash())
                .isNotEqualTo(RandomFaults.run(9).traceHash());
    }
}
