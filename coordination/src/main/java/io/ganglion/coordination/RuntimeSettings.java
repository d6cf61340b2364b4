package io.ganglion.coordination;

import io.ganglion.coordination.Setting.Type;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The registry of every runtime setting Ganglion knows. A name not listed here is an error wherever it appears. */
public final class RuntimeSettings {
    private static final long DAY_MS = 86_400_000L;

    public static final Setting FOLLOWER_LOSS_HOLD_MS = new Setting(
            "replication.follower_loss_hold_ms",
            Type.DURATION_MS,
            300_000,
            0,
            DAY_MS,
            "how long a queue keeps its assignment after losing only a follower; then (0: at once) the follower leaves"
                    + " the epoch without a new one");

    public static final Setting RETENTION_PROTECT_MS = new Setting(
            "replication.retention_protect_ms",
            Type.DURATION_MS,
            60_000,
            0,
            DAY_MS,
            "a follower that reported within this long keeps the owner from discarding records it still needs");

    public static final Setting RESEND_WINDOW_MS = new Setting(
            "replication.resend_window_ms",
            Type.DURATION_MS,
            35_000,
            0,
            DAY_MS,
            "a settled message stays in a queue's log this long after its commit, so that a publish sent again finds"
                    + " its id after a restart or a reseed; below 35000 (the forwarding timeout and 5 s) a re-send may"
                    + " be appended twice");

    public static final Setting HEARTBEAT_MS = new Setting(
            "liveness.heartbeat_ms", Type.DURATION_MS, 100, 10, 60_000, "how often brokers heartbeat the controller");

    public static final Setting EXPIRY_MS = new Setting(
            "liveness.expiry_ms",
            Type.DURATION_MS,
            2_000,
            20,
            600_000,
            "a broker not heard from for this long leaves the live set");

    public static final Setting EAGER_FAILOVER_MS = new Setting(
            "liveness.eager_failover_ms",
            Type.DURATION_MS,
            25,
            0,
            600_000,
            "a broker whose connection closed and did not come back within this long leaves the live set");

    public static final Setting TICK_MS = new Setting(
            "controller.tick_ms", Type.DURATION_MS, 100, 10, 10_000, "how often the controller runs its control loop");

    public static final Setting BACKOFF_MIN_MS = new Setting(
            "recovery.backoff_min_ms",
            Type.DURATION_MS,
            50,
            1,
            600_000,
            "first retry delay of an unanswered seal or install request, per object");

    public static final Setting BACKOFF_MAX_MS = new Setting(
            "recovery.backoff_max_ms",
            Type.DURATION_MS,
            2_000,
            1,
            600_000,
            "longest retry delay of an unanswered seal or install request, per object");

    private static final Map<String, Setting> BY_NAME;

    static {
        Map<String, Setting> byName = new LinkedHashMap<>();
        for (Setting setting : List.of(
                FOLLOWER_LOSS_HOLD_MS,
                RETENTION_PROTECT_MS,
                RESEND_WINDOW_MS,
                HEARTBEAT_MS,
                EXPIRY_MS,
                EAGER_FAILOVER_MS,
                TICK_MS,
                BACKOFF_MIN_MS,
                BACKOFF_MAX_MS)) {
            byName.put(setting.name(), setting);
        }
        BY_NAME = Collections.unmodifiableMap(byName);
    }

    private RuntimeSettings() {}

    /** Every setting, in documentation order. */
    public static List<Setting> all() {
        return List.copyOf(BY_NAME.values());
    }

    public static Optional<Setting> find(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    /**
     * The setting called {@code name}.
     *
     * @throws SettingException naming the unknown setting
     */
    public static Setting named(String name) {
        Setting setting = BY_NAME.get(name);
        if (setting == null) {
            throw new SettingException(
                    "unknown setting '" + name + "'; known settings: " + String.join(", ", BY_NAME.keySet()));
        }
        return setting;
    }
}
