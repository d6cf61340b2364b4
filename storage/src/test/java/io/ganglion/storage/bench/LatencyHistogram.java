package io.ganglion.storage.bench;

/**
 * Log-linear histogram of nanosecond latencies, 1/16 relative precision. Single writer: only the journal writer
 * thread records into it (futures complete there); read after the writer is quiet.
 */
final class LatencyHistogram {
    private static final int SUB_BUCKETS = 16;
    private final long[] counts = new long[64 * SUB_BUCKETS];
    private long total;

    void record(long nanos) {
        counts[index(Math.max(1, nanos))]++;
        total++;
    }

    long count() {
        return total;
    }

    /** The upper bound of the bucket holding the {@code quantile} (0..1) sample, in nanoseconds. */
    long quantile(double quantile) {
        long rank = (long) Math.ceil(quantile * total);
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank && seen > 0) {
                return upperBound(i);
            }
        }
        return 0;
    }

    private static int index(long value) {
        int magnitude = 63 - Long.numberOfLeadingZeros(value);
        if (magnitude < 4) {
            return (int) value;
        }
        int sub = (int) ((value >>> (magnitude - 4)) & (SUB_BUCKETS - 1));
        return (magnitude - 3) * SUB_BUCKETS + sub;
    }

    private static long upperBound(int index) {
        if (index < SUB_BUCKETS) {
            return index;
        }
        int magnitude = index / SUB_BUCKETS + 3;
        long sub = index % SUB_BUCKETS;
        return ((SUB_BUCKETS + sub + 1) << (magnitude - 4)) - 1;
    }
}
