package io.ganglion.sim;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.LogPosition;
import io.ganglion.replication.EpochHistory;
import io.ganglion.replication.PublishId;
import io.ganglion.replication.Record;
import io.ganglion.replication.RecoveredLog;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One object's replica storage on one simulated broker: its records {@code start..end}, how far they are fsynced, the
 * persisted sealed epoch. It outlives the broker process; the {@code Replica} state machine above it does not.
 *
 * <p>A crash keeps every fsynced record and a random prefix of the ones written but not fsynced (the page cache may
 * have reached the disk), of which the last may be torn and is then cut, as the journal's CRC check would. A seal is
 * persisted at the next fsync. Truncation and reseed are durable at once (the storage fsyncs them itself).
 */
public final class SimReplica {
    private final ArrayList<Record> records = new ArrayList<>();
    private long start;
    private long durable = -1;
    private long sealedEpoch;
    private long pendingSeal;
    private boolean flushRequested;
    private EpochHistory history = EpochHistory.EMPTY;

    public long start() {
        return start;
    }

    public long end() {
        return start + records.size() - 1;
    }

    public long durable() {
        return durable;
    }

    public long sealedEpoch() {
        return sealedEpoch;
    }

    public EpochHistory history() {
        return history;
    }

    public LogPosition position() {
        return end() < 0 ? LogPosition.EMPTY : new LogPosition(history.epochAt(end()), end());
    }

    public LogPosition durablePosition() {
        return durable < 0 ? LogPosition.EMPTY : new LogPosition(history.epochAt(durable), durable);
    }

    public long lastEpoch() {
        return history.lastEpoch().value();
    }

    /** The epoch of the record at {@code offset} (which must be at most {@link #end}); 0 before the first epoch. */
    public long epochAt(long offset) {
        return history.epochAt(offset).value();
    }

    /** True when this log durably holds the record of {@code epoch} at {@code offset}. */
    public boolean holdsDurably(long epoch, long offset) {
        return offset <= durable && epochAt(offset) == epoch;
    }

    /** The record at {@code offset}, or null if it was discarded or is past the end. */
    public Record record(long offset) {
        if (offset < start || offset > end()) {
            return null;
        }
        return records.get((int) (offset - start));
    }

    public List<Record> read(long from, long to) {
        List<Record> read = new ArrayList<>();
        for (long offset = Math.max(from, start); offset <= Math.min(to, end()); offset++) {
            read.add(records.get((int) (offset - start)));
        }
        return read;
    }

    void append(List<Record> appended) {
        for (Record record : appended) {
            if (record.offset() != end() + 1) {
                throw new IllegalStateException("append at " + record.offset() + " after end " + end());
            }
            records.add(record);
            history = history.append(record.epoch(), record.offset());
        }
    }

    void truncate(long from) {
        while (end() >= from && !records.isEmpty()) {
            records.remove(records.size() - 1);
        }
        durable = Math.min(durable, end());
        history = history.truncateFrom(Math.max(from, start));
    }

    void discard(long below) {
        long cut = Math.min(below, durable + 1);
        if (cut > start) {
            records.subList(0, (int) (cut - start)).clear();
            start = cut;
        }
    }

    void reseed(long newStart, EpochHistory newHistory) {
        records.clear();
        start = newStart;
        durable = newStart - 1;
        history = newHistory.truncateFrom(newStart);
    }

    void requestSeal(long epoch) {
        pendingSeal = Math.max(pendingSeal, epoch);
    }

    void requestFlush() {
        flushRequested = true;
    }

    long pendingSeal() {
        return pendingSeal;
    }

    /** True if anything was waiting for an fsync. */
    boolean dirty() {
        return durable < end() || pendingSeal > 0 || flushRequested;
    }

    /** fsync: every record written is durable, and so is a requested seal unless {@code persistSeal} is false. */
    void fsync(boolean persistSeal) {
        durable = end();
        if (persistSeal) {
            sealedEpoch = Math.max(sealedEpoch, pendingSeal);
        }
        pendingSeal = 0;
        flushRequested = false;
    }

    /** The process died: keep the durable prefix, a random part of the rest, and cut a torn last record. */
    void crash(SplittableRandom random) {
        long unsynced = end() - durable;
        long survivors = unsynced <= 0 ? 0 : random.nextLong(unsynced + 1);
        if (survivors > 0 && random.nextBoolean()) {
            survivors--; // torn: the CRC check cuts it
        }
        truncate(durable + survivors + 1);
        durable = end();
        pendingSeal = 0;
        flushRequested = false;
    }

    /** What the storage hands the state machine at process start. */
    RecoveredLog recovered() {
        TreeMap<PublishId, Long> published = new TreeMap<>();
        for (Record record : records) {
            if (record instanceof Record.Message message) {
                published.put(message.id(), message.offset());
            }
        }
        return new RecoveredLog(start, end(), history, Epoch.of(sealedEpoch), published);
    }

    /** The number of leading records this log and {@code other} have in common (same epoch at each offset). */
    public long commonPrefix(SimReplica other) {
        return EpochHistory.commonPrefix(history, end(), other.history, other.end());
    }

    /** The epochs of the records at {@code offset} and after. */
    public TreeSet<Long> epochsFrom(long offset) {
        TreeSet<Long> epochs = new TreeSet<>();
        List<long[]> entries = history.entries();
        for (int i = 0; i < entries.size(); i++) {
            long next = i + 1 < entries.size() ? entries.get(i + 1)[1] : end() + 1;
            if (next > offset && entries.get(i)[1] <= end()) {
                epochs.add(entries.get(i)[0]);
            }
        }
        return epochs;
    }

    @Override
    public String toString() {
        return "[" + history + " start=" + start + " end=" + end() + " durable=" + durable + " sealed=" + sealedEpoch
                + "]";
    }
}
