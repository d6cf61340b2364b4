package io.ganglion.bench;

import io.ganglion.cli.Main;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ganglion bench disk}: the force latency of a disk with nothing else on it, as {@link DiskProbe} measures it
 * beside {@code bench failover}: 512 bytes written and forced every interval, then percentiles, the longest force and
 * how many forces took 5, 10, 20 and 50 ms or more. It is the floor under any confirm that waits for a force on that
 * disk: a queue whose confirms wait for such forces can be silent that long with nothing failing.
 */
@Command(
        name = "disk",
        mixinStandardHelpOptions = true,
        description = "Force latency of the disk under a folder, idle: 512 B written and forced every interval.")
final class DiskBench implements Runnable {
    @Option(names = "--seconds", defaultValue = "60", description = "how long (default ${DEFAULT-VALUE})")
    double seconds;

    @Option(
            names = "--interval-ms",
            defaultValue = "2",
            description = "a force every this many ms (default ${DEFAULT-VALUE})")
    double intervalMs;

    @Option(names = "--dir", description = "a folder on the disk to measure (default: a temporary folder)")
    Path dir;

    private final PrintStream console = System.out;

    @Override
    public void run() {
        if (!(seconds > 0) || !(intervalMs > 0)) {
            throw new Main.UsageError("--seconds and --interval-ms must be positive");
        }
        try {
            Path folder = dir != null ? dir : Files.createTempDirectory("ganglion-disk-bench");
            // a force every interval for the time asked: so many forces, waited for as the probe makes them
            int forces = (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(seconds * 1000 / intervalMs)));
            long began = System.nanoTime();
            long[] durations;
            long took;
            try (DiskProbe probe = DiskProbe.start(folder, (long) (intervalMs * 1_000_000))) {
                probe.awaitForces(forces);
                took = System.nanoTime() - began;
                durations = probe.durationsIn(began, System.nanoTime());
                if (probe.failure() != null) {
                    throw probe.failure();
                }
            }
            if (dir == null) {
                Files.deleteIfExists(folder); // the probe deleted its file; the folder was ours
            }
            console.println(describe(folder, durations, took / 1e9));
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    /** The figures of a probe run, one block of text. */
    static String describe(Path folder, long[] durations, double seconds) {
        long[] sorted = durations.clone();
        Arrays.sort(sorted);
        StringBuilder text = new StringBuilder();
        text.append(String.format(
                Locale.ROOT,
                "bench disk: %s, %d forces of %d B in %.0f s%n",
                folder,
                sorted.length,
                DiskProbe.WRITE_BYTES,
                seconds));
        if (sorted.length == 0) {
            return text.append("  no force completed").toString();
        }
        text.append(String.format(
                Locale.ROOT,
                "  force ms: p50 %.2f  p99 %.2f  p99.9 %.2f  max %.1f%n",
                ms(FailoverStats.percentile(sorted, 0.50)),
                ms(FailoverStats.percentile(sorted, 0.99)),
                ms(FailoverStats.percentile(sorted, 0.999)),
                ms(sorted[sorted.length - 1])));
        text.append("  forces taking at least:");
        double minutes = seconds / 60;
        for (long threshold : new long[] {5, 10, 20, 50}) {
            long n = Arrays.stream(sorted)
                    .filter(d -> d >= TimeUnit.MILLISECONDS.toNanos(threshold))
                    .count();
            text.append(String.format(Locale.ROOT, "  %d ms: %d (%.1f a minute)", threshold, n, n / minutes));
        }
        return text.toString();
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
