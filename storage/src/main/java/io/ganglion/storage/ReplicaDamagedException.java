package io.ganglion.storage;

/**
 * A replica holds corrupt or missing data that was once durable: a record in the middle of a segment failed its CRC,
 * or a checkpointed record is gone. The replica serves nothing until a snapshot is installed (a reseed).
 */
public final class ReplicaDamagedException extends StorageException {
    private static final long serialVersionUID = 1L;

    private final long objectId;

    public ReplicaDamagedException(long objectId, String reason) {
        super("replica damaged: object=" + objectId + " " + reason);
        this.objectId = objectId;
    }

    public long objectId() {
        return objectId;
    }
}
