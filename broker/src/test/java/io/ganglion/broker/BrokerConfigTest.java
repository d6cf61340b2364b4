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
}
