package io.ganglion.bench;

import java.util.Arrays;

/**
 * What a probe beside a bench saw: spans, each a start ({@link System#nanoTime()}) and a length, appended in start
 * order by the probe's thread while a bench reads what one trial saw (hence synchronized). The disk probe's spans are
 * the forces it was blocked in, the CPU probe's the times its thread was ready to run and waited for a core.
 */
final class ProbeSamples {
    private long[] starts = new long[4096];
    private long[] durations = new long[4096];
    private int count;
    private long longestEver;

    synchronized void record(long startNanos, long durationNanos) {
        if (count == starts.length) {
            starts = Arrays.copyOf(starts, count * 2);
            durations = Arrays.copyOf(durations, count * 2);
        }
        starts[count] = startNanos;
        durations[count] = durationNanos;
        count++;
        longestEver = Math.max(longestEver, durationNanos);
        notifyAll();
    }

    /**
     * The longest span that overlapped {@code [fromNanos, toNanos]} (started before its end and ended after its
     * start), or 0 when none did.
     */
    synchronized long longestOverlapping(long fromNanos, long toNanos) {
        return longestOverlapping(starts, durations, count, longestEver, fromNanos, toNanos);
    }

    /**
     * {@link #longestOverlapping} over the given spans: starts ascending, as a probe appends them, none longer than
     * {@code longestEver}.
     */
    static long longestOverlapping(
            long[] starts, long[] durations, int count, long longestEver, long fromNanos, long toNanos) {
        long longest = 0;
        int last = Arrays.binarySearch(starts, 0, count, toNanos);
        // from the last span that started by the window's end back to the first that could still run into it
        for (int i = last >= 0 ? last : -last - 2; i >= 0 && starts[i] + longestEver >= fromNanos; i--) {
            if (starts[i] + durations[i] >= fromNanos) {
                longest = Math.max(longest, durations[i]);
            }
        }
        return longest;
    }

    /** The lengths of the spans that started in {@code [fromNanos, toNanos)}, in the order taken. */
    synchronized long[] durationsIn(long fromNanos, long toNanos) {
        long[] picked = new long[count];
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (starts[i] >= fromNanos && starts[i] < toNanos) {
                picked[n++] = durations[i];
            }
        }
        return Arrays.copyOf(picked, n);
    }

    /** Waits until {@code spans} spans are recorded in all, or {@code stopped} says the probe gave up. */
    synchronized void await(int spans, java.util.function.BooleanSupplier stopped) throws InterruptedException {
        while (count < spans && !stopped.getAsBoolean()) {
            wait();
        }
    }

    /** Wakes {@link #await} to look at its condition again. */
    synchronized void wake() {
        notifyAll();
    }
}
