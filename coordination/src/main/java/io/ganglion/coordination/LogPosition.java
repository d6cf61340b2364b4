package io.ganglion.coordination;

/**
 * The end of a replica's log: the epoch of its last record and that record's offset. Ordered by epoch first, so a
 * replica that holds records of a later epoch is ahead of one with a longer log of an earlier epoch. Offset -1 means an
 * empty log.
 *
 * <p>Ordering by epoch first is safe because a new owner writes an epoch-start record before it confirms anything: a
 * replica that holds a confirmed record of epoch e also holds records of epoch e, and replicas of one epoch are
 * prefixes of each other.
 */
public record LogPosition(Epoch epoch, long offset) implements Comparable<LogPosition> {
    public static final LogPosition EMPTY = new LogPosition(Epoch.NONE, -1);

    public LogPosition {
        if (offset < -1) {
            throw new IllegalArgumentException("offset must be at least -1: " + offset);
        }
    }

    public static LogPosition of(long epoch, long offset) {
        return new LogPosition(Epoch.of(epoch), offset);
    }

    @Override
    public int compareTo(LogPosition other) {
        int byEpoch = epoch.compareTo(other.epoch);
        return byEpoch != 0 ? byEpoch : Long.compare(offset, other.offset);
    }

    @Override
    public String toString() {
        return "(" + epoch + "," + offset + ")";
    }
}
