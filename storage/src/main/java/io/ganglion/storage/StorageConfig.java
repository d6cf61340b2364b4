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
 * @param segmentWriteBytes the segment writer leaves a replica's records in its chunks until they add up to this, then
 *     writes them, one call per chunk (it also writes everything when idle, every second, and for a checkpoint)
 * @param writeBehindBytes once the records held by the segment writer, over all replicas, pass this, it writes all of
 *     them
 * @param maxWriteBehindBytes the bound on the memory the write-behind takes (direct memory, in the replicas' chunks;
 *     the store keeps up to half of it in free chunks once a burst used them): past half of it handed to the segment
 *     writer and not yet written (over all replicas), the journal writer waits for the segment writer, so confirms
 *     slow down; past all of it appended and not yet written for one replica, its appends are refused ({@link
 *     AppendOutcome.Reason#BACKLOG})
 * @param groupCommitNanos under load, the journal starts its forces at least this far apart, so that one force covers
 *     what arrived meanwhile instead of a force per record or two (an append that finds the journal idle for longer is
 *     forced at once; the wait is tried only after small batches and dropped for writers that send nothing while it
 *     runs, see JournalWriter); 0 forces as soon as the previous force ended. Each force wakes the journal writer, its
 *     completer and the shards: on the failover bench's steady load (two cores) a millisecond took a third off the
 *     brokers' CPU (docs/storage.md, "Group commit")
 */
public record StorageConfig(
        int segmentBytes,
        int journalFileBytes,
        long checkpointJournalBytes,
        int maxBatchBytes,
        int maxRecordBytes,
        boolean preallocateJournal,
        LongSupplier epochMillis,
        int segmentWriteBytes,
        long writeBehindBytes,
        long maxWriteBehindBytes,
        long groupCommitNanos) {

    /** The journal's group commit interval of a broker: 2 ms (see docs/storage.md, "Group commit interval"). */
    public static final long DEFAULT_GROUP_COMMIT_NANOS = 2_000_000L;

    public static final int DEFAULT_SEGMENT_WRITE_BYTES = 64 << 10;
    public static final long DEFAULT_WRITE_BEHIND_BYTES = 16L << 20;
    public static final long DEFAULT_MAX_WRITE_BEHIND_BYTES = 256L << 20;

    public StorageConfig {
        requireAtLeast("segmentBytes", segmentBytes, RecordDescriptor.HEADER_LENGTH);
        requireAtLeast("journalFileBytes", journalFileBytes, RecordDescriptor.HEADER_LENGTH);
        requireAtLeast("checkpointJournalBytes", checkpointJournalBytes, 1);
        requireAtLeast("maxBatchBytes", maxBatchBytes, 4096);
        requireAtLeast("maxRecordBytes", maxRecordBytes, RecordDescriptor.HEADER_LENGTH);
        requireAtLeast("segmentWriteBytes", segmentWriteBytes, 1);
        requireAtLeast("writeBehindBytes", writeBehindBytes, 1);
        requireAtLeast("maxWriteBehindBytes", maxWriteBehindBytes, Math.max(writeBehindBytes, maxRecordBytes));
        requireAtLeast("groupCommitNanos", groupCommitNanos, 0);
        if (segmentBytes > 1 << 30) {
            throw new IllegalArgumentException("segmentBytes above 1 GiB: " + segmentBytes);
        }
        if (epochMillis == null) {
            throw new IllegalArgumentException("epochMillis clock is required");
        }
    }

    /**
     * Default write-behind: 64 KiB per replica write, everything written past 16 MiB, appends refused past 256 MiB; no
     * group commit interval (a force as soon as the previous one ended).
     */
    public StorageConfig(
            int segmentBytes,
            int journalFileBytes,
            long checkpointJournalBytes,
            int maxBatchBytes,
            int maxRecordBytes,
            boolean preallocateJournal,
            LongSupplier epochMillis) {
        this(
                segmentBytes,
                journalFileBytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis,
                DEFAULT_SEGMENT_WRITE_BYTES,
                DEFAULT_WRITE_BEHIND_BYTES,
                Math.max(DEFAULT_MAX_WRITE_BEHIND_BYTES, maxRecordBytes),
                0);
    }

    /**
     * A broker's: 64 MiB segments and journal files, a checkpoint every 16 MiB of journal, 8 MiB records at most, a
     * group commit interval of {@link #DEFAULT_GROUP_COMMIT_NANOS}. The checkpoint interval bounds what a restart
     * scans twice and writes again into the segments, and that write-back stalls the other brokers' forces on a shared
     * disk (at 128 MiB a restart under the failover bench scanned over 100 MiB twice); a checkpoint costs little, since
     * the segment writer forces every 4 MiB it writes anyway (docs/storage.md).
     */
    public static StorageConfig defaults(LongSupplier epochMillis) {
        return new StorageConfig(64 << 20, 64 << 20, 16L << 20, 4 << 20, 8 << 20, true, epochMillis)
                .withGroupCommitNanos(DEFAULT_GROUP_COMMIT_NANOS);
    }

    public StorageConfig withSegmentBytes(int bytes) {
        return new StorageConfig(
                bytes,
                journalFileBytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis,
                segmentWriteBytes,
                writeBehindBytes,
                maxWriteBehindBytes,
                groupCommitNanos);
    }

    public StorageConfig withJournalFileBytes(int bytes) {
        return new StorageConfig(
                segmentBytes,
                bytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis,
                segmentWriteBytes,
                writeBehindBytes,
                maxWriteBehindBytes,
                groupCommitNanos);
    }

    public StorageConfig withCheckpointJournalBytes(long bytes) {
        return new StorageConfig(
                segmentBytes,
                journalFileBytes,
                bytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis,
                segmentWriteBytes,
                writeBehindBytes,
                maxWriteBehindBytes,
                groupCommitNanos);
    }

    public StorageConfig withPreallocateJournal(boolean preallocate) {
        return new StorageConfig(
                segmentBytes,
                journalFileBytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocate,
                epochMillis,
                segmentWriteBytes,
                writeBehindBytes,
                maxWriteBehindBytes,
                groupCommitNanos);
    }

    public StorageConfig withWriteBehind(int segmentWrite, long writeBehind, long maxWriteBehind) {
        return new StorageConfig(
                segmentBytes,
                journalFileBytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis,
                segmentWrite,
                writeBehind,
                maxWriteBehind,
                groupCommitNanos);
    }

    public StorageConfig withGroupCommitNanos(long nanos) {
        return new StorageConfig(
                segmentBytes,
                journalFileBytes,
                checkpointJournalBytes,
                maxBatchBytes,
                maxRecordBytes,
                preallocateJournal,
                epochMillis,
                segmentWriteBytes,
                writeBehindBytes,
                maxWriteBehindBytes,
                nanos);
    }

    private static void requireAtLeast(String name, long value, long minimum) {
        if (value < minimum) {
            throw new IllegalArgumentException(name + " must be at least " + minimum + ": " + value);
        }
    }
}
