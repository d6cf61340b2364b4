package io.ganglion.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.ganglion.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaderPathWarmupTest {
    @TempDir
    Path dir;

    @Test
    void shouldElectCommitAndLeaveNothingBehind() {
        RatisLogConfig template = RatisLogConfig.of("n1", List.of(new Voter("n1", "127.0.0.1", 1)), dir.resolve("real"))
                .withElectionTimeouts(Duration.ofMillis(100), Duration.ofMillis(200));
        Path warmup = dir.resolve("warmup");

        Optional<Duration> took = LeaderPathWarmup.run(warmup, template, Duration.ofSeconds(20));

        assertThat(took).isPresent();
        // its servers stop and its files go in the background
        Poll.within(Duration.ofSeconds(20), Duration.ofMillis(20), () -> !Files.exists(warmup));
        assertThat(warmup).doesNotExist();
    }

    @Test
    void shouldDoNothingForAListener() {
        RatisLogConfig listener = RatisLogConfig.of(
                "n2",
                List.of(new Voter("n1", "127.0.0.1", 1)),
                List.of(new Voter("n2", "127.0.0.1", 2)),
                dir.resolve("real"));
        Path warmup = dir.resolve("warmup");

        assertThat(LeaderPathWarmup.run(warmup, listener, Duration.ofSeconds(20)))
                .isEmpty();
        assertThat(warmup).doesNotExist();
    }
}
