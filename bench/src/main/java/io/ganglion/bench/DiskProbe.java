package io.ganglion.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.LockSupport;

/**
 * The disk's own force latency beside a bench: a thread that writes 512 bytes into a preallocated file and forces
 * it ({@code FileChannel.force(false)}, an {@code fdatasync}) every {@code interval}, and keeps when each force
 * started and how long its thread was blocked in the write and the force (from the thread's schedstat: the wall time
 * less the time it ran or waited for a CPU, so that a busy machine does not pass for a slow disk). A broker that confirms only what is
 * durable cannot confirm while the disk it shares does not complete a force, so a probe blocked 30 ms in a force says
 * that any queue on that disk could be silent for 30 ms then, whatever the broker does. The probe's forces are small (a
 * few hundred a second beside the brokers' thousands).
 *
 * <p>Times are {@link System#nanoTime()} values, kept in {@link ProbeSamples}.
 */
final class DiskProbe implements AutoCloseable {
    static final int WRITE_BYTES = 512;
    static final long FILE_BYTES = 16L << 20;

    private final Path file;
    private final long intervalNanos;
    private final Thread thread;
    private volatile boolean stopped;
    private IOException failure;

    private final ProbeSamples samples = new ProbeSamples();

    private DiskProbe(Path file, long intervalNanos) {
        this.file = file;
        this.intervalNanos = intervalNanos;
        this.thread = new Thread(this::run, "bench-disk-probe");
        this.thread.setDaemon(true);
    }

    /** Starts probing in a new file {@code disk-probe.dat} under {@code directory}: a force every interval. */
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
        ByteBuffer text = ByteBuffer.allocate(128);
        long[] before = new long[2];
        long[] after = new long[2];
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE);
                FileChannel schedstat = openSchedstat()) {
            long position = 0;
            long next = System.nanoTime();
            while (!stopped) {
                boolean scheduled = readSchedstat(schedstat, text, before);
                long began = System.nanoTime();
                bytes.clear();
                while (bytes.hasRemaining()) {
                    channel.write(bytes, position + bytes.position());
                }
                channel.force(false);
                long ended = System.nanoTime();
                scheduled &= readSchedstat(schedstat, text, after);
                // the time neither on a CPU nor waiting for one: blocked in the write and the force. Without it a
                // busy machine that leaves the probe's thread waiting for a core would pass for a slow disk
                long blocked = ended - began;
                if (scheduled) {
                    blocked = Math.max(0, blocked - (after[0] - before[0]) - (after[1] - before[1]));
                }
                record(began, blocked);
                position = (position + WRITE_BYTES) % FILE_BYTES;
                next = Math.max(next + intervalNanos, ended);
                LockSupport.parkNanos(next - System.nanoTime());
            }
        } catch (IOException e) {
            synchronized (this) {
                failure = e;
            }
            samples.wake();
        }
    }

    /** This thread's {@code /proc/thread-self/schedstat} (Linux), or null where there is none. */
    static FileChannel openSchedstat() {
        try {
            return FileChannel.open(Path.of("/proc/thread-self/schedstat"), StandardOpenOption.READ);
        } catch (IOException e) {
            return null; // not Linux: forces are timed by the wall clock alone
        }
    }

    /**
     * Reads the calling thread's time on a CPU and time waiting for one (ns, the first two fields of its schedstat)
     * into {@code into}; false when they cannot be read.
     */
    static boolean readSchedstat(FileChannel schedstat, ByteBuffer text, long[] into) {
        if (schedstat == null) {
            return false;
        }
        try {
            text.clear();
            while (text.hasRemaining() && schedstat.read(text, text.position()) > 0) {
                // a proc file is read whole from position 0 each time
            }
            return parseSchedstat(text.flip(), into);
        } catch (IOException e) {
            return false;
        }
    }

    /** Parses "run wait slices" into {@code into[0]} and {@code into[1]}; false for anything else. */
    static boolean parseSchedstat(ByteBuffer text, long[] into) {
        int field = 0;
        long value = 0;
        boolean digits = false;
        while (text.hasRemaining() && field < 2) {
            byte b = text.get();
            if (b >= '0' && b <= '9') {
                value = value * 10 + (b - '0');
                digits = true;
            } else if (digits) {
                into[field++] = value;
                value = 0;
                digits = false;
            } else {
                return false;
            }
        }
        if (field < 2 && digits) {
            into[field++] = value;
        }
        return field == 2;
    }

    private void record(long startNanos, long durationNanos) {
        samples.record(startNanos, durationNanos);
    }

    /**
     * The longest force that overlapped {@code [fromNanos, toNanos]} (started before its end and ended after its
     * start), or 0 when none did.
     */
    long longestOverlapping(long fromNanos, long toNanos) {
        return samples.longestOverlapping(fromNanos, toNanos);
    }

    /**
     * Waits until the probe has made {@code forces} forces in all, or stopped on an IO error ({@link #failure}); the
     * way a bench that wants so many forces waits for them instead of sleeping for a guess of their time.
     */
    void awaitForces(int forces) throws InterruptedException {
        samples.await(forces, () -> failure() != null);
    }

    /** The force durations that started in {@code [fromNanos, toNanos)}, in the order taken. */
    long[] durationsIn(long fromNanos, long toNanos) {
        return samples.durationsIn(fromNanos, toNanos);
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
