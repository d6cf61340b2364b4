package io.ganglion.bench;

import java.util.Arrays;

/**
 * The pure arithmetic of {@code bench failover}: pauses between confirms, percentiles, lost and duplicated messages,
 * confirms per time bucket. No clock, no IO: every time is a nanosecond offset from the start of a trial, passed in.
 *
 * <p>A message is one index into parallel arrays kept by the workload: its send time, its confirm time ({@link #NONE}
 * when it was never confirmed), its outcome and how often a consumer received it.
 */
final class FailoverStats {
    /** No time: a message never confirmed, a queue with no confirm after the kill. */
    static final long NONE = Long.MIN_VALUE;

    /** Outcome of a publish. */
    static final byte PENDING = 0;

    static final byte CONFIRMED = 1;
    /** The broker answered basic.nack. */
    static final byte NACKED = 2;
    /** No confirm within the timeout, or the channel closed first. */
    static final byte TIMED_OUT = 3;

    private FailoverStats() {}

    /** The longest silence in a queue's confirms around a kill, and when it ended. */
    record Pause(long nanos, long endNanos, boolean censored) {}

    /**
     * The longest gap between consecutive confirm times that ends after {@code killNanos}, counting the silence from the
     * last confirm before the kill (or the kill itself when there was none) and the silence from the last confirm to
     * {@code endNanos}. When that trailing silence is the longest, the pause is censored: the queue had not come back
     * (or stopped again) by the end of the window, so the true pause is at least this long.
     *
     * @param confirmTimes confirm times in any order; {@link #NONE} entries are ignored
     */
    static Pause pause(long[] confirmTimes, long killNanos, long endNanos) {
        long[] times = Arrays.stream(confirmTimes)
                .filter(t -> t != NONE && t <= endNanos)
                .sorted()
                .toArray();
        long previous = killNanos;
        int first = 0;
        while (first < times.length && times[first] <= killNanos) {
            previous = times[first];
            first++;
        }
        long longest = -1;
        long end = endNanos;
        for (int i = first; i < times.length; i++) {
            long gap = times[i] - previous;
            if (gap > longest) {
                longest = gap;
                end = times[i];
            }
            previous = times[i];
        }
        long trailing = endNanos - previous;
        if (trailing > longest) {
            return new Pause(trailing, endNanos, true);
        }
        return new Pause(longest, end, false);
    }

    /**
     * The longest gap between consecutive confirm times within {@code [fromNanos, toNanos)}: the same measure as
     * {@link #pause} over a window in which nothing failed, so the pause after a kill can be read against the silences
     * the queue shows anyway (collector pauses, slow forces, scheduling on a busy machine). {@link #NONE} with fewer than
     * two confirms in the window (as its length and end).
     */
    static Pause longestGap(long[] confirmTimes, long fromNanos, long toNanos) {
        long[] times = Arrays.stream(confirmTimes)
                .filter(t -> t != NONE && t >= fromNanos && t < toNanos)
                .sorted()
                .toArray();
        long longest = NONE;
        long end = NONE;
        for (int i = 1; i < times.length; i++) {
            if (times[i] - times[i - 1] > longest) {
                longest = times[i] - times[i - 1];
                end = times[i];
            }
        }
        return new Pause(longest, end, false);
    }

    /**
     * Every gap of at least {@code minNanos} between consecutive confirm times within {@code [fromNanos, toNanos)}, as
     * {@code [start, end]} pairs in time order: where a queue went silent, to be read beside the brokers' logs.
     */
    static long[][] silences(long[] confirmTimes, long fromNanos, long toNanos, long minNanos) {
        long[] times = Arrays.stream(confirmTimes)
                .filter(t -> t != NONE && t >= fromNanos && t < toNanos)
                .sorted()
                .toArray();
        java.util.List<long[]> found = new java.util.ArrayList<>();
        for (int i = 1; i < times.length; i++) {
            if (times[i] - times[i - 1] >= minNanos) {
                found.add(new long[] {times[i - 1], times[i]});
            }
        }
        return found.toArray(long[][]::new);
    }

    /**
     * What a silence of a queue's confirms, {@code [start, end]}, looked like from the client: the longest gap between
     * consecutive sends from {@code lookBackNanos} before it to its end (as long as the silence: the publisher itself
     * stood still, the client's side), and the confirm latency of the oldest message confirmed at {@code end} (the
     * silence's length or more: the messages waited in the brokers). {@link #NONE} where nothing fits.
     */
    static long[] describeSilence(
            long[] sendTimes, long[] confirmTimes, int count, long start, long end, long lookBackNanos) {
        long sendGap = longestGap(Arrays.copyOf(sendTimes, count), start - lookBackNanos, end + 1)
                .nanos();
        long latency = NONE;
        for (int i = 0; i < count; i++) {
            if (confirmTimes[i] == end) {
                latency = Math.max(latency, end - sendTimes[i]);
            }
        }
        return new long[] {sendGap, latency};
    }

    /**
     * The first confirm of a message sent after the kill, or {@link #NONE}: when the queue served again. (Confirms of
     * messages sent before the kill may still arrive just after it and say nothing about recovery.)
     */
    static long firstConfirmAfter(long[] sendTimes, long[] confirmTimes, int count, long killNanos) {
        long first = Long.MAX_VALUE;
        for (int i = 0; i < count; i++) {
            long t = confirmTimes[i];
            if (t != NONE && sendTimes[i] > killNanos && t < first) {
                first = t;
            }
        }
        return first == Long.MAX_VALUE ? NONE : first;
    }

    /** Nearest-rank percentile of an ascending array; {@link #NONE} when empty. */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return NONE;
        }
        int index = (int) Math.ceil(p * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    /** Median of values, the mean of the two middle ones for an even count; NaN when empty. */
    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted.length % 2 == 1
                ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    /** Confirm latencies, ascending, of the messages sent in {@code [fromNanos, toNanos)} and confirmed. */
    static long[] latencies(long[] sendTimes, long[] confirmTimes, int count, long fromNanos, long toNanos) {
        long[] out = new long[count];
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (confirmTimes[i] != NONE && sendTimes[i] >= fromNanos && sendTimes[i] < toNanos) {
                out[n++] = confirmTimes[i] - sendTimes[i];
            }
        }
        long[] result = Arrays.copyOf(out, n);
        Arrays.sort(result);
        return result;
    }

    /** What consumers saw of what publishers sent. */
    record Accounting(
            long sent,
            long confirmed,
            long unknown,
            long nacked,
            long lost,
            long duplicates,
            long duplicatesRedelivered,
            long unknownDelivered) {
        long duplicatesNotRedelivered() {
            return duplicates - duplicatesRedelivered;
        }
    }

    /**
     * Lost: confirmed and never consumed. Duplicates: every delivery of a message beyond its first, split by whether the
     * broker flagged it redelivered. Unknown: nacked or timed out (or still pending when the trial ended); those may
     * still arrive, counted as {@code unknownDelivered}, neither lost nor duplicated.
     *
     * @param deliveries how often each message was consumed
     * @param redeliveredDuplicates how many of each message's extra deliveries carried the redelivered flag
     */
    static Accounting account(byte[] outcomes, int[] deliveries, int[] redeliveredDuplicates, int count) {
        long confirmed = 0, unknown = 0, nacked = 0, lost = 0, duplicates = 0, redelivered = 0, unknownDelivered = 0;
        for (int i = 0; i < count; i++) {
            switch (outcomes[i]) {
                case CONFIRMED -> {
                    confirmed++;
                    if (deliveries[i] == 0) {
                        lost++;
                    }
                }
                case NACKED -> {
                    nacked++;
                    unknown++;
                }
                default -> unknown++;
            }
            if (outcomes[i] != CONFIRMED && deliveries[i] > 0) {
                unknownDelivered++;
            }
            if (deliveries[i] > 1) {
                duplicates += deliveries[i] - 1;
                redelivered += redeliveredDuplicates[i];
            }
        }
        return new Accounting(count, confirmed, unknown, nacked, lost, duplicates, redelivered, unknownDelivered);
    }

    /** Confirms per second in buckets of {@code bucketNanos} from {@code fromNanos} to {@code toNanos}. */
    static double[] confirmRate(long[] confirmTimes, long fromNanos, long toNanos, long bucketNanos) {
        int buckets = (int) Math.max(1, (toNanos - fromNanos + bucketNanos - 1) / bucketNanos);
        double[] counts = new double[buckets];
        for (long t : confirmTimes) {
            if (t != NONE && t >= fromNanos && t < toNanos) {
                counts[(int) ((t - fromNanos) / bucketNanos)]++;
            }
        }
        double perSecond = 1e9 / bucketNanos;
        for (int i = 0; i < buckets; i++) {
            counts[i] *= perSecond;
        }
        return counts;
    }
}
