package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CpuProbeTest {

    @Test
    void shouldTakeTheRunQueueWaitWhereSchedstatWasReadAndTheLatenessOtherwise() {
        long[] before = {100, 5_000};
        long[] after = {180, 9_000};
        assertThat(CpuProbe.waited(true, before, after, 1_000, 1_700)).isEqualTo(4_000);
        assertThat(CpuProbe.waited(false, before, after, 1_000, 1_700)).isEqualTo(700);
        assertThat(CpuProbe.waited(false, before, after, 1_000, 900))
                .as("woken early by the clock: no wait")
                .isZero();
    }

    @Test
    void shouldWakeAtItsIntervalAndReportEachWaitForACore() throws Exception {
        long began = System.nanoTime();
        long[] waits;
        long elapsed;
        try (CpuProbe probe = CpuProbe.start(TimeUnit.MILLISECONDS.toNanos(1))) {
            probe.awaitWakeUps(50);
            long now = System.nanoTime();
            waits = probe.waitsIn(began, now);
            elapsed = now - began;
            assertThat(probe.longestOverlapping(began, now))
                    .isEqualTo(java.util.Arrays.stream(waits).max().orElseThrow());
        }
        // at least the 50 waited for, never more wake-ups than the interval allows; a wait is never negative
        assertThat((long) waits.length).isBetween(49L, elapsed / TimeUnit.MILLISECONDS.toNanos(1) + 1);
        assertThat(java.util.Arrays.stream(waits).min().orElseThrow()).isNotNegative();
    }

    @Test
    void shouldRefuseAnIntervalThatIsNotPositive() {
        assertThatThrownBy(() -> CpuProbe.start(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
