package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.LogPosition;
import io.ganglion.replication.ReplicaEffect.Append;
import io.ganglion.replication.ReplicaEffect.Discard;
import io.ganglion.replication.ReplicaEffect.Reseed;
import io.ganglion.replication.ReplicaEffect.Truncate;
import java.util.List;

/**
 * The replica's in-memory mirror of its log, shared by every role: start, end, durable end, epoch history, the fence
 * (the highest epoch whose appends are refused) and the publish-id index. Each change emits the storage effect that
 * makes the log match it.
 */
final class LogState {
    private final Effects out;
    private final PublishIndex published;
    private long start;
    private long end;
    private long durable;
    private EpochHistory history;
    private long fence;

    LogState(RecoveredLog log, Effects out, int publishIndexCapacity) {
        this.out = out;
        this.start = log.start();
        this.end = log.end();
        this.durable = log.end();
        this.history = log.history();
        this.fence = log.sealedEpoch().value();
        this.published = PublishIndex.of(log.published(), publishIndexCapacity);
    }

    long start() {
        return start;
    }

    long end() {
        return end;
    }

    long durable() {
        return durable;
    }

    EpochHistory history() {
        return history;
    }

    long fence() {
        return fence;
    }

    PublishIndex published() {
        return published;
    }

    LogPosition position() {
        return end < 0 ? LogPosition.EMPTY : new LogPosition(history.epochAt(end), end);
    }

    boolean holds(LogPosition point) {
        return point.offset() < 0
                || (end >= point.offset() && history.epochAt(point.offset()).equals(point.epoch()));
    }

    /** Whether {@code epoch} is fenced: appends of it are refused. */
    boolean fenced(Epoch epoch) {
        return fence >= epoch.value();
    }

    void raiseFence(long epoch) {
        fence = Math.max(fence, epoch);
    }

    /** Takes a durability report: false when it moves the durable end nowhere. */
    boolean markDurable(long offset) {
        long next = Math.min(offset, end);
        if (next <= durable) {
            return false;
        }
        durable = next;
        return true;
    }

    void append(List<Record> records) {
        for (Record record : records) {
            if (record.offset() != end + 1) {
                throw new IllegalStateException("append at " + record.offset() + " after end " + end);
            }
            history = history.append(record.epoch(), record.offset());
            end = record.offset();
            if (record instanceof Record.Message message) {
                published.put(message.id(), message.offset());
            }
        }
        out.add(new Append(records));
    }

    void truncate(long from) {
        if (from > end) {
            return;
        }
        out.add(new Truncate(from));
        end = from - 1;
        durable = Math.min(durable, end);
        history = history.truncateFrom(from);
        published.removeFrom(from);
    }

    void reseed(long newStart, EpochHistory newHistory) {
        out.add(new Reseed(newStart, newHistory));
        start = newStart;
        end = newStart - 1;
        durable = end;
        history = newHistory.truncateFrom(newStart);
        published.clear();
    }

    /** Drops the records below {@code below}, settled and held where they are needed. */
    void discard(long below) {
        out.add(new Discard(below));
        start = below;
    }
}
