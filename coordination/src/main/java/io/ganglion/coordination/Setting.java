package io.ganglion.coordination;

import java.util.Objects;

/**
 * One runtime setting: its name (as in the configuration file and {@code ctl settings set}), its type, default, bounds
 * and a one-line description.
 */
public record Setting(String name, Type type, long defaultValue, long min, long max, String description) {

    /** How a setting's value reads. */
    public enum Type {
        /** A whole number of milliseconds. */
        DURATION_MS("a whole number of milliseconds"),
        /** A whole number. */
        COUNT("a whole number");

        private final String expected;

        Type(String expected) {
            this.expected = expected;
        }

        /** What a value of this type must look like, for error messages. */
        public String expected() {
            return expected;
        }
    }

    public Setting {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(description, "description");
        if (min > max || defaultValue < min || defaultValue > max) {
            throw new IllegalArgumentException(
                    "setting " + name + ": default " + defaultValue + " outside [" + min + ", " + max + "]");
        }
    }

    /**
     * Parses {@code raw} as a value of this setting.
     *
     * @throws SettingException naming the setting when {@code raw} is not of its type or is out of its bounds
     */
    public long parse(String raw) {
        long value;
        try {
            value = Long.parseLong(raw.strip().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new SettingException("setting " + name + ": expected " + type.expected() + ", got '" + raw + "'", e);
        }
        return check(value);
    }

    /**
     * Returns {@code value} if it is within bounds.
     *
     * @throws SettingException naming the setting and its bounds otherwise
     */
    public long check(long value) {
        if (value < min || value > max) {
            throw new SettingException(
                    "setting " + name + ": " + value + " is out of range, allowed " + min + " to " + max);
        }
        return value;
    }
}
