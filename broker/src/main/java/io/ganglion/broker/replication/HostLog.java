package io.ganglion.broker.replication;

import io.ganglion.broker.Shard;
import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.ObjectId;
import io.ganglion.replication.EpochHistory;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.replication.RecoveredLog;
import io.ganglion.storage.AppendOutcome;
import io.ganglion.storage.DurabilityListener;
import io.ganglion.storage.LogRecord;
import io.ganglion.storage.LogTime;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.SealResult;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ReplicaHost}'s side of its object's {@link ReplicaLog}: opening and the recovered picture the replica starts
 * from, appends at the replica's own offsets, truncation and reseeding, and decoded reads, the newest from the owner's
 * {@link RecentRecords}. On the host's shard thread; the log is set by {@link #open()}, the host's first task.
 */
final class HostLog {
    private static final Logger LOG = LoggerFactory.getLogger(HostLog.class);
    private static final int READ_BYTES = 1 << 20;
    /** Ranges shorter than this are read record by record (see {@link #collect}). */
    private static final long SMALL_READ_RECORDS = 16;
    /**
     * Payload bytes one {@code ReadLog} answers with at most (at least one record): its records go out in one frame,
     * which must stay below the peer link's max frame length (16 MiB by default). The replica asks again from where
     * the answer ended (feeding resumes on progress, an install asks its source again). A read is one task on the
     * shard, decoded there, and every other queue of the shard waits for it: a catch-up read of 4 MiB holds the
     * owner's own confirms for tens of milliseconds, so the catch-up goes in smaller steps.
     */
    static final long READ_LIMIT_BYTES = 512L << 10;
    /** Records and bytes of the newest records one host keeps in heap (see {@link RecentRecords}). */
    private static final int RECENT_RECORDS = 8192;

    private static final long RECENT_BYTES = 4L << 20;
    /** Bytes a stored record's frame takes beyond its {@link Record#size()}, about. */
    private static final long RECORD_FRAME_SLACK = 64;

    private static final ByteBuffer NO_SNAPSHOT_DATA = ByteBuffer.allocate(0).asReadOnlyBuffer();

    private final ObjectId object;
    private final long storageId;
    private final Storage storage;
    private final RecentRecords recent;
    /** Holds the storage payload's prefix of the record being appended (on the shard). */
    private final ByteBuffer prefix = ByteBuffer.allocate(ReplicatedRecords.PREFIX_MAX_LENGTH);

    private ReplicaLog log;

    HostLog(ObjectId object, long storageId, Shard shard, Storage storage) {
        this.object = object;
        this.storageId = storageId;
        this.storage = storage;
        this.recent = new RecentRecords(shard, RECENT_RECORDS, RECENT_BYTES);
    }

    /** Thrown by {@link #append} when the log says {@code BACKLOG}: {@code remaining} are the records not taken. */
    static final class Backlogged extends RuntimeException {
        final List<Record> remaining;

        Backlogged(List<Record> remaining) {
            super("backlog", null, false, false);
            this.remaining = remaining;
        }
    }

    /**
     * The log as storage recovered it, cut back to its durable offset, and what the replica starts from: with the ids
     * of the newest {@code publishIndexCapacity} publishes.
     */
    RecoveredLog open(int publishIndexCapacity) throws IOException {
        log = storage.replica(storageId);
        if (log.failed() || log.durableOffset() < log.lastOffset()) {
            // records never reported durable (this process appended them before a failure): never counted, drop them
            log.truncateAfter(log.durableOffset());
        }
        return new RecoveredLog(
                log.startOffset(),
                log.lastOffset(),
                history(log.epochHistory()),
                Epoch.of(Math.max(0, log.sealedEpoch())),
                newestPublishes(publishIndexCapacity));
    }

    /**
     * The publish ids of the newest records: the replica remembers only those ({@code PublishIndex}), so a long
     * backlog costs no full scan of the log at open.
     */
    private Map<PublishId, Long> newestPublishes(int capacity) throws IOException {
        Map<PublishId, Long> published = new HashMap<>();
        long next = Math.max(log.startOffset(), log.lastOffset() - capacity + 1);
        while (next <= log.lastOffset()) {
            List<LogRecord> records = log.read(next, READ_BYTES);
            if (records.isEmpty()) {
                break;
            }
            for (LogRecord stored : records) {
                if (ReplicatedRecords.decode(stored) instanceof Record.Message message) {
                    published.put(message.id(), message.offset());
                }
                next = stored.offset() + 1;
            }
        }
        return published;
    }

    boolean isOpen() {
        return log != null;
    }

    /** Where the journal reports this log's durability; {@code null} to stop hearing it. Open logs only. */
    void durabilityListener(DurabilityListener listener) {
        log.durabilityListener(listener);
    }

    /** Exact on the shard thread: a truncate waits for its force before it returns. */
    long durableOffset() {
        return log.durableOffset();
    }

    /** Drops the newest records kept in heap (the host stopped, or its log was reseeded). */
    void clearRecent() {
        recent.clear();
    }

    /**
     * Appends {@code records} at their own offsets, a message stamped with its admission time and the others with
     * {@code now}; an {@code owning} replica keeps them in heap too.
     *
     * @throws Backlogged when the log's segment writer is far behind, with the records not taken
     * @throws StorageException when the log refuses or fails an append
     */
    void append(List<Record> records, boolean owning, long now) throws StorageException {
        // only an owner reads its newest records back (feeding followers, delivering); a follower keeping them would
        // only hold them across young collections, which then copy them
        if (!owning && recent.size() > 0) {
            recent.clear();
        }
        for (int i = 0; i < records.size(); i++) {
            Record record = records.get(i);
            long epoch = record.epoch().value();
            // a message keeps its owner's admission time on every copy (its age for a TTL); the rest get this one's
            long stamp = record instanceof Record.Message message ? message.timestampMs() : now;
            // the replica streams and admits only above its fence, which is the log's sealed epoch: a record at or
            // below it is an install copying the sealed epochs up to the recovery point
            AppendOutcome outcome = epoch <= log.sealedEpoch()
                    ? log.appendCopy(
                            record.offset(),
                            epoch,
                            ReplicatedRecords.type(record),
                            stamp,
                            ReplicatedRecords.prefix(record, prefix),
                            ReplicatedRecords.body(record))
                    : log.appendAt(
                            record.offset(),
                            epoch,
                            ReplicatedRecords.type(record),
                            stamp,
                            ReplicatedRecords.prefix(record, prefix),
                            ReplicatedRecords.body(record));
            switch (outcome) {
                case AppendOutcome.Appended appended -> {
                    if (owning) {
                        recent.appended(record);
                    }
                }
                case AppendOutcome.Rejected rejected
                when rejected.reason() == AppendOutcome.Reason.BACKLOG ->
                    throw new Backlogged(List.copyOf(records.subList(i, records.size())));
                case AppendOutcome.Rejected rejected ->
                    throw new StorageException("append of " + record.offset() + " refused: " + rejected.reason());
                case AppendOutcome.Failed failed ->
                    throw new StorageException("append of " + record.offset() + " failed", failed.cause());
            }
        }
    }

    /** Cuts the log from offset {@code from} on. */
    void truncateFrom(long from) throws IOException {
        log.truncateAfter(from - 1);
        recent.truncateFrom(from);
    }

    /** Restarts the log at {@code start}: everything below it was settled, so the snapshot holds nothing. */
    void reseed(long start, EpochHistory history) throws IOException {
        recent.clear();
        log.installSnapshot(start - 1, storageHistory(history), NO_SNAPSHOT_DATA);
    }

    /** Persists the seal of {@code epoch}; completes once forced, on the store's completion thread. */
    CompletableFuture<SealResult> seal(Epoch epoch) {
        return log.seal(epoch.value());
    }

    /** Discards the segments wholly below {@code below}; a failure only logs. */
    void discard(long below) {
        log.discardBefore(below).whenComplete((start, error) -> {
            if (error != null) {
                // nothing lost: the segments stay until the next discard; the replica reads only above its start
                LOG.warn("event=replica_discard_failed object={} below={} cause={}", object, below, error.toString());
            }
        });
    }

    /** See {@link LogTime#firstOffsetAtOrAfter}; 0 when not open. */
    long firstOffsetAtOrAfter(long epochMillis, long from) throws IOException {
        return log == null ? 0 : LogTime.firstOffsetAtOrAfter(log, epochMillis, from);
    }

    /** See {@link LogTime#retainedStart}; 0 when not open. */
    long retainedStart(long maxBytes, long appendedBeforeMs) throws IOException {
        return log == null ? 0 : LogTime.retainedStart(log, maxBytes, appendedBeforeMs);
    }

    /**
     * Records {@code from..to} for the replica's {@code ReadLog}; fewer when the log no longer holds them (discarded
     * meanwhile) or past {@link #READ_LIMIT_BYTES}: the replica copes with both.
     */
    List<Record> readForReplica(long from, long to) throws IOException {
        if (from < log.startOffset()) {
            return new ArrayList<>();
        }
        return collect(from, to, READ_LIMIT_BYTES);
    }

    /** Records {@code from..to} for the queue layer, from the log's start at the earliest; empty when not open. */
    List<Record> readRecords(long from, long to, long limitBytes) throws IOException {
        if (log == null) {
            return new ArrayList<>();
        }
        return collect(Math.max(from, log.startOffset()), to, limitBytes);
    }

    /**
     * The bytes to ask storage for when {@code count} records are wanted: about what they take (storage reads and
     * checks every record its budget covers, so a megabyte read for a few records is mostly waste), one byte (exactly
     * one record) for short ranges, {@link #READ_BYTES} at most.
     */
    private int readBudget(long count) {
        if (count < SMALL_READ_RECORDS) {
            return 1;
        }
        return (int) Math.min(READ_BYTES, count * (recent.averageBytes() + RECORD_FRAME_SLACK));
    }

    /**
     * Records {@code from..to} of the log, decoded, stopping before the record that would take their sizes past
     * {@code limitBytes} (at least one record). The newest come from {@link #recent}; older ones from storage, record
     * by record for short ranges (a delivery must not copy a megabyte of the log behind it). Fewer when the log holds
     * fewer. {@code from} is at or above the log's start.
     */
    private List<Record> collect(long from, long to, long limitBytes) throws IOException {
        List<Record> records = new ArrayList<>();
        long last = Math.min(to, log.lastOffset());
        long next = from;
        long bytes = 0;
        while (next <= last) {
            Record held = recent.get(next);
            if (held != null) {
                bytes += held.size();
                if (bytes > limitBytes && !records.isEmpty()) {
                    return records;
                }
                records.add(held);
                next++;
                continue;
            }
            List<LogRecord> stored = log.read(next, readBudget(last - next + 1));
            if (stored.isEmpty()) {
                break;
            }
            for (LogRecord one : stored) {
                if (one.offset() > last) {
                    return records;
                }
                Record record = ReplicatedRecords.decode(one);
                bytes += record.size();
                if (bytes > limitBytes && !records.isEmpty()) {
                    return records;
                }
                records.add(record);
                next = one.offset() + 1;
            }
        }
        return records;
    }

    /** Storage's history as the replica's. Two epochs starting at one offset (never written so): the later one wins. */
    static EpochHistory history(io.ganglion.storage.EpochHistory stored) {
        EpochHistory history = EpochHistory.EMPTY;
        List<io.ganglion.storage.EpochHistory.Entry> entries = stored.entries();
        for (int i = 0; i < entries.size(); i++) {
            io.ganglion.storage.EpochHistory.Entry entry = entries.get(i);
            boolean shadowed = i + 1 < entries.size() && entries.get(i + 1).firstOffset() == entry.firstOffset();
            if (!shadowed) {
                history = history.append(Epoch.of(entry.epoch()), entry.firstOffset());
            }
        }
        return history;
    }

    /** The replica's history as storage's. */
    static io.ganglion.storage.EpochHistory storageHistory(EpochHistory history) {
        List<io.ganglion.storage.EpochHistory.Entry> entries = new ArrayList<>();
        for (long[] entry : history.entries()) {
            entries.add(new io.ganglion.storage.EpochHistory.Entry(entry[0], entry[1]));
        }
        return io.ganglion.storage.EpochHistory.of(entries);
    }
}
