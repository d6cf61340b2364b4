package io.ganglion.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.RuntimeSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerConfigTest {
    @TempDir
    Path dir;

    @Test
    void shouldReadFileThenApplyOverrides() throws Exception {
        Path file = dir.resolve("ganglion.conf");
        Files.writeString(file, """
                # a broker
                node.id = b1
                amqp.port = 5680
                replication.follower_loss_hold_ms = 0
                """);
        BrokerConfig config = BrokerConfig.load(file, Map.of("amqp.port", "5690"));
        assertThat(config.nodeId()).isEqualTo("b1");
        assertThat(config.amqpPort()).isEqualTo(5690);
        assertThat(config.dataDir()).isEqualTo(Path.of("data", "b1"));
        assertThat(config.settings().value(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS))
                .isZero();
    }

    @Test
    void shouldRefuseUnknownKeysBadValuesAndBadLines() throws IOException {
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("amqp.prot", "1")))
                .isInstanceOf(BrokerConfig.ConfigException.class)
                .hasMessageContaining("unknown setting 'amqp.prot'");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("amqp.port", "70000")))
                .hasMessageContaining("amqp.port: 70000 is not a port");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("replication.follower_loss_hold_ms", "-5")))
                .hasMessageContaining("replication.follower_loss_hold_ms: -5 is out of range");
        Path file = dir.resolve("bad.conf");
        Files.writeString(file, "node.id b1\n");
        assertThatThrownBy(() -> BrokerConfig.load(file, Map.of()))
                .hasMessageContaining("line 1: expected 'key = value'");
        assertThatThrownBy(() -> BrokerConfig.load(dir.resolve("missing.conf"), Map.of()))
                .hasMessageContaining("cannot read config file");
    }

    @Test
    void shouldReadTheSeedListAndTakeThisBrokersPortsFromIt() throws Exception {
        BrokerConfig config = BrokerConfig.load(
                null,
                Map.of(
                        "node.id",
                        "b2",
                        "cluster.seeds",
                        "b1@10.0.0.1:25672:25680, b2@10.0.0.2:26000:26001 ,b3@10.0.0.3"));
        assertThat(config.clustered()).isTrue();
        assertThat(config.seeds()).hasSize(3);
        assertThat(config.self().peerPort()).isEqualTo(26000);
        assertThat(config.self().metadataPort()).isEqualTo(26001);
        assertThat(config.seeds().get(2).peerPort()).isEqualTo(25672);
        assertThat(config.seeds().get(2).metadataPort()).isEqualTo(25680);
        assertThat(BrokerConfig.load(null, Map.of()).clustered()).isFalse();
    }

    @Test
    void shouldRefuseBadSeedLists() {
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("node.id", "b9", "cluster.seeds", "b1@h,b2@h")))
                .hasMessageContaining("node.id 'b9' is not in the seed list");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("node.id", "b1", "cluster.seeds", "b1@h,b1@g")))
                .hasMessageContaining("b1 is listed twice");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("node.id", "b1", "cluster.seeds", "b1@h:99999")))
                .hasMessageContaining("bad port '99999'");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("node.id", "b1", "cluster.seeds", "b1-no-host")))
                .hasMessageContaining("expected id@host[:peerPort[:metadataPort]]");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("node.id", "b1", "cluster.seeds", "b1@h:1:2:3")))
                .hasMessageContaining("expected id@host[:peerPort[:metadataPort]]");
    }

    @Test
    void shouldMakeTheFirstThreeOrFiveSeedsVoters() throws Exception {
        assertThat(io.ganglion.broker.cluster.Seed.voterCount(1)).isEqualTo(1);
        assertThat(io.ganglion.broker.cluster.Seed.voterCount(4)).isEqualTo(3);
        assertThat(io.ganglion.broker.cluster.Seed.voterCount(7)).isEqualTo(5);
        BrokerConfig config = BrokerConfig.load(
                null, Map.of("node.id", "b4", "cluster.seeds", "b1@h:1:2,b2@h:3:4,b3@h:5:6,b4@h:7:8"));
        var ratis = Broker.ratisConfig(config);
        assertThat(ratis.voters()).extracting(v -> v.id()).containsExactly("b1", "b2", "b3");
        assertThat(ratis.listeners()).extracting(v -> v.id()).containsExactly("b4");
        assertThat(ratis.self().port()).isEqualTo(8);
    }

    @Test
    void shouldTakeElectionTimeoutsAndRefuseBadOnes() throws Exception {
        BrokerConfig config = BrokerConfig.load(
                null, Map.of("metadata.election_timeout_min_ms", "150", "metadata.election_timeout_max_ms", "300"));
        assertThat(config.electionTimeoutMinMs()).isEqualTo(150);
        assertThat(Broker.ratisConfig(config.withSeeds(io.ganglion.broker.cluster.Seed.parseList("ganglion-1@h")))
                        .electionTimeoutMax())
                .isEqualTo(java.time.Duration.ofMillis(300));
        assertThat(BrokerConfig.defaults().electionTimeoutMaxMs()).isEqualTo(200);
        assertThatThrownBy(() -> BrokerConfig.load(
                        null,
                        Map.of("metadata.election_timeout_min_ms", "300", "metadata.election_timeout_max_ms", "200")))
                .hasMessageContaining("must exceed");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("metadata.election_timeout_min_ms", "5")))
                .hasMessageContaining("between 10 and 60000");
    }

    @Test
    void shouldTakeTheSegmentSizeAndRefuseBadOnes() throws Exception {
        assertThat(BrokerConfig.defaults().segmentBytes()).isEqualTo(64 << 20);
        assertThat(BrokerConfig.load(null, Map.of("storage.segment_bytes", "65_536"))
                        .segmentBytes())
                .isEqualTo(65_536);
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("storage.segment_bytes", "100")))
                .hasMessageContaining("storage.segment_bytes")
                .hasMessageContaining("outside 4096");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("storage.segment_bytes", "big")))
                .hasMessageContaining("expected a whole number");
    }

    @Test
    void shouldTakeTheGroupCommitIntervalAndRefuseBadOnes() throws Exception {
        assertThat(BrokerConfig.defaults().groupCommitMicros()).isEqualTo(2000);
        assertThat(BrokerConfig.load(null, Map.of("storage.group_commit_us", "0"))
                        .groupCommitMicros())
                .isZero();
        assertThat(BrokerConfig.load(null, Map.of("storage.group_commit_us", "2500"))
                        .groupCommitMicros())
                .isEqualTo(2500);
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("storage.group_commit_us", "-1")))
                .hasMessageContaining("storage.group_commit_us")
                .hasMessageContaining("outside 0");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("storage.group_commit_us", "1ms")))
                .hasMessageContaining("expected a whole number");
    }

    @Test
    void shouldTakeTheWarmupFlagAndRefuseAnythingButTrueOrFalse() throws Exception {
        assertThat(BrokerConfig.defaults().metadataWarmup()).isTrue();
        assertThat(BrokerConfig.load(null, Map.of("metadata.warmup", "false")).metadataWarmup())
                .isFalse();
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("metadata.warmup", "yes")))
                .hasMessageContaining("metadata.warmup")
                .hasMessageContaining("expected true or false");
    }

    @Test
    void shouldTakeTheCompilerNiceAndTheSoftMaxHeapShareAndRefuseBadOnes() throws Exception {
        assertThat(BrokerConfig.defaults().compilerNice()).isZero();
        assertThat(BrokerConfig.defaults().softMaxHeapPercent()).isEqualTo(70);
        BrokerConfig set = BrokerConfig.load(null, Map.of("jit.compiler_nice", "19", "heap.soft_max_percent", "0"));
        assertThat(set.compilerNice()).isEqualTo(19);
        assertThat(set.softMaxHeapPercent()).isZero();
        assertThat(BrokerConfig.load(null, Map.of("heap.soft_max_percent", "100"))
                        .softMaxHeapPercent())
                .isEqualTo(100);
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("heap.soft_max_percent", "101")))
                .hasMessageContaining("heap.soft_max_percent")
                .hasMessageContaining("outside 0");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("heap.soft_max_percent", "40%")))
                .hasMessageContaining("expected a whole number");
        assertThatThrownBy(() -> BrokerConfig.load(null, Map.of("jit.compiler_nice", "20")))
                .hasMessageContaining("jit.compiler_nice");
    }
}
