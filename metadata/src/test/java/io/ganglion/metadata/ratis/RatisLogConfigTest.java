package io.ganglion.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RatisLogConfigTest {
    private static final List<Voter> VOTERS =
            List.of(new Voter("n1", "127.0.0.1", 1), new Voter("n2", "127.0.0.1", 2), new Voter("n3", "127.0.0.1", 3));

    @Test
    void shouldDefaultToFastFailoverTimeouts() {
        RatisLogConfig config = RatisLogConfig.of("n2", VOTERS, Path.of("/tmp/x"));
        assertThat(config.electionTimeoutMin()).isEqualTo(Duration.ofMillis(150));
        assertThat(config.electionTimeoutMax()).isEqualTo(Duration.ofMillis(300));
        assertThat(config.self()).isEqualTo(VOTERS.get(1));
        assertThat(config.withSnapshots(5, true).snapshotThreshold()).isEqualTo(5);
    }

    @Test
    void shouldRefuseAConfigurationThatCannotWork() {
        assertThatThrownBy(() -> RatisLogConfig.of("n4", VOTERS, Path.of("/tmp/x")))
                .hasMessageContaining("not among the voters");
        assertThatThrownBy(() ->
                        RatisLogConfig.of("n1", List.of(VOTERS.get(0), new Voter("n1", "other", 9)), Path.of("/tmp/x")))
                .hasMessageContaining("listed twice");
        RatisLogConfig config = RatisLogConfig.of("n1", VOTERS, Path.of("/tmp/x"));
        assertThatThrownBy(() -> config.withElectionTimeouts(Duration.ofMillis(300), Duration.ofMillis(300)))
                .hasMessageContaining("0 < min < max");
        assertThatThrownBy(() -> config.withProposeTimeout(Duration.ofMillis(200)))
                .hasMessageContaining("must exceed the election timeout");
        assertThatThrownBy(() -> config.withSnapshots(0, false)).hasMessageContaining("positive");
        assertThatThrownBy(() -> config.withLogSegmentBytes(10)).hasMessageContaining("1 KiB");
    }
}
