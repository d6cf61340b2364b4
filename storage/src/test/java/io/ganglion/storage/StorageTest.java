package io.ganglion.storage;

import static io.ganglion.storage.TestStores.appendDurably;
import static io.ganglion.storage.TestStores.assertPayloads;
import static io.ganglion.storage.TestStores.await;
import static io.ganglion.storage.TestStores.readAll;
import static io.ganglion.storage.TestStores.smallConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StorageTest {
    @TempDir
    Path dir;

    @TempDir
    Path scratch;

    @Test
    void shouldKeepEveryRecordAcrossCleanReopen() throws IOException {
        try (Storage storage = Storage.open(dir, smallConfig())) {
            appendDurably(storage.replica(1), 1, 300);
            appendDurably(storage.replica(2), 1, 50);
        }
        try (Storage storage = Storage.open(dir, smallConfig())) {
            assertThat(storage.objectIds()).containsExactlyInAnyOrder(1L, 2L);
            ReplicaLog one = storage.replica(1);
            assertThat(one.lastOffset()).isEqualTo(299);
            assertThat(one.durableOffset()).isEqualTo(299);
            assertPayloads(one, readAll(one));
            assertThat(storage.replica(2).lastOffset()).isEqualTo(49);
        }
    }

    @Test
    void shouldForceTheRecordsOfOneGroupCommitIntervalOnce() throws IOException {
        // a second between forces under load: records appended 20 ms apart right after a force (each a batch and a
        // force of its own without the interval) wait for the next force, together
        try (Storage storage = Storage.open(dir, smallConfig().withGroupCommitNanos(1_000_000_000L))) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 1);
            appendDurably(log, 1, 1); // two small batches in a row: the next one may wait
            long batches = storage.journalBatches();
            List<java.util.concurrent.CompletableFuture<Long>> durable = new java.util.ArrayList<>();
            for (int i = 0; i < 5; i++) {
                AppendOutcome outcome = log.append(1, RecordType.DATA, TestStores.payload(1, log.nextOffset()));
                durable.add(((AppendOutcome.Appended) outcome).durable());
                sleepMillis(20);
            }
            assertThat(await(durable.getLast())).isEqualTo(6);
            assertThat(durable).allMatch(java.util.concurrent.CompletableFuture::isDone);
            assertThat(storage.journalBatches() - batches).isEqualTo(1);
            assertThat(storage.journalGroupCommitWaits()).isEqualTo(1);
            assertPayloads(log, readAll(log));
        }
    }

    @Test
    void shouldStopWaitingForAWriterThatWaitsForEachRecord() throws IOException {
        // a closed loop (each append waits for the previous one to be durable) sends nothing during a wait: after
        // two fruitless waits the journal forces at once again
        try (Storage storage = Storage.open(dir, smallConfig().withGroupCommitNanos(300_000_000L))) {
            ReplicaLog log = storage.replica(1);
            for (int i = 0; i < 12; i++) {
                appendDurably(log, 1, 1);
            }
            assertThat(storage.journalGroupCommitWaits()).isEqualTo(JournalWriter.FRUITLESS_WAITS);
            assertThat(storage.journalBatches()).isEqualTo(12);
            assertPayloads(log, readAll(log));
        }
    }

    @Test
    void shouldForceAtOnceWhatFindsTheJournalIdle() throws IOException {
        // an interval far longer than the test may wait: the first append after the open is forced without it
        try (Storage storage = Storage.open(dir, smallConfig().withGroupCommitNanos(60_000_000_000L))) {
            assertThat(appendDurably(storage.replica(1), 1, 1)).isZero();
        }
        assertThatThrownBy(() -> smallConfig().withGroupCommitNanos(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("groupCommitNanos");
    }

    @Test
    void shouldNeverReplayTheOldFramesOfAReusedJournalFile() throws IOException {
        // 16 KiB journal files, a checkpoint every two: files behind a checkpoint come back as the next files
        StorageConfig config = new StorageConfig(4096, 16 * 1024, 32 * 1024, 64 * 1024, 64 * 1024, true, () -> 1L);
        Storage first = Storage.open(dir, config);
        appendDurably(first.replica(2), 1, 400); // the first files hold object 2's records
        assertThat(first.deleteReplica(2)).isTrue();
        ReplicaLog one = first.replica(1);
        long last = -1;
        while (first.journalFilesReused() < 3) {
            last = appendDurably(one, 1, 20);
        }
        last = appendDurably(one, 1, 20); // the journal now writes into a reused file, its old frames after the end
        assertThat(last).isGreaterThan(400);
        first.halt();
        try (Storage storage = Storage.open(dir, config)) {
            // a replayed old frame of object 2 would bring it back; one of object 1 would cut or repeat its log
            assertThat(storage.objectIds()).containsExactly(1L);
            ReplicaLog log = storage.replica(1);
            assertThat(log.lastOffset()).isEqualTo(last);
            assertThat(log.damaged()).isFalse();
            assertPayloads(log, readAll(log));
        }
    }

    @Test
    void shouldReuseTheJournalFilesOfTheLastRunAfterReopen() throws IOException {
        StorageConfig config = new StorageConfig(4096, 16 * 1024, 1L << 40, 64 * 1024, 64 * 1024, true, () -> 1L);
        try (Storage storage = Storage.open(dir, config)) {
            appendDurably(storage.replica(1), 1, 600); // several 16 KiB journal files, never checkpointed
        }
        try (Storage storage = Storage.open(dir, config)) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 600); // rolls into the files kept from the last run
            assertThat(storage.journalFilesReused()).isGreaterThanOrEqualTo(1);
            assertThat(log.lastOffset()).isEqualTo(1199);
            assertPayloads(log, readAll(log));
        }
        try (Storage storage = Storage.open(dir, config)) {
            assertThat(storage.replica(1).lastOffset()).isEqualTo(1199);
        }
    }

    @Test
    void shouldReplayJournalIntoSegmentsAfterHalt() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        appendDurably(first.replica(7), 1, 500);
        first.halt();
        // the journal still holds every record: remove the segments so only replay can restore them
        try (Stream<Path> files = Files.list(dir.resolve("replicas").resolve(ReplicaLog.directoryName(7)))) {
            for (Path file : files.toList()) {
                if (file.toString().endsWith(Segment.SUFFIX)) {
                    Files.delete(file);
                }
            }
        }
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog log = storage.replica(7);
            assertThat(log.lastOffset()).isEqualTo(499);
            List<LogRecord> records = readAll(log);
            assertThat(records).hasSize(500);
            assertPayloads(log, records);
        }
    }

    @Test
    void shouldRecoverTheSameLogWhenReopenedTwice() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        appendDurably(first.replica(3), 1, 120);
        first.halt();
        Storage second = Storage.open(dir, smallConfig());
        List<LogRecord> afterFirst = readAll(second.replica(3));
        second.halt();
        try (Storage third = Storage.open(dir, smallConfig())) {
            List<LogRecord> afterSecond = readAll(third.replica(3));
            assertThat(afterSecond).hasSameSizeAs(afterFirst).hasSize(120);
            assertPayloads(third.replica(3), afterSecond);
        }
    }

    @Test
    void shouldKeepSealAndEpochHistoryAcrossHalt() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        ReplicaLog log = first.replica(5);
        appendDurably(log, 1, 10);
        appendDurably(log, 3, 10);
        SealResult seal = await(log.seal(3));
        assertThat(seal).isEqualTo(new SealResult(3, 3, 19, 19));
        first.halt();
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog reopened = storage.replica(5);
            assertThat(reopened.sealedEpoch()).isEqualTo(3);
            assertThat(reopened.epochHistory().entries())
                    .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(3, 10));
            assertThat(reopened.append(3, RecordType.DATA, ByteBuffer.allocate(1)))
                    .isEqualTo(AppendOutcome.Rejected.of(AppendOutcome.Reason.SEALED_EPOCH));
            assertThat(reopened.append(4, RecordType.EPOCH_START, ByteBuffer.allocate(1)))
                    .isInstanceOf(AppendOutcome.Appended.class);
        }
    }

    @Test
    void shouldKeepTruncateAndDiscardAcrossHalt() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        ReplicaLog log = first.replica(9);
        appendDurably(log, 1, 400);
        assertThat(log.truncateAfter(349)).isEqualTo(349);
        long start = await(log.discardBefore(200));
        assertThat(start).isGreaterThan(0).isLessThanOrEqualTo(200);
        appendDurably(log, 2, 5); // 350..354 in epoch 2
        first.halt();
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog reopened = storage.replica(9);
            assertThat(reopened.startOffset()).isEqualTo(start);
            assertThat(reopened.lastOffset()).isEqualTo(354);
            List<LogRecord> records = readAll(reopened);
            assertPayloads(reopened, records);
            assertThat(records.getLast().epoch()).isEqualTo(2);
            assertThat(records.get(records.size() - 6).epoch()).isEqualTo(1);
            assertThat(reopened.epochHistory().entries())
                    .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(2, 350));
        }
    }

    @Test
    void shouldKeepInstalledSnapshotAcrossHalt() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        ReplicaLog log = first.replica(11);
        appendDurably(log, 1, 30);
        EpochHistory history = EpochHistory.of(List.of(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(4, 900)));
        assertThat(log.installSnapshot(1000, history, ByteBuffer.wrap(new byte[] {1, 2, 3})))
                .isEqualTo(1000);
        appendDurably(log, 4, 3);
        first.halt();
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog reopened = storage.replica(11);
            assertThat(reopened.startOffset()).isEqualTo(1001);
            assertThat(reopened.lastOffset()).isEqualTo(1003);
            assertThat(reopened.epochHistory()).isEqualTo(history);
            assertThat(reopened.snapshot()).hasValueSatisfying(snapshot -> {
                assertThat(snapshot.offset()).isEqualTo(1000);
                assertThat(snapshot.data()).isEqualTo(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            });
            assertPayloads(reopened, readAll(reopened));
        }
    }

    @Test
    void shouldDeleteJournalFilesBehindACheckpoint() throws IOException {
        try (Storage storage = Storage.open(dir, smallConfig())) {
            appendDurably(storage.replica(1), 1, 3000); // several 64 KiB journal files
            assertThat(journalFiles()).hasSizeGreaterThan(1);
            await(storage.checkpoint());
            assertThat(journalFiles()).hasSize(1);
        }
    }

    @Test
    void shouldRefuseASecondOpenOfTheSameDirectory() throws IOException {
        try (Storage storage = Storage.open(dir, smallConfig())) {
            assertThatThrownBy(() -> Storage.open(dir, smallConfig()))
                    .isInstanceOf(StorageException.class)
                    .hasMessageContaining("in use");
            assertThat(storage.objectIds()).isEmpty();
        }
    }

    @Test
    void shouldCheckpointByItselfAsTheJournalGrows() throws IOException {
        StorageConfig config = smallConfig().withCheckpointJournalBytes(32 * 1024);
        try (Storage storage = Storage.open(dir, config)) {
            long before = storage.checkpoints();
            appendDurably(storage.replica(1), 1, 2000);
            await(storage.checkpoint());
            assertThat(storage.checkpoints()).isGreaterThan(before + 1);
        }
    }

    @Test
    void shouldRebuildLogAfterAReplayedTruncateBelowALostDiscard() throws IOException {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        Storage first = Storage.open(dir, smallConfig(), io);
        ReplicaLog log = first.replica(4);
        appendDurably(log, 1, 100);
        await(first.checkpoint());
        assertThat(log.truncateAfter(79)).isEqualTo(79); // journaled after the checkpoint
        assertThat(appendDurably(log, 2, 170)).isEqualTo(249); // 80..249 in epoch 2, durable
        // from here nothing reaches the journal, as if the process died: more epoch 2 records live only in
        // segments, and a discard moves the log start past the truncate point
        io.dropWrites = true;
        appendDurably(log, 2, 100);
        await(log.discardBefore(200));
        long start = log.startOffset();
        assertThat(start).isGreaterThan(81);
        first.halt();
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog reopened = storage.replica(4);
            assertThat(reopened.startOffset()).isEqualTo(start);
            assertThat(reopened.lastOffset()).isEqualTo(249); // the durable records, nothing the journal lost
            List<LogRecord> records = readAll(reopened);
            for (LogRecord record : records) {
                assertThat(record.epoch()).isEqualTo(2);
                assertThat(reopened.epochHistory().epochAt(record.offset()))
                        .as("epoch of offset %d in %s", record.offset(), reopened.epochHistory())
                        .isEqualTo(2);
            }
            assertThat(reopened.epochHistory().entries())
                    .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(2, 80));
            assertPayloads(reopened, records);
        }
    }

    @Test
    void shouldDeleteReplicaAndFreeItsFiles() throws IOException {
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog doomed = storage.replica(1);
            appendDurably(doomed, 1, 300);
            appendDurably(storage.replica(2), 1, 10);
            await(storage.checkpoint());
            assertThat(replicaDirectory(1)).isDirectory();
            assertThat(storage.deleteReplica(1)).isTrue();
            assertThat(replicaDirectory(1)).doesNotExist();
            assertThat(storage.objectIds()).containsExactly(2L);
            assertThat(storage.existingReplica(1)).isEmpty();
            assertThat(doomed.append(1, RecordType.DATA, ByteBuffer.allocate(1)))
                    .isEqualTo(AppendOutcome.Rejected.of(AppendOutcome.Reason.DELETED));
            assertThatThrownBy(() -> doomed.read(0, 100)).isInstanceOf(StorageException.class);
            assertThat(storage.deleteReplica(1)).isFalse();
            await(storage.checkpoint());
        }
        try (Storage storage = Storage.open(dir, smallConfig())) {
            assertThat(storage.objectIds()).containsExactly(2L);
            assertThat(replicaDirectory(1)).doesNotExist();
        }
    }

    @Test
    void shouldDeleteAReplicaOnceWhenTwoThreadsDeleteItTogether() throws Exception {
        try (Storage storage = Storage.open(dir, smallConfig())) {
            for (long id = 1; id <= 20; id++) {
                appendDurably(storage.replica(id), 1, 20);
                long object = id;
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.Callable<Boolean> delete = () -> {
                    go.await();
                    return storage.deleteReplica(object);
                };
                java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
                try {
                    java.util.concurrent.Future<Boolean> a = two.submit(delete);
                    java.util.concurrent.Future<Boolean> b = two.submit(delete);
                    go.countDown();
                    // exactly one of them deletes it; the other finds it gone or being deleted, and neither fails
                    assertThat(List.of(a.get(), b.get())).containsExactlyInAnyOrder(true, false);
                } finally {
                    two.shutdownNow();
                }
                assertThat(replicaDirectory(id)).doesNotExist();
                assertThat(storage.existingReplica(id)).isEmpty();
            }
        }
    }

    @Test
    void shouldKeepReplicaDeletedAcrossHalt() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        appendDurably(first.replica(1), 1, 200);
        appendDurably(first.replica(2), 1, 20);
        await(first.checkpoint()); // the checkpoint knows replica 1
        appendDurably(first.replica(1), 1, 10);
        assertThat(first.deleteReplica(1)).isTrue();
        appendDurably(first.replica(2), 1, 5);
        first.halt(); // the deletion is only in the journal
        try (Storage storage = Storage.open(dir, smallConfig())) {
            assertThat(storage.objectIds()).containsExactly(2L);
            ReplicaLog two = storage.replica(2);
            assertThat(two.lastOffset()).isEqualTo(24);
            assertPayloads(two, readAll(two));
        }
    }

    @Test
    void shouldNotResurrectADeletedReplicaWhoseFilesSurvivedACrash() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        appendDurably(first.replica(1), 1, 100);
        await(first.checkpoint());
        first.awaitSegmentWrites();
        Path saved = scratch.resolve("saved");
        copyTree(replicaDirectory(1), saved);
        assertThat(first.deleteReplica(1)).isTrue();
        first.halt();
        // as if the process died after the DELETE record was forced but before the files went
        copyTree(saved, replicaDirectory(1));
        try (Storage storage = Storage.open(dir, smallConfig())) {
            assertThat(storage.objectIds()).isEmpty();
            assertThat(replicaDirectory(1)).doesNotExist();
        }
        try (Storage storage = Storage.open(dir, smallConfig())) {
            assertThat(storage.objectIds()).isEmpty();
        }
    }

    @Test
    void shouldStartADeletedObjectAnewWhenItIsCreatedAgain() throws IOException {
        Storage first = Storage.open(dir, smallConfig());
        appendDurably(first.replica(1), 1, 100);
        await(first.replica(1).seal(3));
        assertThat(first.deleteReplica(1)).isTrue();
        ReplicaLog again = first.replica(1);
        assertThat(again.nextOffset()).isZero();
        assertThat(again.sealedEpoch()).isEqualTo(-1);
        appendDurably(again, 1, 7);
        first.halt(); // old records, the deletion and the new records are all in the journal
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog reopened = storage.replica(1);
            assertThat(reopened.startOffset()).isZero();
            assertThat(reopened.lastOffset()).isEqualTo(6);
            assertThat(reopened.sealedEpoch()).isEqualTo(-1);
            assertThat(reopened.damaged()).isFalse();
            assertPayloads(reopened, readAll(reopened));
        }
    }

    private Path replicaDirectory(long objectId) {
        return dir.resolve("replicas").resolve(ReplicaLog.directoryName(objectId));
    }

    private static void copyTree(Path from, Path to) throws IOException {
        if (Files.exists(to)) {
            try (Stream<Path> paths = Files.walk(to)) {
                for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path file : files.toList()) {
                Files.copy(file, to.resolve(file.getFileName()));
            }
        }
    }

    private List<Path> journalFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir.resolve("journal"))) {
            return files.filter(f -> f.toString().endsWith(".journal")).toList();
        }
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
