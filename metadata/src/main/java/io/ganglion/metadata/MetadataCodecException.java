package io.ganglion.metadata;

/** Bytes that do not decode to a metadata command: a corrupt log entry or a peer speaking another version. */
public final class MetadataCodecException extends Exception {
    public MetadataCodecException(String message) {
        super(message);
    }

    public MetadataCodecException(String message, Throwable cause) {
        super(message, cause);
    }
}
