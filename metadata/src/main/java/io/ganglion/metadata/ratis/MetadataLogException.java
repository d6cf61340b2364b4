package io.ganglion.metadata.ratis;

/**
 * A proposal that did not complete: no leader could be reached before the propose timeout, the log closed, or the
 * committed entry could not be applied. Whether a command whose proposal failed was committed is unknown, unless the
 * message says it was; the caller reads the image to find out.
 */
public final class MetadataLogException extends Exception {
    public MetadataLogException(String message, Throwable cause) {
        super(cause == null ? message : message + ": " + cause, cause);
    }
}
