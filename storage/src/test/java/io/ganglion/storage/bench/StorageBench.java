package io.ganglion.storage.bench;

import io.ganglion.storage.AppendOutcome;
import io.ganglion.storage.DurabilityListener;
import io.ganglion.storage.RecordDescriptor;
import io.ganglion.storage.RecordType;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Durable-append benchmark: appends/s, fsyncs/s and p50/p99 latency from append to durable, for several object
 * counts and record sizes, beside the raw ceiling of the same disk measured in the same run.
 *
 * <pre>
 * java -cp ... io.ganglion.storage.bench.StorageBench [--dir DIR] [--seconds 2] [--rounds 3] [--warmup 1]
 *     [--objects 1,3,100,1000] [--sizes 100,1024] [--producers 2] [--window 16] [--confirm future,listener]
 * </pre>
 *
 * <p>Producer threads play shards: each owns a share of the objects and keeps up to {@code window} appends per object
 * in flight (as a publisher with confirms would), so batching comes from concurrency, not from a timer. Record size is
 * the payload; each frame adds a {@value RecordDescriptor#HEADER_LENGTH}-byte header. {@code --confirm} picks how
 * producers learn of durability: {@code future} waits on each append's future (one callback per append), {@code
 * listener} registers one {@link io.ganglion.storage.DurabilityListener} per object (one callback per object per
 * journal batch).
 *
 * <p>The raw ceiling is measured in the same cell, in rounds: {@code seconds} of the store, then the producers pause
 * until nothing is in flight, the page cache is synced ({@code sync}), and {@code seconds} of one thread in a loop of
 * positional write + {@code force(false)} on a preallocated file, the journal's own recipe with nothing around it.
 * Each raw write carries as many bytes as the journal wrote per force in the round just measured (its real batches,
 * control records and all), filled with real frames of the cell's record size; raw appends/s counts those frames.
 * Alternating rounds lets noise from the rest of the machine hit both sides alike.
 *
 * <p>{@code cpu-us} is the CPU time of the whole process (all threads, GC included) per append while the store ran,
 * {@code gc%} the share of that time the collectors report; together they say when a cell is CPU-bound.
 */
public final class StorageBench {
    private StorageBench() {}

    record Options(
            Path dir,
            int seconds,
            int rounds,
            int warmup,
            int[] objects,
            int[] sizes,
            int producers,
            int window,
            List<String> confirms,
            long groupCommitMicros) {}

    record Cell(
            int objects,
            int size,
            String confirm,
            double appendsPerSecond,
            double fsyncsPerSecond,
            double batch,
            long p50Nanos,
            long p99Nanos,
            double checkpointFsyncsPerSecond,
            double segmentWritesPerSecond,
            double cpuMicrosPerAppend,
            double gcShare,
            double rawAppendsPerSecond,
            double rawFsyncsPerSecond,
            Map<String, Double> cpuMicrosByThread) {}

    public static void main(String[] args) throws Exception {
        Options options = parse(args);
        PrintStream out = System.out;
        Files.createDirectories(options.dir());
        out.printf(
                "storage bench: dir=%s seconds=%d x %d rounds warmup=%d producers=%d window=%d/object cores=%d%n",
                options.dir(),
                options.seconds(),
                options.rounds(),
                options.warmup(),
                options.producers(),
                options.window(),
                Runtime.getRuntime().availableProcessors());
        out.printf(
                "%7s %6s %8s %11s %9s %7s %9s %9s %10s %9s %7s %5s %11s %9s %6s%n",
                "objects",
                "record",
                "confirm",
                "appends/s",
                "fsyncs/s",
                "batch",
                "p50(us)",
                "p99(us)",
                "ckpt-fs/s",
                "seg-wr/s",
                "cpu-us",
                "gc%",
                "raw app/s",
                "raw fs/s",
                "ratio");
        for (int size : options.sizes()) {
            for (int objects : options.objects()) {
                for (String confirm : options.confirms()) {
                    Cell cell = runCell(options, objects, size, confirm);
                    out.printf(
                            "%7d %6d %8s %11.0f %9.0f %7.1f %9.1f %9.1f %10.1f %9.0f %7.2f %4.0f%% %11.0f %9.0f %5.0f%%%n",
                            cell.objects(),
                            cell.size(),
                            cell.confirm(),
                            cell.appendsPerSecond(),
                            cell.fsyncsPerSecond(),
                            cell.batch(),
                            cell.p50Nanos() / 1000.0,
                            cell.p99Nanos() / 1000.0,
                            cell.checkpointFsyncsPerSecond(),
                            cell.segmentWritesPerSecond(),
                            cell.cpuMicrosPerAppend(),
                            100 * cell.gcShare(),
                            cell.rawAppendsPerSecond(),
                            cell.rawFsyncsPerSecond(),
                            100 * cell.appendsPerSecond() / cell.rawAppendsPerSecond());
                    StringBuilder split = new StringBuilder("        cpu-us by thread:");
                    cell.cpuMicrosByThread()
                            .forEach((kind, micros) -> split.append(String.format(" %s %.2f", kind, micros)));
                    out.println(split);
                }
            }
        }
    }

    static Cell runCell(Options options, int objects, int size, String confirm) throws Exception {
        Path cellDir = options.dir().resolve("cell-" + objects + "-" + size);
        deleteTree(cellDir);
        Clock clock = Clock.systemUTC();
        StorageConfig config =
                StorageConfig.defaults(clock::millis).withGroupCommitNanos(options.groupCommitMicros() * 1000);
        LatencyHistogram histogram = new LatencyHistogram();
        double appendsPerSecond;
        double fsyncsPerSecond;
        double checkpointFsyncsPerSecond;
        double segmentWritesPerSecond;
        double batch;
        double rawAppendsPerSecond;
        double rawFsyncsPerSecond;
        double cpuMicrosPerAppend;
        double gcShare;
        Map<String, Double> cpuMicrosByThread = new LinkedHashMap<>();
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
                Thread thread = confirm.equals("listener")
                        ? new Thread(() -> produceWithListeners(logs, size, window, run), "producer-" + p)
                        : new Thread(() -> produce(logs, size, window, run), "producer-" + p);
                threads.add(thread);
                thread.start();
            }
            TimeUnit.SECONDS.sleep(options.warmup());
            // rounds of (store, then raw ceiling at the batch the store just reached), so that noise from the rest of
            // the machine hits both alike
            double storeSeconds = 0;
            double rawSeconds = 0;
            long entries = 0;
            long batches = 0;
            long forces = 0;
            long checkpointForces = 0;
            long segmentWrites = 0;
            long cpuNanos = 0;
            long gcMillis = 0;
            Map<String, Long> threadNanos = new LinkedHashMap<>();
            long journalBytes = 0;
            double rawAppends = 0;
            double rawForces = 0;
            for (int round = 0; round < options.rounds(); round++) {
                long forces0 = storage.journalForces();
                long batches0 = storage.journalBatches();
                long entries0 = storage.journalEntries();
                long checkpointForces0 = storage.checkpointForces();
                long segmentWrites0 = storage.segmentWrites();
                long bytes0 = storage.journalBytes();
                long cpu0 = processCpuNanos();
                long gc0 = gcMillis();
                Map<Long, Long> threads0 = threadCpuNanos();
                long start = System.nanoTime();
                run.measuring = true;
                TimeUnit.SECONDS.sleep(options.seconds());
                run.measuring = false;
                cpuNanos += processCpuNanos() - cpu0;
                gcMillis += gcMillis() - gc0;
                addThreadNanos(threadNanos, threads0, threadCpuNanos());
                storeSeconds += (System.nanoTime() - start) / 1e9;
                long roundForces = storage.journalForces() - forces0;
                long roundBytes = storage.journalBytes() - bytes0;
                entries += storage.journalEntries() - entries0;
                batches += storage.journalBatches() - batches0;
                forces += roundForces;
                checkpointForces += storage.checkpointForces() - checkpointForces0;
                segmentWrites += storage.segmentWrites() - segmentWrites0;
                journalBytes += roundBytes;
                run.pause(producers);
                double[] raw = rawCeiling(
                        options.dir().resolve("raw"),
                        config.journalFileBytes(),
                        size,
                        roundForces == 0 ? 0 : (double) roundBytes / roundForces,
                        options);
                rawSeconds += raw[2];
                rawAppends += raw[0];
                rawForces += raw[1];
                run.resume();
            }
            appendsPerSecond = entries / storeSeconds;
            fsyncsPerSecond = forces / storeSeconds;
            checkpointFsyncsPerSecond = checkpointForces / storeSeconds;
            segmentWritesPerSecond = segmentWrites / storeSeconds;
            cpuMicrosPerAppend = entries == 0 ? 0 : cpuNanos / 1e3 / entries;
            long threadTotal = 0;
            for (long nanos : threadNanos.values()) {
                threadTotal += nanos;
            }
            threadNanos.put("other(gc,jit,vm)", Math.max(0, cpuNanos - threadTotal));
            for (Map.Entry<String, Long> kind : threadNanos.entrySet()) {
                cpuMicrosByThread.put(kind.getKey(), entries == 0 ? 0 : kind.getValue() / 1e3 / entries);
            }
            gcShare = gcMillis / 1e3 / storeSeconds;
            batch = batches == 0 ? 0 : (double) entries / batches;
            rawAppendsPerSecond = rawAppends / rawSeconds;
            rawFsyncsPerSecond = rawForces / rawSeconds;
            run.stop = true;
            for (Thread thread : threads) {
                thread.join();
            }
        }
        deleteTree(cellDir);
        return new Cell(
                objects,
                size,
                confirm,
                appendsPerSecond,
                fsyncsPerSecond,
                batch,
                histogram.quantile(0.50),
                histogram.quantile(0.99),
                checkpointFsyncsPerSecond,
                segmentWritesPerSecond,
                cpuMicrosPerAppend,
                gcShare,
                rawAppendsPerSecond,
                rawFsyncsPerSecond,
                cpuMicrosByThread);
    }

    /** CPU time of this whole process (every thread, GC included). */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** CPU time of every live thread, by thread id. */
    private static Map<Long, Long> threadCpuNanos() {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        Map<Long, Long> nanos = new HashMap<>();
        for (long id : bean.getAllThreadIds()) {
            long cpu = bean.getThreadCpuTime(id);
            if (cpu >= 0) {
                nanos.put(id, cpu);
            }
        }
        return nanos;
    }

    /**
     * Adds each thread's CPU time between two snapshots to its kind: the producers (the shards), the store's journal
     * writer, segment writer, completer and background thread (checkpoints, zero-filling the next journal file).
     */
    private static void addThreadNanos(Map<String, Long> byKind, Map<Long, Long> before, Map<Long, Long> after) {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        for (String kind : List.of("producers", "journal", "segments", "completer", "background")) {
            byKind.putIfAbsent(kind, 0L);
        }
        for (Map.Entry<Long, Long> thread : after.entrySet()) {
            ThreadInfo info = bean.getThreadInfo(thread.getKey());
            if (info == null) {
                continue;
            }
            String name = info.getThreadName();
            String kind = name.startsWith("producer-")
                    ? "producers"
                    : name.startsWith("ganglion-journal-")
                            ? "journal"
                            : name.startsWith("ganglion-segments-")
                                    ? "segments"
                                    : name.startsWith("ganglion-durable-")
                                            ? "completer"
                                            : name.startsWith("ganglion-storage-") ? "background" : null;
            if (kind != null) {
                byKind.merge(kind, thread.getValue() - before.getOrDefault(thread.getKey(), 0L), Long::sum);
            }
        }
    }

    private static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
    }

    /** Shared flags of one cell. */
    private static final class Run {
        final LatencyHistogram histogram;
        final java.util.concurrent.atomic.AtomicInteger idle = new java.util.concurrent.atomic.AtomicInteger();
        volatile boolean measuring;
        volatile boolean paused;
        volatile boolean stop;

        Run(LatencyHistogram histogram) {
            this.histogram = histogram;
        }

        /** Stops the producers and waits until all their appends are durable. */
        void pause(int producers) throws InterruptedException {
            paused = true;
            while (idle.get() < producers) {
                TimeUnit.MILLISECONDS.sleep(1);
            }
        }

        void resume() {
            idle.set(0);
            paused = false;
        }

        /** On a producer: while paused, waits with nothing in flight. */
        void idleWhilePaused(Semaphore inFlight, int window) {
            if (paused) {
                inFlight.acquireUninterruptibly(window);
                idle.incrementAndGet();
                while (paused && !stop) {
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
                inFlight.release(window);
            }
        }
    }

    private static void produce(List<ReplicaLog> logs, int size, int window, Run run) {
        Semaphore inFlight = new Semaphore(window);
        ByteBuffer payload = ByteBuffer.allocate(size);
        Arrays.fill(payload.array(), (byte) 'm');
        int next = 0;
        while (!run.stop) {
            run.idleWhilePaused(inFlight, window);
            inFlight.acquireUninterruptibly();
            ReplicaLog log = logs.get(next);
            next = next + 1 == logs.size() ? 0 : next + 1;
            long submitted = System.nanoTime();
            AppendOutcome outcome = log.append(1, RecordType.DATA, payload);
            if (backedOff(outcome, inFlight)) {
                continue;
            }
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

    /** A refusal for the backlog is flow control: wait a little and go on. */
    private static boolean backedOff(AppendOutcome outcome, Semaphore inFlight) {
        if (outcome instanceof AppendOutcome.Rejected rejected && rejected.reason() == AppendOutcome.Reason.BACKLOG) {
            inFlight.release();
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            return true;
        }
        return false;
    }

    /**
     * As {@link #produce}, but learns of durability through one listener per object: the listener finds each
     * confirmed append's submit time in a per-object ring the producer filled before appending (published to the
     * completion thread through the journal queue).
     */
    private static void produceWithListeners(List<ReplicaLog> logs, int size, int window, Run run) {
        Semaphore inFlight = new Semaphore(window);
        ByteBuffer payload = ByteBuffer.allocate(size);
        Arrays.fill(payload.array(), (byte) 'm');
        int ring = Integer.highestOneBit(Math.max(16, window)) * 2;
        long[][] submitted = new long[logs.size()][ring];
        long[] confirmed = new long[logs.size()];
        for (int i = 0; i < logs.size(); i++) {
            ReplicaLog log = logs.get(i);
            long[] times = submitted[i];
            int index = i;
            confirmed[i] = log.lastOffset();
            log.durabilityListener(new DurabilityListener() {
                @Override
                public void durable(long offset) {
                    // on the completion thread, the histogram's single writer
                    long now = System.nanoTime();
                    long from = confirmed[index] + 1;
                    for (long o = from; o <= offset; o++) {
                        if (run.measuring) {
                            run.histogram.record(now - times[(int) (o & (ring - 1))]);
                        }
                    }
                    confirmed[index] = Math.max(confirmed[index], offset);
                    if (offset >= from) {
                        inFlight.release((int) (offset - from + 1));
                    }
                }
            });
        }
        int next = 0;
        while (!run.stop) {
            run.idleWhilePaused(inFlight, window);
            inFlight.acquireUninterruptibly();
            ReplicaLog log = logs.get(next);
            long[] times = submitted[next];
            next = next + 1 == logs.size() ? 0 : next + 1;
            times[(int) (log.nextOffset() & (ring - 1))] = System.nanoTime();
            AppendOutcome outcome = log.append(1, RecordType.DATA, payload);
            if (backedOff(outcome, inFlight)) {
                continue;
            }
            if (!(outcome instanceof AppendOutcome.Appended)) {
                inFlight.release();
                throw new IllegalStateException("append refused: " + outcome);
            }
        }
        inFlight.acquireUninterruptibly(window); // every append completed
        for (ReplicaLog log : logs) {
            log.durabilityListener(null);
        }
    }

    /**
     * The disk's ceiling for the same work: after a {@code sync}, one thread writes {@code bytesPerForce} bytes of
     * real frames at a time to a preallocated file with a positional write, and forces after each, as the journal
     * does, with nothing else around it.
     *
     * @return frames of the cell's size carried, forces, and seconds taken
     */
    static double[] rawCeiling(Path file, int fileBytes, int size, double bytesPerForce, Options options)
            throws IOException, InterruptedException {
        int frame = RecordDescriptor.frameLength(size);
        int batchBytes = (int) Math.max(frame, Math.round(bytesPerForce));
        ByteBuffer record = RecordDescriptor.encode(1, 1, 0, 0, RecordType.DATA, ByteBuffer.allocate(size));
        ByteBuffer buffer = ByteBuffer.allocateDirect(batchBytes);
        while (buffer.hasRemaining()) {
            buffer.put(record.clear().limit(Math.min(frame, buffer.remaining())));
        }
        new ProcessBuilder("sync").inheritIO().start().waitFor(); // the cell's dirty pages must not be flushed here
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
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.seconds());
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
            return new double[] {forces * (double) batchBytes / frame, forces, elapsed};
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static Options parse(String[] args) {
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "ganglion-storage-bench");
        int seconds = 2;
        int rounds = 3;
        int warmup = 1;
        int[] objects = {1, 3, 100, 1000};
        int[] sizes = {100, 1024};
        int producers = 2;
        int window = 16;
        List<String> confirms = List.of("future");
        long groupCommitMicros = StorageConfig.DEFAULT_GROUP_COMMIT_NANOS / 1000;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw usage("missing value for " + args[i]);
            }
            String value = args[i + 1];
            switch (args[i]) {
                case "--dir" -> dir = Path.of(value);
                case "--seconds" -> seconds = Integer.parseInt(value);
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--warmup" -> warmup = Integer.parseInt(value);
                case "--objects" -> objects = ints(value);
                case "--sizes" -> sizes = ints(value);
                case "--producers" -> producers = Integer.parseInt(value);
                case "--window" -> window = Integer.parseInt(value);
                case "--confirm" -> confirms = List.of(value.split(","));
                case "--group-commit-us" -> groupCommitMicros = Long.parseLong(value);
                default -> throw usage("unknown option " + args[i]);
            }
        }
        return new Options(
                dir, seconds, rounds, warmup, objects, sizes, producers, window, confirms, groupCommitMicros);
    }

    private static int[] ints(String list) {
        return Arrays.stream(list.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    private static IllegalArgumentException usage(String why) {
        return new IllegalArgumentException(
                why + "; usage: StorageBench [--dir DIR] [--seconds N] [--rounds N] [--warmup N]"
                        + " [--objects 1,3,100,1000] [--sizes 100,1024] [--producers N] [--window N]"
                        + " [--confirm future,listener] [--group-commit-us N]");
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
