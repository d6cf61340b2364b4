package io.ganglion.storage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;

/**
 * A replica's epoch history: for each epoch that wrote to the log, the offset of its first record, in increasing
 * epoch and offset order. Install compares histories to find where a replica diverges (as Kafka's leader epochs do).
 * Immutable.
 */
public final class EpochHistory {
    private static final EpochHistory EMPTY = new EpochHistory(new long[0], new long[0]);

    private final long[] epochs;
    private final long[] firstOffsets;

    private EpochHistory(long[] epochs, long[] firstOffsets) {
        this.epochs = epochs;
        this.firstOffsets = firstOffsets;
    }

    /** An epoch and the offset of its first record. */
    public record Entry(long epoch, long firstOffset) {}

    public static EpochHistory empty() {
        return EMPTY;
    }

    /**
     * A history from entries in increasing epoch and non-decreasing offset order.
     *
     * @throws IllegalArgumentException if the entries are out of order
     */
    public static EpochHistory of(List<Entry> entries) {
        EpochHistory history = EMPTY;
        for (Entry entry : entries) {
            if (!history.isEmpty()
                    && (entry.epoch() <= history.lastEpoch() || entry.firstOffset() < history.lastFirstOffset())) {
                throw new IllegalArgumentException("epoch history out of order at " + entry);
            }
            history = history.append(entry.epoch(), entry.firstOffset());
        }
        return history;
    }

    public boolean isEmpty() {
        return epochs.length == 0;
    }

    public int size() {
        return epochs.length;
    }

    /** The latest epoch, or -1 if the history is empty. */
    public long lastEpoch() {
        return epochs.length == 0 ? -1 : epochs[epochs.length - 1];
    }

    private long lastFirstOffset() {
        return firstOffsets[firstOffsets.length - 1];
    }

    public List<Entry> entries() {
        List<Entry> entries = new ArrayList<>(epochs.length);
        for (int i = 0; i < epochs.length; i++) {
            entries.add(new Entry(epochs[i], firstOffsets[i]));
        }
        return List.copyOf(entries);
    }

    /** The first offset of {@code epoch}, if it wrote to the log. */
    public OptionalLong firstOffset(long epoch) {
        int i = Arrays.binarySearch(epochs, epoch);
        return i >= 0 ? OptionalLong.of(firstOffsets[i]) : OptionalLong.empty();
    }

    /** The epoch of the record at {@code offset}, or -1 if the offset is before the first entry. */
    public long epochAt(long offset) {
        for (int i = epochs.length - 1; i >= 0; i--) {
            if (firstOffsets[i] <= offset) {
                return epochs[i];
            }
        }
        return -1;
    }

    /** This history with a record of {@code epoch} at {@code offset} seen; the same instance if nothing changed. */
    public EpochHistory observe(long epoch, long offset) {
        return epoch > lastEpoch() ? append(epoch, offset) : this;
    }

    /** This history without the epochs whose first record is after {@code offset}. */
    public EpochHistory truncateAfter(long offset) {
        int keep = epochs.length;
        while (keep > 0 && firstOffsets[keep - 1] > offset) {
            keep--;
        }
        return keep == epochs.length
                ? this
                : new EpochHistory(Arrays.copyOf(epochs, keep), Arrays.copyOf(firstOffsets, keep));
    }

    private EpochHistory append(long epoch, long offset) {
        long[] e = Arrays.copyOf(epochs, epochs.length + 1);
        long[] o = Arrays.copyOf(firstOffsets, firstOffsets.length + 1);
        e[e.length - 1] = epoch;
        o[o.length - 1] = offset;
        return new EpochHistory(e, o);
    }

    /** Bytes taken by {@link #encode}. */
    public int encodedLength() {
        return 4 + 16 * epochs.length;
    }

    /** Writes {@code count, (epoch, firstOffset)*} at the buffer's position. */
    public void encode(ByteBuffer buffer) {
        buffer.putInt(epochs.length);
        for (int i = 0; i < epochs.length; i++) {
            buffer.putLong(epochs[i]).putLong(firstOffsets[i]);
        }
    }

    /**
     * Reads a history written by {@link #encode} from the buffer's position.
     *
     * @throws IllegalArgumentException if the bytes do not hold a well-formed history
     */
    public static EpochHistory decode(ByteBuffer buffer) {
        int count = buffer.getInt();
        if (count < 0 || count > buffer.remaining() / 16) {
            throw new IllegalArgumentException("bad epoch history count " + count);
        }
        List<Entry> entries = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            entries.add(new Entry(buffer.getLong(), buffer.getLong()));
        }
        return of(entries);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof EpochHistory that
                && Arrays.equals(epochs, that.epochs)
                && Arrays.equals(firstOffsets, that.firstOffsets);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(epochs) + Arrays.hashCode(firstOffsets);
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < epochs.length; i++) {
            text.append(i == 0 ? "" : ", ").append(epochs[i]).append("->").append(firstOffsets[i]);
        }
        return text.append(']').toString();
    }
}
