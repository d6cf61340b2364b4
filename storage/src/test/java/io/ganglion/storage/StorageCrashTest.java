package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM ({@link CrashChild}) with SIGKILL in the middle of appending, many times over the same data
 * directory, and reopens it after each kill: every append, truncate, seal and discard whose completion the child
 * reported is there, records are intact (CRC checked on read) and offsets contiguous.
 *
 * <p>Runs {@code -Dganglion.storage.crashRuns=N} kills (default 20) from seed {@code -Dganglion.storage.crashSeed}
 * (default fixed); a failure names the seed and the run.
 */
class StorageCrashTest {
    private static final int RUNS = Integer.getInteger("ganglion.storage.crashRuns", 20);
    private static final long SEED = Long.getLong("ganglion.storage.crashSeed", 20261129L);

    @TempDir
    Path dir;

    @TempDir
    Path reports;

    /** What the child reported durable, per object: offset to epoch, the log start and the sealed epoch. */
    private final Map<Long, TreeMap<Long, Long>> durable = new HashMap<>();

    private final Map<Long, Long> reportedStart = new HashMap<>();
    private final Map<Long, Long> reportedSeal = new HashMap<>();
    /** Per object, the lowest truncate point issued in this run: records after it may be gone or replaced. */
    private final Map<Long, Long> issuedTruncate = new HashMap<>();
    /** Objects whose deletion was issued in this run and not reported: the old log may or may not be there. */
    private final java.util.Set<Long> issuedDelete = new java.util.HashSet<>();

    private int reportedDeletes;
    /** Per object deleted in this run, the lowest epoch its new log may hold. */
    private final Map<Long, Long> deletedBelowEpoch = new HashMap<>();
    /** Per object, the child's recent lines other than D, and the first D after each: shown when a run fails. */
    private final Map<Long, java.util.ArrayDeque<String>> trail = new HashMap<>();

    @Test
    void shouldKeepEveryReportedAppendAcrossRepeatedKills() throws Exception {
        SplittableRandom random = new SplittableRandom(SEED);
        int totalLines = 0;
        for (int run = 0; run < RUNS; run++) {
            long childSeed = random.nextLong();
            int killAfterLines = random.nextInt(50, 1500);
            try {
                totalLines += crashOnce(childSeed, killAfterLines);
                verify();
            } catch (AssertionError | Exception e) {
                throw new AssertionError(
                        "crash run " + run + " failed; reproduce with -Dganglion.storage.crashSeed=" + SEED
                                + " (child seed " + childSeed + ", killed after " + killAfterLines + " lines)",
                        e);
            }
        }
        assertThat(totalLines).isGreaterThan(RUNS * 50);
        if (RUNS >= 20) {
            assertThat(reportedDeletes).as("deletions exercised").isPositive();
        }
        System.out.println("crash runs=" + RUNS + " lines=" + totalLines + " deletes=" + reportedDeletes);
    }

    private int crashOnce(long childSeed, int killAfterLines) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path report = Files.createTempFile(reports, "crash-child", ".txt");
        List<String> command = new ArrayList<>(List.of(
                java,
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
                "-cp",
                System.getProperty("java.class.path"),
                CrashChild.class.getName(),
                dir.toString(),
                Long.toString(childSeed),
                report.toString()));
        Process child = new ProcessBuilder(command)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        int lines = 0;
        try (FileChannel channel = FileChannel.open(report, StandardOpenOption.READ)) {
            LineReader reader = new LineReader(channel);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (lines < killAfterLines && child.isAlive() && System.nanoTime() < deadline) {
                int read = reader.readLines(this::record);
                lines += read;
                if (read == 0) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
            // SIGKILL, while the child is appending
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
            // every whole line written before the kill was issued or reported
            lines += reader.readLines(this::record);
        } finally {
            Files.deleteIfExists(report);
        }
        assertThat(child.isAlive()).isFalse();
        assertThat(lines).as("child wrote nothing; exit %s", child.exitValue()).isPositive();
        return lines;
    }

    /** Reads whole lines from a file another process appends to; a line without its newline waits. */
    private static final class LineReader {
        private final FileChannel channel;
        private final StringBuilder partial = new StringBuilder();
        private long position;

        LineReader(FileChannel channel) {
            this.channel = channel;
        }

        int readLines(java.util.function.Consumer<String> consumer) throws IOException {
            ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
            int count = 0;
            int read;
            while ((read = channel.read(buffer.clear(), position)) > 0) {
                position += read;
                partial.append(new String(buffer.array(), 0, read, StandardCharsets.UTF_8));
                int newline;
                while ((newline = partial.indexOf("\n")) >= 0) {
                    String line = partial.substring(0, newline);
                    partial.delete(0, newline + 1);
                    if (!line.equals("READY")) {
                        consumer.accept(line);
                        count++;
                    }
                }
            }
            return count;
        }
    }

    private void record(String line) {
        String[] parts = line.split(" ");
        long object = Long.parseLong(parts[1]);
        TreeMap<Long, Long> records = durable.computeIfAbsent(object, o -> new TreeMap<>());
        java.util.ArrayDeque<String> recent = trail.computeIfAbsent(object, o -> new java.util.ArrayDeque<>());
        if (!line.startsWith("D") || (!recent.isEmpty() && !recent.peekLast().startsWith("D"))) {
            recent.addLast(line);
            if (recent.size() > 40) {
                recent.removeFirst();
            }
        }
        switch (parts[0]) {
            case "D" -> records.put(Long.parseLong(parts[2]), Long.parseLong(parts[3]));
            case "t" -> issuedTruncate.merge(object, Long.parseLong(parts[2]), Math::min);
            case "T" -> records.tailMap(Long.parseLong(parts[2]), false).clear();
            case "S" -> reportedSeal.merge(object, Long.parseLong(parts[2]), Math::max);
            case "X" -> {
                long start = Long.parseLong(parts[2]);
                reportedStart.merge(object, start, Math::max);
                records.headMap(start, false).clear();
            }
            case "r" -> issuedDelete.add(object);
            case "R" -> {
                reportedDeletes++;
                issuedDelete.remove(object);
                records.clear();
                reportedStart.remove(object);
                reportedSeal.remove(object);
                issuedTruncate.remove(object);
                deletedBelowEpoch.put(object, Long.parseLong(parts[2]));
            }
            default -> throw new AssertionError("unexpected line from child: " + line);
        }
    }

    private void verify() throws IOException {
        try (Storage storage = Storage.open(dir, CrashChild.config())) {
            for (var entry : durable.entrySet()) {
                long object = entry.getKey();
                ReplicaLog log = storage.replica(object);
                assertThat(log.damaged())
                        .as("object %d damaged: %s", object, log.damage())
                        .isFalse();
                // an issued, unreported delete may have happened: then nothing of the old log need be there
                boolean mayBeDeleted = issuedDelete.contains(object);
                if (!mayBeDeleted) {
                    assertThat(log.sealedEpoch())
                            .as("object %d sealed epoch; recent lines %s", object, trail.get(object))
                            .isGreaterThanOrEqualTo(reportedSeal.getOrDefault(object, -1L));
                    assertThat(log.startOffset())
                            .as("object %d start; recent lines %s", object, trail.get(object))
                            .isGreaterThanOrEqualTo(reportedStart.getOrDefault(object, 0L));
                }
                TreeMap<Long, Long> reported = entry.getValue();
                // the log may hold records whose completion was never reported, but all reported ones
                long mayChangeAfter = mayBeDeleted ? -1 : issuedTruncate.getOrDefault(object, Long.MAX_VALUE);
                if (!reported.isEmpty() && !mayBeDeleted) {
                    assertThat(log.lastOffset())
                            .as("object %d last offset", object)
                            .isGreaterThanOrEqualTo(Math.min(reported.lastKey(), mayChangeAfter));
                }
                Map<Long, Long> epochs = new HashMap<>();
                long next = log.startOffset();
                while (next <= log.lastOffset()) {
                    for (LogRecord record : log.read(next, 64 * 1024)) {
                        assertThat(record.offset()).isEqualTo(next);
                        assertThat(TestStores.text(record.payload()))
                                .isEqualTo(TestStores.text(CrashChild.payload(object, next, record.epoch())));
                        assertThat(log.epochHistory().epochAt(next))
                                .as(
                                        "object %d epoch history %s at offset %d; recent lines %s",
                                        object, log.epochHistory(), next, trail.get(object))
                                .isEqualTo(record.epoch());
                        assertThat(record.epoch())
                                .as("object %d offset %d survived its deletion", object, next)
                                .isGreaterThanOrEqualTo(deletedBelowEpoch.getOrDefault(object, 0L));
                        epochs.put(next, record.epoch());
                        next++;
                    }
                }
                Map<Long, Long> mustHold = mayChangeAfter < log.startOffset() || mayBeDeleted
                        ? Map.of()
                        : reported.subMap(log.startOffset(), true, mayChangeAfter, true);
                for (var report : mustHold.entrySet()) {
                    assertThat(epochs.get(report.getKey()))
                            .as(
                                    "object %d offset %d reported durable in epoch %d",
                                    object, report.getKey(), report.getValue())
                            .isEqualTo(report.getValue());
                }
                // what survived is now the truth the next run builds on
                TreeMap<Long, Long> now = new TreeMap<>(epochs);
                durable.put(object, now);
                if (mayBeDeleted) {
                    reportedSeal.put(object, log.sealedEpoch());
                    reportedStart.put(object, log.startOffset());
                }
            }
            issuedTruncate.clear();
            issuedDelete.clear();
            deletedBelowEpoch.clear();
        }
    }
}
