package io.ganglion.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * The disk's own force latency beside a bench: a thread that writes 512 bytes into a preallocated file and forces it
 * ({@code FileChannel.force(false)}, an {@code fdatasync}) every {@code interval}, and keeps when each force started and
 * how long it took. A broker that confirms only what is durable cannot confirm while the disk it shares does not
 * complete a force, so a probe force that took 30 ms says that any queue on that disk could be silent for 30 ms then,
 * whatever the broker does. The probe's forces are small (a few hundred a second beside the brokers' thousands).
 *
 * <p>Times are {@link System#nanoTime()} values. {@link #record} and the queries are synchronized: the probe thread
 * appends while a bench reads what one trial saw.
 */
final class DiskProbe implements AutoCloseable {
    static final int WRITE_BYTES = 512;
    static final long FILE_BYTES = 16L << 20;

    private final Path file;
    private final long intervalNanos;
    private final Thread thread;
    private volatile boolean stopped;
    private IOException failure;

    private long[] starts = new long[4096];
    private long[] durations = new long[4096];
    private int count;
    private long longestEver;

    private DiskProbe(Path file, long intervalNanos) {
        this.file = file;
        this.intervalNanos = intervalNanos;
        this.thread = new Thread(this::run, "bench-disk-probe");
        this.thread.setDaemon(true);
    }

    /** Starts probing in a new file {@code disk-probe.dat} under {@code directory}, a force every {@code intervalNanos}. */
    static DiskProbe start(Path directory, long intervalNanos) throws IOException {
        if (intervalNanos <= 0) {
            throw new IllegalArgumentException("the probe interval must be positive");
        }
        Files.createDirectories(directory);
        Path file = directory.resolve("disk-probe.dat");
        try (FileChannel channel = FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            // written and forced once, so the probe's forces carry data only, as a broker's preallocated journal's do
            ByteBuffer zeros = ByteBuffer.allocate(1 << 20);
            for (long position = 0; position < FILE_BYTES; position += zeros.capacity()) {
                zeros.clear();
                while (zeros.hasRemaining()) {
                    channel.write(zeros, position + zeros.position());
                }
            }
            channel.force(true);
        }
        DiskProbe probe = new DiskProbe(file, intervalNanos);
        probe.thread.start();
        return probe;
    }

    private void run() {
        ByteBuffer bytes = ByteBuffer.allocateDirect(WRITE_BYTES);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            long position = 0;
            long next = System.nanoTime();
            while (!stopped) {
                long began = System.nanoTime();
                bytes.clear();
                while (bytes.hasRemaining()) {
                    channel.write(bytes, position + bytes.position());
                }
                channel.force(false);
                long ended = System.nanoTime();
                record(began, ended - began);
                position = (position + WRITE_BYTES) % FILE_BYTES;
                next = Math.max(next + intervalNanos, ended);
                LockSupport.parkNanos(next - System.nanoTime());
            }
        } catch (IOException e) {
            synchronized (this) {
                failure = e;
            }
        }
    }

    synchronized void record(long startNanos, long durationNanos) {
        if (count == starts.length) {
            starts = Arrays.copyOf(starts, count * 2);
            durations = Arrays.copyOf(durations, count * 2);
        }
        starts[count] = startNanos;
        durations[count] = durationNanos;
        count++;
        longestEver = Math.max(longestEver, durationNanos);
    }

    /**
     * The longest force that overlapped {@code [fromNanos, toNanos]} (started before its end and ended after its start),
     * or 0 when none did.
     */
    synchronized long longestOverlapping(long fromNanos, long toNanos) {
        return longestOverlapping(starts, durations, count, longestEver, fromNanos, toNanos);
    }

    /**
     * {@link #longestOverlapping} over the given samples: starts ascending, as the probe appends them, none longer than
     * {@code longestEver}.
     */
    static long longestOverlapping(
            long[] starts, long[] durations, int count, long longestEver, long fromNanos, long toNanos) {
        long longest = 0;
        int last = Arrays.binarySearch(starts, 0, count, toNanos);
        // from the last force that started by the window's end back to the first that could still run into it
        for (int i = last >= 0 ? last : -last - 2; i >= 0 && starts[i] + longestEver >= fromNanos; i--) {
            if (starts[i] + durations[i] >= fromNanos) {
                longest = Math.max(longest, durations[i]);
            }
        }
        return longest;
    }

    /** How many forces started in {@code [fromNanos, toNanos)}, and how many of them took at least {@code minNanos}. */
    synchronized long[] countIn(long fromNanos, long toNanos, long minNanos) {
        long all = 0;
        long slow = 0;
        for (int i = 0; i < count; i++) {
            if (starts[i] >= fromNanos && starts[i] < toNanos) {
                all++;
                if (durations[i] >= minNanos) {
                    slow++;
                }
            }
        }
        return new long[] {all, slow};
    }

    /** The force durations that started in {@code [fromNanos, toNanos)}, in the order taken. */
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

    /** The IO error that stopped the probe, if one did. */
    synchronized IOException failure() {
        return failure;
    }

    /** Stops the probe, waits for its thread and deletes its file. */
    @Override
    public void close() throws IOException {
        stopped = true;
        LockSupport.unpark(thread);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(file);
    }
}
