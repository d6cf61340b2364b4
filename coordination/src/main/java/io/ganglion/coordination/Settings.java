package io.ganglion.coordination;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The values of the runtime settings: defaults, overridden by the configuration file, by flags and, for a running
 * cluster, by {@code ctl settings set} through the metadata log. Immutable; every value is within its bounds and the
 * values agree with each other.
 */
public final class Settings {
    private static final Settings DEFAULTS = new Settings(Map.of());

    private final Map<String, Long> overrides;

    private Settings(Map<String, Long> overrides) {
        this.overrides = Collections.unmodifiableMap(new TreeMap<>(overrides));
    }

    public static Settings defaults() {
        return DEFAULTS;
    }

    public long value(Setting setting) {
        Long value = overrides.get(setting.name());
        return value == null ? setting.defaultValue() : value;
    }

    /** The settings that differ from their defaults. */
    public Map<String, Long> overrides() {
        return overrides;
    }

    /**
     * These settings with {@code name} set from its textual form.
     *
     * @throws SettingException for an unknown name, a value not of the setting's type, out of bounds, or inconsistent
     *     with another setting; the message names the setting
     */
    public Settings with(String name, String raw) {
        return withAll(Map.of(name, raw));
    }

    /** These settings with {@code setting} set to {@code value}. */
    public Settings with(Setting setting, long value) {
        Map<String, Long> next = new LinkedHashMap<>(overrides);
        next.put(setting.name(), setting.check(value));
        return checked(next);
    }

    /**
     * These settings with every entry of {@code raw} applied, checked together, so related settings can change in one
     * step (raising both backoff bounds, say).
     *
     * @throws SettingException as {@link #with(String, String)}
     */
    public Settings withAll(Map<String, String> raw) {
        Map<String, Long> next = new LinkedHashMap<>(overrides);
        for (Map.Entry<String, String> entry : raw.entrySet()) {
            Setting setting = RuntimeSettings.named(entry.getKey());
            next.put(setting.name(), setting.parse(entry.getValue()));
        }
        return checked(next);
    }

    private static Settings checked(Map<String, Long> values) {
        Settings settings = new Settings(values);
        requireAtMost(settings, RuntimeSettings.BACKOFF_MIN_MS, RuntimeSettings.BACKOFF_MAX_MS);
        requireBelow(settings, RuntimeSettings.HEARTBEAT_MS, RuntimeSettings.EXPIRY_MS);
        return settings;
    }

    private static void requireAtMost(Settings settings, Setting lower, Setting upper) {
        if (settings.value(lower) > settings.value(upper)) {
            throw new SettingException("setting " + lower.name() + " (" + settings.value(lower) + ") must not exceed "
                    + upper.name() + " (" + settings.value(upper) + ")");
        }
    }

    private static void requireBelow(Settings settings, Setting lower, Setting upper) {
        if (settings.value(lower) >= settings.value(upper)) {
            throw new SettingException("setting " + lower.name() + " (" + settings.value(lower) + ") must be below "
                    + upper.name() + " (" + settings.value(upper) + ")");
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Settings settings && overrides.equals(settings.overrides);
    }

    @Override
    public int hashCode() {
        return overrides.hashCode();
    }

    @Override
    public String toString() {
        return "Settings" + overrides;
    }
}
