package io.ganglion.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SettingsTest {

    @Test
    void shouldHaveTheDocumentedDefaults() {
        Settings settings = Settings.defaults();
        assertThat(settings.value(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS)).isEqualTo(300_000);
        assertThat(settings.value(RuntimeSettings.RETENTION_PROTECT_MS)).isEqualTo(60_000);
        assertThat(settings.value(RuntimeSettings.RESEND_WINDOW_MS)).isEqualTo(35_000);
        assertThat(RuntimeSettings.all())
                .extracting(Setting::name)
                .containsExactly(
                        "replication.follower_loss_hold_ms",
                        "replication.retention_protect_ms",
                        "replication.resend_window_ms",
                        "liveness.heartbeat_ms",
                        "liveness.expiry_ms",
                        "liveness.eager_failover_ms",
                        "controller.tick_ms",
                        "recovery.backoff_min_ms",
                        "recovery.backoff_max_ms");
        assertThat(RuntimeSettings.all())
                .allSatisfy(setting ->
                        assertThat(setting.description()).isNotBlank().doesNotContain("\n"));
    }

    @Test
    void shouldSetAValueFromText() {
        Settings settings = Settings.defaults().with("replication.follower_loss_hold_ms", "0");
        assertThat(settings.value(RuntimeSettings.FOLLOWER_LOSS_HOLD_MS)).isZero();
        assertThat(settings.overrides()).containsEntry("replication.follower_loss_hold_ms", 0L);
        assertThat(Settings.defaults().with("replication.follower_loss_hold_ms", "300_000"))
                .isEqualTo(Settings.defaults().with("replication.follower_loss_hold_ms", "300000"));
    }

    @Test
    void shouldRejectUnknownNameNamingIt() {
        assertThatThrownBy(() -> Settings.defaults().with("replication.follower_hold_ms", "10"))
                .isInstanceOf(SettingException.class)
                .hasMessageContaining("unknown setting 'replication.follower_hold_ms'")
                .hasMessageContaining("replication.follower_loss_hold_ms");
    }

    @Test
    void shouldRejectNegativeHold() {
        assertThatThrownBy(() -> Settings.defaults().with("replication.follower_loss_hold_ms", "-1"))
                .isInstanceOf(SettingException.class)
                .hasMessage("setting replication.follower_loss_hold_ms: -1 is out of range, allowed 0 to 86400000");
    }

    @Test
    void shouldRejectNonNumber() {
        assertThatThrownBy(() -> Settings.defaults().with("liveness.expiry_ms", "1s"))
                .isInstanceOf(SettingException.class)
                .hasMessage("setting liveness.expiry_ms: expected a whole number of milliseconds, got '1s'");
    }

    @Test
    void shouldRejectInconsistentBackoffBoundsButAcceptThemChangedTogether() {
        assertThatThrownBy(() -> Settings.defaults().with("recovery.backoff_min_ms", "5000"))
                .isInstanceOf(SettingException.class)
                .hasMessageContaining("recovery.backoff_min_ms (5000) must not exceed recovery.backoff_max_ms (2000)");
        Settings both = Settings.defaults()
                .withAll(Map.of("recovery.backoff_min_ms", "5000", "recovery.backoff_max_ms", "60000"));
        assertThat(both.value(RuntimeSettings.BACKOFF_MIN_MS)).isEqualTo(5000);
    }

    @Test
    void shouldRejectHeartbeatNotBelowExpiry() {
        assertThatThrownBy(() -> Settings.defaults().with("liveness.heartbeat_ms", "2000"))
                .isInstanceOf(SettingException.class)
                .hasMessageContaining("liveness.heartbeat_ms (2000) must be below liveness.expiry_ms (2000)");
    }

    @Test
    void shouldLeaveImageUnchangedWhenSettingCommandIsRejected() {
        CoordinationImage image = CoordinationImage.empty();
        CoordinationImage.Applied applied =
                image.apply(new CoordinationCommand.SetSettings(Map.of("replication.follower_loss_hold_ms", "abc")));
        assertThat(applied.accepted()).isFalse();
        assertThat(applied.rejection().orElseThrow()).contains("replication.follower_loss_hold_ms");
        assertThat(applied.image()).isSameAs(image);
    }
}
