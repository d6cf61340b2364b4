package io.ganglion.coordination;

/** A runtime setting that does not exist, or a value that is not of its type or out of its bounds. */
public final class SettingException extends IllegalArgumentException {
    public SettingException(String message) {
        super(message);
    }

    public SettingException(String message, Throwable cause) {
        super(message, cause);
    }
}
