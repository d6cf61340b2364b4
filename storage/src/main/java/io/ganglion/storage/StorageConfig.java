package io.ganglion.storage;

import java.util.function.LongSupplier;

/**
 * Settings of one data directory.
 *
 * @param segmentBytes a segment rolls to a new file once it would grow past this (a larger record gets its own)
 * @param journalFileBytes a journal file rolls once a frame would not fit; journal files are preallocated to this
 * @param checkpointJournalBytes a checkpoint starts once the journal grew this much since the last one
 * @param maxBatchBytes bytes the journal writer copies into one write; a drained batch may take several writes but
 *     is forced once
 * @param maxRecordBytes largest frame accepted, header included
 * @param preallocateJournal whether journal files are filled with zeros ahead of use, so a force need not update the
 *     file size
 * @param epochMillis the clock for record timestamps
 */
public record StorageConfig(
        int segmentBytes,
        int journalFileBytes,
        long checkpointJournalBytes,
        int maxBatchBytes,
        int maxRecordBytes,
        boolean preallocateJournal,
        LongSupplier epochMillis) {

    public StorageConfig {
        requireAtLeast("segmentBytes", segmentBytes, RecordDescriptor.HEADER_LENGTH);
        requireAtLeast("journalFileBytes", journalFileBytes, RecordDescriptor.HEADER_LENGTH);
        requireAtLeast("checkpointJournalBytes", checkpointJournalBytes, 1);
        requireAtLeast("maxBatchBytes", maxBatchBytes, 4096);
        requireAtLeast("maxRecordBytes", maxRecordBytes, RecordDescriptor.HEADER_LENGTH);
        if (segmentBytes > 1 << 30) {
            throw new IllegalArgumentException("segmentBytes above 1 GiB: " + segmentBytes);
        }
        if (epochMillis == null) {
            throw new IllegalArgumentException("epochMillis clock is required");
        }
    }

    /** 64 MiB segments and journal files, a checkpoint every 128 MiB of journal, 8 MiB records at most. */
    public static StorageConfig defaults(LongSupplier epochMillis) {
        return new StorageConfig(64 << 20, 64 << 20, 128L << 20, 4 << 20, 8 << 20, true, epochMillis);
    }

    public StorageConfig withSegmentBytes(int bytes) {
        return new StorageConfig(
                bytes,
                journalFileBytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis);
    }

    public StorageConfig withJournalFileBytes(int bytes) {
        return new StorageConfig(
                segmentBytes,
                bytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis);
    }

    public StorageConfig withCheckpointJournalBytes(long bytes) {
        return new StorageConfig(
                segmentBytes, journalFileBytes, bytes, maxBatchBytes, maxRecordBytes, preallocateJournal, epochMillis);
    }

    public StorageConfig withPreallocateJournal(boolean preallocate) {
        return new StorageConfig(
                segmentBytes,
                journalFileBytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocate,
                epochMillis);
    }

    private static void requireAtLeast(String name, long value, long minimum) {
        if (value < minimum) {
            throw new IllegalArgumentException(name + " must be at least " + minimum + ": " + value);
        }
    }
}
