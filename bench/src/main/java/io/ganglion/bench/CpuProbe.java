package io.ganglion.bench;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.locks.LockSupport;

/**
 * How long a thread that wakes waits for a core, beside a bench: a thread that sleeps {@code interval} again and again
 * and keeps, for each wake-up, how long it was ready to run and did not (from its {@code /proc/thread-self/schedstat}:
 * the time waiting on a run queue; where there is none, how late it woke by the clock). A broker's confirm passes
 * through a chain of threads that each wake and need a core; on a machine whose cores are all busy (the failover bench:
 * three brokers and their clients on two cores, and a killed broker's memory freed by its kernel on one of them) each
 * waits its turn, so a probe that waited 40 ms for a core in a pause says the machine, not the broker's protocol, held
 * the queues then. The probe costs one short wake-up per interval.
 */
final class CpuProbe implements AutoCloseable {
    private final long intervalNanos;
    private final Thread thread;
    private final ProbeSamples samples = new ProbeSamples();
    private volatile boolean stopped;

    private CpuProbe(long intervalNanos) {
        this.intervalNanos = intervalNanos;
        this.thread = new Thread(this::run, "bench-cpu-probe");
        this.thread.setDaemon(true);
    }

    /** Starts a probe that wakes every {@code intervalNanos}. */
    static CpuProbe start(long intervalNanos) {
        if (intervalNanos <= 0) {
            throw new IllegalArgumentException("the probe interval must be positive");
        }
        CpuProbe probe = new CpuProbe(intervalNanos);
        probe.thread.start();
        return probe;
    }

    private void run() {
        ByteBuffer text = ByteBuffer.allocate(128);
        long[] before = new long[2];
        long[] after = new long[2];
        FileChannel schedstat = DiskProbe.openSchedstat(); // null where not Linux: lateness by the clock
        try {
            while (!stopped) {
                boolean scheduled = DiskProbe.readSchedstat(schedstat, text, before);
                long due = System.nanoTime() + intervalNanos;
                LockSupport.parkNanos(intervalNanos);
                long woke = System.nanoTime();
                scheduled &= DiskProbe.readSchedstat(schedstat, text, after);
                samples.record(due, waited(scheduled, before, after, due, woke));
            }
        } finally {
            if (schedstat != null) {
                try {
                    schedstat.close();
                } catch (java.io.IOException e) {
                    // a proc file: nothing to flush
                }
            }
        }
    }

    /**
     * How long the probe waited for a core around one sleep: the growth of its run-queue wait where schedstat was read
     * both times, else how late it woke (which counts the timer's slack too); never negative.
     */
    static long waited(boolean scheduled, long[] before, long[] after, long due, long woke) {
        return Math.max(0, scheduled ? after[1] - before[1] : woke - due);
    }

    /**
     * The longest wait for a core that overlapped {@code [fromNanos, toNanos]}, or 0 when none did. A wait is placed
     * from the moment the probe was due to wake.
     */
    long longestOverlapping(long fromNanos, long toNanos) {
        return samples.longestOverlapping(fromNanos, toNanos);
    }

    /** Waits until the probe has woken {@code wakeUps} times in all. */
    void awaitWakeUps(int wakeUps) throws InterruptedException {
        samples.await(wakeUps, () -> stopped);
    }

    /** The waits of the wake-ups due in {@code [fromNanos, toNanos)}, in the order taken. */
    long[] waitsIn(long fromNanos, long toNanos) {
        return samples.durationsIn(fromNanos, toNanos);
    }

    /** Stops the probe and waits for its thread. */
    @Override
    public void close() {
        stopped = true;
        LockSupport.unpark(thread);
        samples.wake();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
