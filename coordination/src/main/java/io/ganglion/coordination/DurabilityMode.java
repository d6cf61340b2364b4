package io.ganglion.coordination;

/**
 * How many copies must be durable before a publish is confirmed: the write requirement W of an object with N copies.
 *
 * <pre>
 *   owner_durable     W = 1
 *   majority_durable  W = floor(N / 2) + 1
 *   all_durable       W = N
 * </pre>
 */
public enum DurabilityMode {
    OWNER_DURABLE("owner_durable"),
    MAJORITY_DURABLE("majority_durable"),
    ALL_DURABLE("all_durable");

    private final String settingName;

    DurabilityMode(String settingName) {
        this.settingName = settingName;
    }

    /** The write requirement W for an object of {@code copies} copies. */
    public int writeRequirement(int copies) {
        if (copies < 1) {
            throw new IllegalArgumentException("copies must be at least 1: " + copies);
        }
        return switch (this) {
            case OWNER_DURABLE -> 1;
            case MAJORITY_DURABLE -> copies / 2 + 1;
            case ALL_DURABLE -> copies;
        };
    }

    /** The name used in configuration and in the {@code x-durability} queue argument. */
    public String settingName() {
        return settingName;
    }

    /**
     * Parses a mode by its setting name.
     *
     * @throws IllegalArgumentException naming the accepted values when {@code name} is none of them
     */
    public static DurabilityMode parse(String name) {
        for (DurabilityMode mode : values()) {
            if (mode.settingName.equals(name)) {
                return mode;
            }
        }
        throw new IllegalArgumentException(
                "unknown durability mode '" + name + "': expected owner_durable, majority_durable or all_durable");
    }
}
