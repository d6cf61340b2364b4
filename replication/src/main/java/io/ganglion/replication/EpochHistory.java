package io.ganglion.replication;

import io.ganglion.coordination.Epoch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;

/**
 * A replica's epoch history: for each epoch it holds records of, the offset of its first record (Kafka's leader
 * epochs). Immutable. Two replicas compare histories to find where their logs diverge without comparing records: a
 * record is identified by its (epoch, offset), since one epoch has one owner writing in order.
 *
 * <pre>
 *   owner    1@0 ........ 2@40 ............ 3@97 ....   end 120
 *   replica  1@0 ........ 2@40 ......... end 90          prefix: agree up to 90, copy 91..120
 *   replica  1@0 ........ 2@40 ...... 2@.. end 99        epoch 2 beyond 96 never happened at the owner: truncate 97
 * </pre>
 */
public final class EpochHistory {
    public static final EpochHistory EMPTY = new EpochHistory(new long[0], new long[0]);

    private final long[] epochs;
    private final long[] starts;

    private EpochHistory(long[] epochs, long[] starts) {
        this.epochs = epochs;
        this.starts = starts;
    }

    /** A history from {@code (epoch, first offset)} pairs in ascending order of both. */
    public static EpochHistory of(long... pairs) {
        if (pairs.length % 2 != 0) {
            throw new IllegalArgumentException("pairs of (epoch, first offset) expected");
        }
        EpochHistory history = EMPTY;
        for (int i = 0; i < pairs.length; i += 2) {
            history = history.append(Epoch.of(pairs[i]), pairs[i + 1]);
        }
        return history;
    }

    public boolean isEmpty() {
        return epochs.length == 0;
    }

    /** The epoch of the last record, {@link Epoch#NONE} for an empty log. */
    public Epoch lastEpoch() {
        return epochs.length == 0 ? Epoch.NONE : Epoch.of(epochs[epochs.length - 1]);
    }

    /** The epoch of the record at {@code offset}, {@link Epoch#NONE} before the first epoch. Ignores the log end. */
    public Epoch epochAt(long offset) {
        for (int i = starts.length - 1; i >= 0; i--) {
            if (starts[i] <= offset) {
                return Epoch.of(epochs[i]);
            }
        }
        return Epoch.NONE;
    }

    /** The first offset of {@code epoch}, if this history holds records of it. */
    public OptionalLong startOf(Epoch epoch) {
        for (int i = 0; i < epochs.length; i++) {
            if (epochs[i] == epoch.value()) {
                return OptionalLong.of(starts[i]);
            }
        }
        return OptionalLong.empty();
    }

    /**
     * This history with a record of {@code epoch} at {@code offset} appended.
     *
     * @throws IllegalArgumentException when the epoch goes backwards or the offset does not follow the last start
     */
    public EpochHistory append(Epoch epoch, long offset) {
        int n = epochs.length;
        if (n > 0 && epochs[n - 1] == epoch.value()) {
            if (offset < starts[n - 1]) {
                throw new IllegalArgumentException("offset " + offset + " before the start of epoch " + epoch);
            }
            return this;
        }
        if (n > 0 && (epochs[n - 1] > epoch.value() || starts[n - 1] >= offset)) {
            throw new IllegalArgumentException(
                    "epoch " + epoch + " at " + offset + " does not follow " + epochs[n - 1] + "@" + starts[n - 1]);
        }
        long[] nextEpochs = Arrays.copyOf(epochs, n + 1);
        long[] nextStarts = Arrays.copyOf(starts, n + 1);
        nextEpochs[n] = epoch.value();
        nextStarts[n] = offset;
        return new EpochHistory(nextEpochs, nextStarts);
    }

    /** This history after the records at {@code offset} and beyond are cut off. */
    public EpochHistory truncateFrom(long offset) {
        int keep = 0;
        while (keep < starts.length && starts[keep] < offset) {
            keep++;
        }
        return keep == starts.length
                ? this
                : new EpochHistory(Arrays.copyOf(epochs, keep), Arrays.copyOf(starts, keep));
    }

    /**
     * Where two logs stop agreeing: the number of leading offsets at which they hold the same epoch, up to the shorter
     * log. A log that holds records {@code 0..aEnd} (or discarded a settled prefix of them) with history {@code a}
     * holds the same records as {@code b} below the returned offset; from it on they differ or one has ended.
     */
    public static long commonPrefix(EpochHistory a, long aEnd, EpochHistory b, long bEnd) {
        long shortest = Math.min(aEnd, bEnd);
        TreeSet<Long> boundaries = new TreeSet<>();
        for (long start : a.starts) {
            boundaries.add(start);
        }
        for (long start : b.starts) {
            boundaries.add(start);
        }
        for (long boundary : boundaries) {
            if (boundary > shortest) {
                break;
            }
            if (!a.epochAt(boundary).equals(b.epochAt(boundary))) {
                return boundary;
            }
        }
        return shortest + 1;
    }

    /** {@code (epoch, first offset)} pairs. */
    public List<long[]> entries() {
        List<long[]> entries = new ArrayList<>(epochs.length);
        for (int i = 0; i < epochs.length; i++) {
            entries.add(new long[] {epochs[i], starts[i]});
        }
        return entries;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof EpochHistory that
                && Arrays.equals(epochs, that.epochs)
                && Arrays.equals(starts, that.starts);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(epochs) + Arrays.hashCode(starts);
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < epochs.length; i++) {
            text.append(i == 0 ? "" : " ").append(epochs[i]).append('@').append(starts[i]);
        }
        return text.append(']').toString();
    }
}
