package io.ganglion.storage;

import static io.ganglion.storage.TestStores.appendDurably;
import static io.ganglion.storage.TestStores.assertPayloads;
import static io.ganglion.storage.TestStores.await;
import static io.ganglion.storage.TestStores.payload;
import static io.ganglion.storage.TestStores.readAll;
import static io.ganglion.storage.TestStores.smallConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.storage.AppendOutcome.Appended;
import io.ganglion.testing.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Appends make no file system call; the segment writer puts records in their segments behind the journal. */
class SegmentWriterTest {
    @TempDir
    Path dir;

    @Test
    void shouldMakeNoFileCallOnTheAppendingThread() throws Exception {
        FaultyFileIo io = new FaultyFileIo(""); // watches every channel: journal and segments
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog one = storage.replica(1);
            ReplicaLog two = storage.replica(2);
            AtomicReference<CompletableFuture<Long>> last = new AtomicReference<>();
            Thread shard = new Thread(() -> {
                for (int i = 0; i < 400; i++) { // 4 KiB segments: several rolls per replica
                    ReplicaLog log = i % 2 == 0 ? one : two;
                    AppendOutcome outcome = log.append(1, RecordType.DATA, payload(log.objectId(), log.nextOffset()));
                    last.set(((Appended) outcome).durable());
                    log.appendAt(log.nextOffset(), 1, RecordType.DATA, 7, payload(log.objectId(), log.nextOffset()));
                }
            });
            io.watchedThread = shard;
            shard.start();
            shard.join();
            await(last.get());
            assertThat(io.watchedCalls).as("file calls on the appending thread").isEmpty();
            assertThat(one.segmentFiles()).hasSizeGreaterThan(3);
            storage.awaitSegmentWrites();
            assertPayloads(one, readAll(one));
            assertPayloads(two, readAll(two));
        }
    }

    @Test
    void shouldAppendAndServeReadsWhileSegmentWritesAreHeld() throws Exception {
        FaultyFileIo io = new FaultyFileIo(Segment.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog log = storage.replica(1);
            io.writeGate = new CountDownLatch(1); // the segment writer blocks in its first write, as during a force
            assertThat(appendDurably(log, 1, 100)).isEqualTo(99); // durable through the journal alone
            assertThat(io.writeHeld.tryAcquire(30, TimeUnit.SECONDS)).isTrue();
            List<LogRecord> fromMemory = readAll(log);
            assertThat(fromMemory).hasSize(100);
            assertPayloads(log, fromMemory);
            assertThat(appendDurably(log, 1, 50)).isEqualTo(149);
            io.writeGate.countDown();
            storage.awaitSegmentWrites();
            List<LogRecord> fromFiles = readAll(log);
            assertThat(fromFiles).hasSize(150);
            assertPayloads(log, fromFiles);
            long onDisk = 0;
            for (Path segment : log.segmentFiles()) {
                onDisk += Files.size(segment);
            }
            assertThat(onDisk)
                    .isEqualTo(fromFiles.stream()
                            .mapToLong(r ->
                                    RecordDescriptor.frameLength(r.payload().remaining()))
                            .sum());
        }
    }

    @Test
    void shouldDropHeldRecordsPastATruncate() throws Exception {
        // replica 1's segment writes block, so replica 2's records wait in the writer's queue when 2 is truncated
        FaultyFileIo io = new FaultyFileIo(ReplicaLog.directoryName(1) + "/" + Segment.name(0));
        Storage first = Storage.open(dir, smallConfig(), io);
        ReplicaLog blocker = first.replica(1);
        ReplicaLog log = first.replica(2);
        io.writeGate = new CountDownLatch(1);
        appendDurably(blocker, 1, 1);
        assertThat(io.writeHeld.tryAcquire(30, TimeUnit.SECONDS)).isTrue();
        appendDurably(log, 1, 40);
        CompletableFuture<Long> truncated = CompletableFuture.supplyAsync(() -> {
            try {
                return log.truncateAfter(19);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        TimeUnit.MILLISECONDS.sleep(100); // the truncate waits for the writer to take in what it was handed
        io.writeGate.countDown();
        assertThat(await(truncated)).isEqualTo(19);
        appendDurably(log, 2, 30); // 20..49 in epoch 2, at the places the cut records had
        first.awaitSegmentWrites();
        List<LogRecord> records = readAll(log);
        assertThat(records).hasSize(50);
        assertPayloads(log, records);
        assertThat(records.get(19).epoch()).isEqualTo(1);
        assertThat(records.get(20).epoch()).isEqualTo(2);
        first.halt();
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog reopened = storage.replica(2);
            List<LogRecord> recovered = readAll(reopened);
            assertThat(recovered).hasSize(50);
            assertThat(recovered.get(20).epoch()).isEqualTo(2);
            assertPayloads(reopened, recovered);
            assertThat(reopened.epochHistory().entries())
                    .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(2, 20));
        }
    }

    @Test
    void shouldRefuseAppendsWhileSegmentWritesFailAndRetryThem() throws Exception {
        FaultyFileIo io = new FaultyFileIo(Segment.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 3);
            storage.awaitSegmentWrites();
            io.failWrites = true; // a full disk
            assertThat(appendDurably(log, 1, 1)).isEqualTo(3); // the journal still takes it
            assertThatThrownBy(storage::awaitSegmentWrites).isInstanceOf(StorageException.class);
            assertThatThrownBy(() -> await(storage.checkpoint())).hasRootCauseMessage("No space left on device");
            AppendOutcome refused = log.append(1, RecordType.DATA, payload(1, 4));
            assertThat(refused).isInstanceOf(AppendOutcome.Failed.class);
            assertThat(log.nextOffset()).isEqualTo(4);
            assertPayloads(log, readAll(log)); // served from memory meanwhile
            io.failWrites = false;
            storage.awaitSegmentWrites(); // retried, and the torn write overwritten
            assertThat(appendDurably(log, 1, 2)).isEqualTo(5);
            await(storage.checkpoint());
        }
        assertReopensUndamagedThrough(5);
    }

    @Test
    void shouldRecoverFromTheJournalWhatFailingSegmentWritesNeverWrote() throws Exception {
        FaultyFileIo io = new FaultyFileIo(Segment.SUFFIX);
        Storage first = Storage.open(dir, smallConfig(), io);
        ReplicaLog log = first.replica(1);
        appendDurably(log, 1, 10);
        await(first.checkpoint());
        io.failWrites = true;
        appendDurably(log, 1, 10);
        first.halt(); // a crash while segment writes fail: only the journal holds 10..19
        assertReopensUndamagedThrough(19);
    }

    @Test
    void shouldHoldConfirmsNotRefuseAppendsWhileTheSegmentWriterIsBehind() throws Exception {
        FaultyFileIo io = new FaultyFileIo(Segment.SUFFIX);
        StorageConfig config = smallConfig().withWriteBehind(16 * 1024, 16 * 1024, 512 * 1024);
        try (Storage storage = Storage.open(dir, config, io)) {
            ReplicaLog log = storage.replica(1);
            io.writeGate = new CountDownLatch(1); // a disk that takes no segment writes for now
            try {
                // confirms come while the segment writer is less than half the bound behind; one record at a time,
                // each waited for until it is durable or the backlog passed half the bound (then it is held)
                while (storage.segmentWriter().backlog() <= 256 * 1024) {
                    AppendOutcome next = log.append(1, RecordType.DATA, payload(1, log.nextOffset()));
                    assertThat(next).isInstanceOf(Appended.class);
                    CompletableFuture<Long> durable = ((Appended) next).durable();
                    Poll.until(
                            Duration.ofSeconds(30),
                            Duration.ofMillis(1),
                            () -> durable.isDone() || storage.segmentWriter().backlog() > 256 * 1024,
                            () -> "durable below half the bound");
                    if (durable.isDone()) {
                        assertThat(durable).isCompleted();
                    }
                }
                AppendOutcome outcome = log.append(1, RecordType.DATA, payload(1, log.nextOffset()));
                assertThat(outcome).isInstanceOf(Appended.class); // accepted, not refused
                CompletableFuture<Long> held = ((Appended) outcome).durable();
                TimeUnit.MILLISECONDS.sleep(200);
                assertThat(held).as("confirm held back by the journal").isNotDone();
                io.writeGate.countDown();
                assertThat(await(held)).isEqualTo(log.lastOffset());
            } finally {
                io.writeGate.countDown();
            }
            assertPayloads(log, readAll(log));
        }
    }

    @Test
    void shouldRefuseAppendsOfAReplicaWhoseRecordsPassTheBoundUnwritten() throws Exception {
        FaultyFileIo io = new FaultyFileIo(Segment.SUFFIX);
        StorageConfig config = smallConfig().withWriteBehind(16 * 1024, 16 * 1024, 64 * 1024);
        try (Storage storage = Storage.open(dir, config, io)) {
            ReplicaLog log = storage.replica(1);
            io.writeGate = new CountDownLatch(1);
            CompletableFuture<Long> last = null;
            try {
                AppendOutcome outcome;
                int appended = 0;
                while ((outcome = log.append(1, RecordType.DATA, payload(1, log.nextOffset())))
                                instanceof Appended accepted
                        && appended < 10_000) {
                    last = accepted.durable();
                    appended++;
                }
                assertThat(outcome).isEqualTo(AppendOutcome.Rejected.of(AppendOutcome.Reason.BACKLOG));
                assertThat(appended).isBetween(500, 1000); // about 64 KiB of 100-byte records
            } finally {
                io.writeGate.countDown();
            }
            await(last); // all of them handed to the segment writer (the journal hands a batch over before its force)
            storage.awaitSegmentWrites();
            assertThat(log.append(1, RecordType.DATA, payload(1, log.nextOffset())))
                    .isInstanceOf(Appended.class);
            assertPayloads(log, readAll(log));
        }
    }

    @Test
    void shouldWriteManyRecordsPerSegmentWriteCall() throws Exception {
        StorageConfig config = smallConfig().withSegmentBytes(1 << 20).withWriteBehind(16 * 1024, 1 << 20, 64 << 20);
        try (Storage storage = Storage.open(dir, config)) {
            List<ReplicaLog> logs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                logs.add(storage.replica(i));
            }
            List<CompletableFuture<Long>> last = new ArrayList<>();
            for (int round = 0; round < 300; round++) {
                for (ReplicaLog log : logs) {
                    AppendOutcome outcome = log.append(1, RecordType.DATA, payload(log.objectId(), log.nextOffset()));
                    if (round == 299) {
                        last.add(((Appended) outcome).durable());
                    }
                }
            }
            last.forEach(TestStores::await);
            storage.awaitSegmentWrites();
            assertThat(storage.segmentWrites()).isLessThan(3000 / 10);
            for (ReplicaLog log : logs) {
                assertPayloads(log, readAll(log));
            }
        }
    }

    @Test
    void shouldWriteEachChunkOfAReplicaWithOneCall() throws Exception {
        StorageConfig config = smallConfig().withSegmentBytes(1 << 20).withWriteBehind(1 << 20, 1 << 20, 64 << 20);
        try (Storage storage = Storage.open(dir, config)) {
            ReplicaLog log = storage.replica(1);
            long before = storage.segmentWrites();
            int bytes = 0;
            while (bytes < 60_000) { // chunks of 4, 8, 16 and 32 KiB: no more than five
                bytes += RecordDescriptor.frameLength(
                        payload(1, log.nextOffset()).remaining());
                appendDurably(log, 1, 1);
            }
            storage.awaitSegmentWrites();
            assertThat(storage.segmentWrites() - before).isBetween(1L, 5L);
            List<LogRecord> records = readAll(log);
            assertPayloads(log, records);
            assertThat(Files.size(log.segmentFiles().getFirst())).isEqualTo(bytes);
        }
    }

    @Test
    void shouldKeepWhatAReadFromMemoryReturnedWhenTheMemoryIsReused() throws Exception {
        try (Storage storage = Storage.open(dir, smallConfig().withSegmentBytes(1 << 20))) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 100);
            List<LogRecord> fromMemory = readAll(log); // not yet written: the segment writer holds them
            for (int round = 0; round < 20; round++) { // chunks written, given back and filled again
                appendDurably(log, 1, 200);
                storage.awaitSegmentWrites();
                appendDurably(storage.replica(2), 1, 200);
            }
            assertThat(fromMemory).hasSize(100);
            assertPayloads(log, fromMemory);
            assertPayloads(log, readAll(log));
        }
    }

    /** Reopens the storage without faults: replica 1 ends at {@code lastOffset}, undamaged, every payload intact. */
    private void assertReopensUndamagedThrough(long lastOffset) throws IOException {
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog log = storage.replica(1);
            assertThat(log.lastOffset()).isEqualTo(lastOffset);
            assertThat(log.damaged()).isFalse();
            assertPayloads(log, readAll(log));
        }
    }
}
