package io.ganglion.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerChildTest {
    @TempDir
    Path dir;

    /** A broker that exits at start is reported at once, with the last lines it wrote into its log. */
    @Test
    void shouldReportABrokerThatExitsAtStartWithItsLastLines() throws Exception {
        BrokerChild broker = new BrokerChild(
                dir.resolve("b"),
                List.of("-Xmx64m"),
                BrokerChild.freePort(),
                BrokerChild.freePort(),
                Map.of("no.such.setting", "1"));
        try {
            broker.launch();
            assertThatThrownBy(broker::awaitListening)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("broker exited")
                    .hasMessageContaining("no.such.setting");
        } finally {
            broker.kill();
        }
    }

    /**
     * Ports are handed out below the ephemeral range, each once, and free: nothing bound to port 0 (an outgoing
     * connection, a warm-up group) can take one before its broker binds it.
     */
    @Test
    void shouldHandOutFreePortsBelowTheEphemeralRangeEachOnce() throws Exception {
        java.util.Set<Integer> ports = new java.util.HashSet<>();
        for (int i = 0; i < 20; i++) {
            int port = BrokerChild.freePort();
            assertThat(port)
                    .isBetween(BrokerChild.FIRST_PORT, BrokerChild.LAST_PORT - 1)
                    .isLessThan(32_768);
            assertThat(ports.add(port)).as("port %d handed out twice", port).isTrue();
        }
        int taken = BrokerChild.freePort();
        try (java.net.ServerSocket socket = new java.net.ServerSocket(taken)) {
            assertThat(BrokerChild.freePort()).isNotEqualTo(taken);
        }
    }
}
