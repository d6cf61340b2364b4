package io.ganglion.broker.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.coordination.Incarnation;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PeerLinkConfigTest {
    private final PeerLinkConfig defaults = PeerLinkConfig.defaults("ganglion", PeerMessages.N1, new Incarnation(7));

    @Test
    void shouldDefaultToPort25672And16MiBFramesAndA50msTo1sBackoff() {
        assertThat(defaults.port()).isEqualTo(25672);
        assertThat(defaults.bindHost()).isEqualTo("0.0.0.0");
        assertThat(defaults.maxFrameLength()).isEqualTo(16 * 1024 * 1024);
        assertThat(defaults.reconnectMin()).isEqualTo(Duration.ofMillis(50));
        assertThat(defaults.reconnectMax()).isEqualTo(Duration.ofSeconds(1));
        assertThat(defaults.refusedRetryDelay()).isGreaterThan(defaults.reconnectMax());
    }

    @Test
    void shouldChangeOnlyWhatAWitherNames() {
        PeerLinkConfig changed = defaults.withListener("127.0.0.1", 0).withIoThreads(1);

        assertThat(changed.bindHost()).isEqualTo("127.0.0.1");
        assertThat(changed.port()).isZero();
        assertThat(changed.ioThreads()).isEqualTo(1);
        assertThat(changed.withListener("0.0.0.0", 25672).withIoThreads(2)).isEqualTo(defaults);
    }

    @Test
    void shouldRefuseValuesOutOfRange() {
        assertThatThrownBy(() -> defaults.withListener("127.0.0.1", 65536))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> defaults.withMaxFrameLength(100)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> defaults.withIoThreads(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() ->
                        defaults.withReconnect(Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(30)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reconnectMax");
        assertThatThrownBy(() -> defaults.withTimeouts(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
