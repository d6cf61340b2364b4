package io.ganglion.storage;

import java.io.IOException;
import java.util.List;

/**
 * A stream's questions about time on its log: where retention under both its limits starts, and where an offset by
 * time starts. They read records through {@link ReplicaLog#read}, on the log's shard thread.
 */
public final class LogTime {
    private LogTime() {}

    /**
     * Retention of a stream under both its limits: the first offset to keep so that the segments kept hold at most
     * {@code maxBytes} ({@link ReplicaLog#retainedStart(long)}) and none is older than {@code appendedBeforeMillis} as a whole
     * ({@link ReplicaLog#retainedStartByAge}). {@link Long#MAX_VALUE} and {@link Long#MIN_VALUE} mean no limit. On the shard
     * thread.
     *
     * @throws IOException if reading a record fails
     */
    public static long retainedStart(ReplicaLog log, long maxBytes, long appendedBeforeMillis) throws IOException {
        long keep = log.startOffset();
        if (maxBytes != Long.MAX_VALUE) {
            keep = Math.max(keep, log.retainedStart(maxBytes));
        }
        if (appendedBeforeMillis != Long.MIN_VALUE) {
            keep = Math.max(keep, log.retainedStartByAge(appendedBeforeMillis));
        }
        return keep;
    }

    /**
     * The first offset from {@code from} on whose record was appended at or after {@code timestampMillis} (the store's
     * clock, as {@link LogRecord#timestamp()} gives it), or {@link ReplicaLog#nextOffset()} when every record from there is older:
     * a binary search that reads one record per step, so it takes timestamps to grow with offsets, as one store's clock
     * makes them (a clock set back may make it land a little off). For streams: where an offset by time starts, and
     * what retention by age keeps. On the shard thread.
     *
     * @throws IOException if reading a record fails
     */
    public static long firstOffsetAtOrAfter(ReplicaLog log, long timestampMillis, long from) throws IOException {
        long low = Math.max(from, log.startOffset());
        long high = log.nextOffset(); // the answer lies in [low, high]
        while (low < high) {
            long middle = low + (high - low) / 2;
            List<LogRecord> records = log.read(middle, 1);
            if (records.isEmpty()) {
                return log.nextOffset();
            }
            if (records.getFirst().timestamp() >= timestampMillis) {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        return low;
    }
}
