package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskProbeTest {

    @Test
    void shouldFindTheLongestForceOverlappingAWindowIncludingOneThatStartedBeforeIt() {
        long[] starts = {0, 10, 20, 30, 40};
        long[] durations = {1, 15, 2, 1, 3};
        // the 15-long force from 10 runs to 25: it overlaps [22, 23] though it started before
        assertThat(ProbeSamples.longestOverlapping(starts, durations, 5, 15, 22, 23))
                .isEqualTo(15);
        assertThat(ProbeSamples.longestOverlapping(starts, durations, 5, 15, 26, 29))
                .isZero();
        assertThat(ProbeSamples.longestOverlapping(starts, durations, 5, 15, 29, 45))
                .isEqualTo(3);
        assertThat(ProbeSamples.longestOverlapping(starts, durations, 5, 15, 0, 100))
                .isEqualTo(15);
        assertThat(ProbeSamples.longestOverlapping(starts, durations, 0, 0, 0, 100))
                .isZero();
    }

    @Test
    void shouldForceARealFileAtItsIntervalAndDeleteItWhenClosed(@TempDir Path dir) throws Exception {
        long began = System.nanoTime();
        long[] durations;
        long elapsed;
        try (DiskProbe probe = DiskProbe.start(dir, TimeUnit.MILLISECONDS.toNanos(5))) {
            assertThat(dir.resolve("disk-probe.dat")).hasSize(DiskProbe.FILE_BYTES);
            probe.awaitForces(20);
            long now = System.nanoTime();
            durations = probe.durationsIn(began, now);
            elapsed = now - began;
            assertThat(probe.failure()).isNull();
            assertThat(probe.longestOverlapping(began, now))
                    .isEqualTo(java.util.Arrays.stream(durations).max().orElseThrow());
        }
        // the 20 forces waited for (one more may have started meanwhile); never more than the interval allows
        assertThat((long) durations.length).isBetween(20L, elapsed / TimeUnit.MILLISECONDS.toNanos(5) + 1);
        // the time blocked in a write and force: never negative, zero when the thread ran or waited for a CPU all along
        assertThat(java.util.Arrays.stream(durations).min().orElseThrow()).isNotNegative();
        assertThat(Files.exists(dir.resolve("disk-probe.dat"))).isFalse();
    }

    @Test
    void shouldRefuseAnIntervalThatIsNotPositive(@TempDir Path dir) {
        assertThatThrownBy(() -> DiskProbe.start(dir, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldDescribeTheForcesOfARun() {
        long[] durations = new long[1000];
        java.util.Arrays.fill(durations, 200_000); // 0.2 ms
        durations[10] = 12_000_000; // one of 12 ms
        durations[20] = 55_000_000; // one of 55 ms
        String text = DiskBench.describe(Path.of("/data"), durations, 30);
        assertThat(text)
                .contains("1000 forces of 512 B in 30 s")
                .contains("p50 0.20")
                .contains("max 55.0")
                .contains("10 ms: 2 (4.0 a minute)")
                .contains("50 ms: 1 (2.0 a minute)");
    }

    @Test
    void shouldReadTheTimeOnACpuAndWaitingForOneFromASchedstatLine() {
        long[] into = new long[2];
        assertThat(DiskProbe.parseSchedstat(
                        java.nio.ByteBuffer.wrap(
                                "74294365 410500375 264\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII)),
                        into))
                .isTrue();
        assertThat(into).containsExactly(74294365L, 410500375L);
        assertThat(DiskProbe.parseSchedstat(java.nio.ByteBuffer.wrap("12".getBytes()), into))
                .isFalse();
        assertThat(DiskProbe.parseSchedstat(java.nio.ByteBuffer.wrap("x 1 2".getBytes()), into))
                .isFalse();
        assertThat(DiskProbe.readSchedstat(null, java.nio.ByteBuffer.allocate(8), into))
                .isFalse();
    }
}
