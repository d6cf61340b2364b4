package io.ganglion.storage;

/**
 * The kind of a record. Log records ({@link #DATA}, {@link #EPOCH_START}) take an offset in a replica's log and are
 * written to both the journal and the replica's segments. Control records only go to the journal: they make a change
 * to a replica durable in order with its appends, and a checkpoint later folds them into the replica's files.
 */
public enum RecordType {
    /** A message or stream entry; the payload is opaque to storage. */
    DATA(1, true),
    /** A new owner's first record of an epoch (DESIGN.md section 8, activate). */
    EPOCH_START(2, true),
    /** Control: the log was truncated after the offset field (a divergent suffix dropped). */
    TRUNCATE(16, false),
    /** Control: whole segments below the offset field were discarded (retention). */
    DISCARD(17, false),
    /** Control: the replica sealed the epoch field; appends of epoch &lt;= it are refused. */
    SEAL(18, false),
    /** Control: a snapshot at the offset field replaced the log (reseed); the payload is the epoch history. */
    SNAPSHOT(19, false),
    /** Control: the replica was deleted; its files go, and records of the object after it start a new log. */
    DELETE(20, false),
    /**
     * Journal framing, of no replica: ends a run of journal frames (see {@link RecordDescriptor}, "Journal runs"); the
     * offset field carries the run's start position, the epoch field its frame count, the timestamp field the sum of
     * its frames' CRCs.
     */
    COMMIT(21, false);

    private static final RecordType[] BY_CODE = new RecordType[32];

    static {
        for (RecordType type : values()) {
            BY_CODE[type.code] = type;
        }
    }

    private final byte code;
    private final boolean logRecord;

    RecordType(int code, boolean logRecord) {
        this.code = (byte) code;
        this.logRecord = logRecord;
    }

    /** The byte stored in the record header. */
    public byte code() {
        return code;
    }

    /** Whether records of this type take an offset in the log (and live in segments). */
    public boolean logRecord() {
        return logRecord;
    }

    /** The type for a header byte, or {@code null} for an unknown code (a corrupt record). */
    static RecordType ofCode(byte code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
