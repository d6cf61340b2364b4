package io.ganglion.sim;

import io.ganglion.coordination.Epoch;
import io.ganglion.coordination.LogPosition;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * One object's replica log on one broker, reduced to what the control plane sees: its epoch history (epoch to first
 * offset), where it ends, how far it is durable, and the epoch it sealed. Records have no content; a record is its
 * (epoch, offset), which is all that recovery compares.
 *
 * <p>A crash loses the suffix that was not fsynced. A seal fsyncs the log and persists the sealed epoch before the
 * replica answers, then refuses appends of that epoch or earlier.
 */
public final class SimReplica {
    /** {epoch, first offset}, in offset order. */
    private final List<long[]> history = new ArrayList<>();

    private long end = -1;
    private long durable = -1;
    private long sealedEpoch;

    public LogPosition position() {
        return end < 0 ? LogPosition.EMPTY : LogPosition.of(epochAt(end), end);
    }

    public LogPosition durablePosition() {
        return durable < 0 ? LogPosition.EMPTY : LogPosition.of(epochAt(durable), durable);
    }

    public long end() {
        return end;
    }

    public long durable() {
        return durable;
    }

    public long sealedEpoch() {
        return sealedEpoch;
    }

    public long lastEpoch() {
        return history.isEmpty() ? 0 : history.get(history.size() - 1)[0];
    }

    /** The epoch of the record at {@code offset}, which must be at most {@link #end}. */
    public long epochAt(long offset) {
        for (int i = history.size() - 1; i >= 0; i--) {
            if (history.get(i)[1] <= offset) {
                return history.get(i)[0];
            }
        }
        throw new IllegalArgumentException("no record at " + offset);
    }

    /** Appends one record of {@code epoch}; refused after a seal of that epoch or a later one, or behind the log. */
    boolean append(long epoch) {
        if (epoch <= sealedEpoch || epoch < lastEpoch()) {
            return false;
        }
        if (epoch != lastEpoch()) {
            history.add(new long[] {epoch, end + 1});
        }
        end++;
        return true;
    }

    void fsync() {
        durable = end;
    }

    void crash() {
        truncate(durable);
    }

    /** Durably seals {@code epoch}: fsyncs the log and refuses appends of epoch {@code <= epoch} from now on. */
    void seal(Epoch epoch, boolean fence) {
        fsync();
        if (fence) {
            sealedEpoch = Math.max(sealedEpoch, epoch.value());
        }
    }

    void truncate(long offset) {
        end = Math.min(end, offset);
        durable = Math.min(durable, end);
        history.removeIf(entry -> entry[1] > end);
    }

    /** Makes this log the first {@code upTo + 1} records of {@code source}: truncate what diverges, copy what lacks. */
    void copyFrom(SimReplica source, long upTo, boolean durably) {
        long limit = Math.min(upTo, source.end);
        long kept = Math.min(commonPrefix(source) - 1, limit);
        List<long[]> from = new ArrayList<>(source.history);
        history.clear();
        for (long[] entry : from) {
            if (entry[1] <= limit) {
                history.add(new long[] {entry[0], entry[1]});
            }
        }
        end = limit;
        durable = durably ? end : Math.min(durable, kept);
    }

    /** The number of leading records this log and {@code other} have in common (same epoch at each offset). */
    public long commonPrefix(SimReplica other) {
        long shortest = Math.min(end, other.end);
        TreeSet<Long> boundaries = new TreeSet<>();
        history.forEach(entry -> boundaries.add(entry[1]));
        other.history.forEach(entry -> boundaries.add(entry[1]));
        for (long boundary : boundaries) {
            if (boundary > shortest) {
                break;
            }
            if (epochAt(boundary) != other.epochAt(boundary)) {
                return boundary;
            }
        }
        return shortest + 1;
    }

    /** The epochs of the records at {@code offset} and after. */
    public TreeSet<Long> epochsFrom(long offset) {
        TreeSet<Long> epochs = new TreeSet<>();
        for (int i = 0; i < history.size(); i++) {
            long next = i + 1 < history.size() ? history.get(i + 1)[1] : end + 1;
            if (next > offset && history.get(i)[1] <= end) {
                epochs.add(history.get(i)[0]);
            }
        }
        return epochs;
    }

    SimReplica copy() {
        SimReplica copy = new SimReplica();
        copy.copyFrom(this, end, false);
        copy.durable = durable;
        copy.sealedEpoch = sealedEpoch;
        return copy;
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("[");
        for (long[] entry : history) {
            text.append(entry[0]).append('@').append(entry[1]).append(' ');
        }
        return text.append("end=")
                .append(end)
                .append(" durable=")
                .append(durable)
                .append(" sealed=")
                .append(sealedEpoch)
                .append(']')
                .toString();
    }
}
