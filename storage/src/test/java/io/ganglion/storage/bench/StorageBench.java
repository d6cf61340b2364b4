package io.ganglion.storage.bench;

import io.ganglion.storage.AppendOutcome;
import io.ganglion.storage.RecordDescriptor;
import io.ganglion.storage.RecordType;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Durable-append benchmark: appends/s, fsyncs/s and p50/p99 latency from append to durable, for several object
 * counts and record sizes, beside the raw ceiling of the same disk measured in the same run (a write + force loop
 * with the batch size the journal reached).
 *
 * <pre>
 * java -cp ... io.ganglion.storage.bench.StorageBench [--dir DIR] [--seconds 3] [--warmup 1] [--objects 1,3,100,1000]
 *     [--sizes 100,1024] [--producers 2] [--window 16]
 * </pre>
 *
 * <p>Producer threads play shards: each owns a share of the objects and keeps up to {@code window} appends per object
 * in flight (as a publisher with confirms would), so batching comes from concurrency, not from a timer. Record size is
 * the payload; each frame adds a {@value RecordDescriptor#HEADER_LENGTH}-byte header.
 */
public final class StorageBench {
    private StorageBench() {}

    record Options(Path dir, int seconds, int warmup, int[] objects, int[] sizes, int producers, int window) {}

    record Cell(
            int objects,
            int size,
            double appendsPerSecond,
            double fsyncsPerSecond,
            double batch,
            long p50Nanos,
            long p99Nanos,
            double checkpointFsyncsPerSecond,
            double rawAppendsPerSecond,
            double rawFsyncsPerSecond) {}

    public static void main(String[] args) throws Exception {
        Options options = parse(args);
        PrintStream out = System.out;
        Files.createDirectories(options.dir());
        out.printf(
                "storage bench: dir=%s seconds=%d warmup=%d producers=%d window=%d/object cores=%d%n",
                options.dir(),
                options.seconds(),
                options.warmup(),
                options.producers(),
                options.window(),
                Runtime.getRuntime().availableProcessors());
        out.printf(
                "%7s %6s %11s %9s %7s %9s %9s %10s %11s %9s %6s%n",
                "objects",
                "record",
                "appends/s",
                "fsyncs/s",
                "batch",
                "p50(us)",
                "p99(us)",
                "ckpt-fs/s",
                "raw app/s",
                "raw fs/s",
                "ratio");
        for (int size : options.sizes()) {
            for (int objects : options.objects()) {
                Cell cell = runCell(options, objects, size);
                out.printf(
                        "%7d %6d %11.0f %9.0f %7.1f %9.1f %9.1f %10.1f %11.0f %9.0f %5.0f%%%n",
                        cell.objects(),
                        cell.size(),
                        cell.appendsPerSecond(),
                        cell.fsyncsPerSecond(),
                        cell.batch(),
                        cell.p50Nanos() / 1000.0,
                        cell.p99Nanos() / 1000.0,
                        cell.checkpointFsyncsPerSecond(),
                        cell.rawAppendsPerSecond(),
                        cell.rawFsyncsPerSecond(),
                        100 * cell.appendsPerSecond() / cell.rawAppendsPerSecond());
            }
        }
    }

    static Cell runCell(Options options, int objects, int size) throws Exception {
        Path cellDir = options.dir().resolve("cell-" + objects + "-" + size);
        deleteTree(cellDir);
        Clock clock = Clock.systemUTC();
        StorageConfig config = StorageConfig.defaults(clock::millis);
        LatencyHistogram histogram = new LatencyHistogram();
        double appendsPerSecond;
        double fsyncsPerSecond;
        double checkpointFsyncsPerSecond;
        double batch;
        try (Storage storage = Storage.open(cellDir, config)) {
            int producers = Math.min(objects, options.producers());
            List<List<ReplicaLog>> owned = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                owned.add(new ArrayList<>());
            }
            for (int o = 0; o < objects; o++) {
                owned.get(o % producers).add(storage.replica(o));
            }
            Run run = new Run(histogram);
            List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                List<ReplicaLog> logs = owned.get(p);
                int window = Math.min(4096, options.window() * logs.size());
                Thread thread = new Thread(() -> produce(logs, size, window, run), "producer-" + p);
                threads.add(thread);
                thread.start();
            }
            TimeUnit.SECONDS.sleep(options.warmup());
            long forces0 = storage.journalForces();
            long batches0 = storage.journalBatches();
            long entries0 = storage.journalEntries();
            long checkpointForces0 = storage.checkpointForces();
            long start = System.nanoTime();
            run.measuring = true;
            TimeUnit.SECONDS.sleep(options.seconds());
            run.measuring = false;
            double elapsed = (System.nanoTime() - start) / 1e9;
            long entries = storage.journalEntries() - entries0;
            long batches = storage.journalBatches() - batches0;
            appendsPerSecond = entries / elapsed;
            fsyncsPerSecond = (storage.journalForces() - forces0) / elapsed;
            checkpointFsyncsPerSecond = (storage.checkpointForces() - checkpointForces0) / elapsed;
            batch = batches == 0 ? 0 : (double) entries / batches;
            run.stop = true;
            for (Thread thread : threads) {
                thread.join();
            }
        }
        int frame = RecordDescriptor.frameLength(size);
        double[] raw = rawCeiling(cellDir.resolve("raw"), config.journalFileBytes(), frame, batch, options.seconds());
        deleteTree(cellDir);
        return new Cell(
                objects,
                size,
                appendsPerSecond,
                fsyncsPerSecond,
                batch,
                histogram.quantile(0.50),
                histogram.quantile(0.99),
                checkpointFsyncsPerSecond,
                raw[0],
                raw[1]);
    }

    /** Shared flags of one cell. */
    private static final class Run {
        final LatencyHistogram histogram;
        volatile boolean measuring;
        volatile boolean stop;

        Run(LatencyHistogram histogram) {
            this.histogram = histogram;
        }
    }

    private static void produce(List<ReplicaLog> logs, int size, int window, Run run) {
        Semaphore inFlight = new Semaphore(window);
        ByteBuffer payload = ByteBuffer.allocate(size);
        Arrays.fill(payload.array(), (byte) 'm');
        int next = 0;
        while (!run.stop) {
            inFlight.acquireUninterruptibly();
            ReplicaLog log = logs.get(next);
            next = next + 1 == logs.size() ? 0 : next + 1;
            long submitted = System.nanoTime();
            AppendOutcome outcome = log.append(1, RecordType.DATA, payload);
            if (outcome instanceof AppendOutcome.Appended appended) {
                appended.durable().whenComplete((offset, failure) -> {
                    // on the journal writer thread, the histogram's single writer
                    if (failure == null && run.measuring) {
                        run.histogram.record(System.nanoTime() - submitted);
                    }
                    inFlight.release();
                });
            } else {
                inFlight.release();
                throw new IllegalStateException("append refused: " + outcome);
            }
        }
        inFlight.acquireUninterruptibly(window); // every append completed
    }

    /**
     * The disk's ceiling for the same work: one thread writes batches of {@code batch} frames to a preallocated
     * file and forces after each, as the journal does, with nothing else around it.
     *
     * @return appends/s and forces/s
     */
    static double[] rawCeiling(Path file, int fileBytes, int frame, double batch, int seconds) throws IOException {
        int batchBytes = (int) Math.max(frame, Math.round(batch * frame));
        ByteBuffer buffer = ByteBuffer.allocateDirect(batchBytes);
        while (buffer.hasRemaining()) {
            buffer.put((byte) 'r');
        }
        try (FileChannel channel =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            for (long p = 0; p < fileBytes; p += zeros.capacity()) {
                zeros.clear();
                channel.write(zeros, p);
            }
            channel.force(true);
            long position = 0;
            long forces = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            long start = System.nanoTime();
            while (System.nanoTime() < deadline) {
                if (position + batchBytes > fileBytes) {
                    position = 0;
                }
                buffer.clear();
                while (buffer.hasRemaining()) {
                    position += channel.write(buffer, position);
                }
                channel.force(false);
                forces++;
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            return new double[] {forces * (double) batchBytes / frame / elapsed, forces / elapsed};
        }
    }

    private static Options parse(String[] args) {
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "ganglion-storage-bench");
        int seconds = 3;
        int warmup = 1;
        int[] objects = {1, 3, 100, 1000};
        int[] sizes = {100, 1024};
        int producers = 2;
        int window = 16;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw usage("missing value for " + args[i]);
            }
            String value = args[i + 1];
            switch (args[i]) {
                case "--dir" -> dir = Path.of(value);
                case "--seconds" -> seconds = Integer.parseInt(value);
                case "--warmup" -> warmup = Integer.parseInt(value);
                case "--objects" -> objects = ints(value);
                case "--sizes" -> sizes = ints(value);
                case "--producers" -> producers = Integer.parseInt(value);
                case "--window" -> window = Integer.parseInt(value);
                default -> throw usage("unknown option " + args[i]);
            }
        }
        return new Options(dir, seconds, warmup, objects, sizes, producers, window);
    }

    private static int[] ints(String list) {
        return Arrays.stream(list.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    private static IllegalArgumentException usage(String why) {
        return new IllegalArgumentException(why + "; usage: StorageBench [--dir DIR] [--seconds N] [--warmup N]"
                + " [--objects 1,3,100,1000] [--sizes 100,1024] [--producers N] [--window N]");
    }

    private static void deleteTree(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(path)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
