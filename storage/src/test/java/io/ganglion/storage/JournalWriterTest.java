package io.ganglion.storage;

import static io.ganglion.storage.TestStores.appendData;
import static io.ganglion.storage.TestStores.appendDurably;
import static io.ganglion.storage.TestStores.assertPayloads;
import static io.ganglion.storage.TestStores.await;
import static io.ganglion.storage.TestStores.payload;
import static io.ganglion.storage.TestStores.readAll;
import static io.ganglion.storage.TestStores.smallConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ganglion.storage.AppendOutcome.Appended;
import io.ganglion.storage.AppendOutcome.Reason;
import io.ganglion.storage.AppendOutcome.Rejected;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalWriterTest {
    @TempDir
    Path dir;

    @Test
    void shouldCommitManyObjectsWithFewerForcesThanAppends() throws Exception {
        try (Storage storage = Storage.open(dir, smallConfig())) {
            List<ReplicaLog> logs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                logs.add(storage.replica(i));
            }
            long forcesBefore = storage.journalForces();
            List<CompletableFuture<Long>> futures = new ArrayList<>();
            for (int round = 0; round < 20; round++) {
                for (ReplicaLog log : logs) {
                    futures.add(appendData(log, 1, round));
                }
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            long forces = storage.journalForces() - forcesBefore;
            assertThat(forces).isLessThan(futures.size() / 10);
            assertThat(storage.journalEntries()).isEqualTo(futures.size());
            for (ReplicaLog log : logs) {
                assertThat(log.durableOffset()).isEqualTo(19);
            }
        }
    }

    @Test
    void shouldRollJournalFilesAndStartEachWhereThePreviousEnded() throws IOException {
        try (Storage storage = Storage.open(dir, smallConfig().withPreallocateJournal(true))) {
            appendDurably(storage.replica(1), 1, 2000);
            List<Long> starts = journalStarts();
            assertThat(starts).hasSizeGreaterThan(2);
            for (int i = 1; i < starts.size(); i++) {
                long previousEnd = starts.get(i);
                assertThat(previousEnd - starts.get(i - 1))
                        .isLessThanOrEqualTo(64 * 1024)
                        .isPositive();
            }
        }
        try (Storage storage = Storage.open(dir, smallConfig())) {
            assertThat(storage.replica(1).lastOffset()).isEqualTo(1999);
        }
    }

    @Test
    void shouldFailBatchOnWriteErrorAndNeverReportItDurable() throws IOException {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 10);
            io.failWrites = true;
            CompletableFuture<Long> failed = appendData(log, 1, 10);
            assertThat(failed)
                    .failsWithin(30, TimeUnit.SECONDS)
                    .withThrowableThat()
                    .withCauseInstanceOf(StorageException.class)
                    .withMessageContaining("not durable");
            assertThat(log.durableOffset()).isEqualTo(9);
            assertThat(log.failed()).isTrue();
            io.failWrites = false;
            // the replica refuses appends until it drops what is not durable
            assertThat(log.append(1, RecordType.DATA, payload(1, 11))).isEqualTo(Rejected.of(Reason.FAILED));
            assertThat(log.truncateAfter(log.durableOffset())).isEqualTo(9);
            assertThat(log.failed()).isFalse();
            assertThat(appendDurably(log, 1, 5)).isEqualTo(14);
            assertThat(storage.failure()).isEmpty();
            storage.halt();
        }
        try (Storage storage = Storage.open(dir, smallConfig())) {
            ReplicaLog log = storage.replica(1);
            assertThat(log.lastOffset()).isEqualTo(14);
            assertPayloads(log, readAll(log));
        }
    }

    @Test
    void shouldStopJournalForGoodWhenForceFails() throws IOException {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 3);
            io.failForces = true;
            CompletableFuture<Long> failed = appendData(log, 1, 3);
            assertThat(failed).failsWithin(30, TimeUnit.SECONDS).withThrowableThat();
            assertThat(storage.failure()).isPresent();
            io.failForces = false;
            assertThatThrownBy(() -> log.truncateAfter(2)).isInstanceOf(StorageException.class);
            assertThat(log.lastOffset()).isEqualTo(3); // nothing changed: the truncate never became durable
            assertThat(log.durableOffset()).isEqualTo(2);
        }
    }

    @Test
    void shouldCompleteFuturesOnlyAfterForce() throws IOException {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 2);
            io.forceGate = new CountDownLatch(1);
            CompletableFuture<Long> durable = appendData(log, 1, 2);
            // written and waiting in force: not durable yet
            assertThat(durable).isNotDone();
            assertThat(log.durableOffset()).isEqualTo(1);
            io.forceGate.countDown();
            assertThat(await(durable)).isEqualTo(2);
            assertThat(log.durableOffset()).isEqualTo(2);
        }
    }

    @Test
    void shouldTellTheDurabilityListenerOnlyAfterTheForceReturned() throws Exception {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 2);
            java.util.concurrent.LinkedBlockingQueue<Long> heard = new java.util.concurrent.LinkedBlockingQueue<>();
            log.durabilityListener(new DurabilityListener() {
                @Override
                public void durable(long offset) {
                    heard.add(offset);
                }
            });
            CountDownLatch gate = new CountDownLatch(1);
            io.forceGate = gate;
            try {
                for (int i = 2; i < 10; i++) {
                    assertThat(log.append(1, RecordType.DATA, payload(1, i))).isInstanceOf(Appended.class);
                }
                // the journal writer wrote a batch and is inside its force: nothing of it may be reported yet (a late
                // report of the first two records, whose futures completed before the listener was set, may come)
                assertThat(io.forceHeld.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
                Long early = heard.poll(100, TimeUnit.MILLISECONDS);
                assertThat(early == null || early <= 1)
                        .as("heard %s before the force returned", early)
                        .isTrue();
                assertThat(log.durableOffset()).isEqualTo(1);
            } finally {
                gate.countDown(); // a failed check must not leave the writer in its force while the store closes
            }
            long last = -1;
            while (last < 9) {
                Long offset = heard.poll(10, TimeUnit.SECONDS);
                assertThat(offset).as("the listener hears every batch").isNotNull();
                assertThat(offset).isGreaterThan(last);
                last = offset;
            }
            assertThat(log.durableOffset()).isEqualTo(9);
        }
    }

    @Test
    void shouldBatchAppendsQueuedDuringAForceIntoOneForce() throws IOException {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            ReplicaLog log = storage.replica(1);
            appendDurably(log, 1, 1);
            io.forceGate = new CountDownLatch(1);
            CompletableFuture<Long> first = appendData(log, 1, 1);
            long forcesBefore = storage.journalForces();
            List<CompletableFuture<Long>> queued = new ArrayList<>();
            for (int i = 2; i < 500; i++) {
                queued.add(appendData(log, 1, i));
            }
            io.forceGate.countDown();
            assertThat(await(queued.getLast())).isEqualTo(499);
            assertThat(await(first)).isEqualTo(1);
            // the held batch, then everything that queued behind it: two forces, perhaps a third if the drain raced
            assertThat(storage.journalForces() - forcesBefore).isLessThanOrEqualTo(3);
        }
    }

    @Test
    void shouldTellEachListenerOncePerBatchWithItsLastOffset() throws Exception {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        try (Storage storage = Storage.open(dir, smallConfig(), io)) {
            List<ReplicaLog> logs = List.of(storage.replica(1), storage.replica(2), storage.replica(3));
            java.util.Map<Long, java.util.concurrent.LinkedBlockingQueue<Long>> heard = new java.util.HashMap<>();
            for (ReplicaLog log : logs) {
                java.util.concurrent.LinkedBlockingQueue<Long> calls = new java.util.concurrent.LinkedBlockingQueue<>();
                heard.put(log.objectId(), calls);
                log.durabilityListener(new DurabilityListener() {
                    @Override
                    public void durable(long offset) {
                        calls.add(offset);
                    }
                });
            }
            io.forceGate = new CountDownLatch(1);
            assertThat(logs.getFirst().append(1, RecordType.DATA, payload(1, 0)))
                    .isInstanceOf(Appended.class);
            assertThat(io.forceHeld.tryAcquire(10, TimeUnit.SECONDS)).isTrue(); // batch 1 (one record) in its force
            for (int i = 0; i < 50; i++) { // all of these go into batch 2, 49 or 50 records per replica
                for (ReplicaLog log : logs) {
                    if (log.nextOffset() < 50) {
                        assertThat(log.append(1, RecordType.DATA, payload(log.objectId(), log.nextOffset())))
                                .isInstanceOf(Appended.class);
                    }
                }
            }
            io.forceGate.countDown();
            assertThat(heard.get(1L).poll(10, TimeUnit.SECONDS)).isEqualTo(0);
            for (ReplicaLog log : logs) {
                // one call for the whole batch, with the replica's last offset in it, not one per record
                assertThat(heard.get(log.objectId()).poll(10, TimeUnit.SECONDS)).isEqualTo(49);
                assertThat(heard.get(log.objectId()).poll(100, TimeUnit.MILLISECONDS))
                        .isNull();
                assertThat(log.durableOffset()).isEqualTo(49);
            }
            assertThat(storage.journalEntries()).isEqualTo(150);
        }
    }

    @Test
    void shouldJournalControlRecordsBetweenTheRecordsTheyWereSubmittedBetween() throws Exception {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        Storage storage = Storage.open(dir, smallConfig(), io);
        ReplicaLog log = storage.replica(1);
        appendDurably(log, 1, 1);
        io.forceGate = new CountDownLatch(1);
        assertThat(log.append(1, RecordType.DATA, payload(1, 1))).isInstanceOf(Appended.class);
        assertThat(io.forceHeld.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
        // queued behind the held batch, all in one: records, a seal, records of the next epoch, a discard point
        for (int i = 2; i < 10; i++) {
            log.append(1, RecordType.DATA, payload(1, i));
        }
        CompletableFuture<SealResult> sealed = log.seal(1);
        for (int i = 10; i < 20; i++) {
            log.append(2, RecordType.DATA, payload(1, i));
        }
        CompletableFuture<Long> last = appendData(log, 2, 20);
        io.forceGate.countDown();
        assertThat(await(sealed).lastOffset()).isEqualTo(9); // what the log held when it was sealed
        assertThat(await(last)).isEqualTo(20);
        storage.halt(); // replay from the journal alone
        try (Storage reopened = Storage.open(dir, smallConfig())) {
            ReplicaLog replayed = reopened.replica(1);
            assertThat(replayed.lastOffset()).isEqualTo(20);
            assertThat(replayed.sealedEpoch()).isEqualTo(1);
            assertThat(replayed.epochHistory().entries())
                    .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(2, 10));
            assertPayloads(replayed, readAll(replayed));
        }
    }

    @Test
    void shouldFailWhatAWriteFailedInTheMiddleOfABatchAndWriteTheReplicasItDidNotReach() throws Exception {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        StorageConfig config = smallConfig().withJournalFileBytes(1 << 20);
        Storage storage = Storage.open(dir, config, io);
        List<ReplicaLog> logs = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            logs.add(storage.replica(i));
        }
        appendDurably(logs.getFirst(), 1, 1);
        io.forceGate = new CountDownLatch(1);
        assertThat(logs.getFirst().append(1, RecordType.DATA, payload(1, 1))).isInstanceOf(Appended.class);
        assertThat(io.forceHeld.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
        // about 200 KB behind the held batch: the next batch fills the 64 KiB buffer three times
        List<List<CompletableFuture<Long>>> futures = new ArrayList<>();
        for (ReplicaLog log : logs) {
            List<CompletableFuture<Long>> own = new ArrayList<>();
            for (int i = 0; i < 700; i++) {
                own.add(appendData(log, 1, log.nextOffset()));
            }
            futures.add(own);
        }
        io.writesBeforeOneFailure.set(1); // the batch's first buffer is written, its second fails
        io.forceGate.countDown();
        long failedReplicas = 0;
        List<Long> lastDurable = new ArrayList<>();
        for (int r = 0; r < logs.size(); r++) {
            long last = logs.get(r) == logs.getFirst() ? 1 : -1;
            boolean failed = false;
            for (CompletableFuture<Long> future : futures.get(r)) {
                try {
                    long offset = future.get(30, TimeUnit.SECONDS); // none may hang
                    assertThat(failed).as("a record durable after a failed one").isFalse();
                    last = offset;
                } catch (java.util.concurrent.ExecutionException e) {
                    failed = true;
                }
            }
            assertThat(logs.get(r).failed()).isEqualTo(failed);
            failedReplicas += failed ? 1 : 0;
            lastDurable.add(last);
        }
        assertThat(failedReplicas)
                .as("replicas in the failed part of the batch")
                .isBetween(1L, 3L);
        assertThat(futures.getLast().getLast())
                .as("the last replica was not reached: written next")
                .isDone();
        assertThat(await(futures.getLast().getLast())).isEqualTo(699);
        storage.halt();
        try (Storage reopened = Storage.open(dir, config)) {
            for (int r = 0; r < logs.size(); r++) {
                ReplicaLog replayed = reopened.replica(logs.get(r).objectId());
                assertThat(replayed.lastOffset()).isEqualTo(lastDurable.get(r));
                assertPayloads(replayed, readAll(replayed));
            }
        }
    }

    private List<Long> journalStarts() throws IOException {
        try (Stream<Path> files = Files.list(dir.resolve("journal"))) {
            return files.map(f -> f.getFileName().toString())
                    .filter(n -> n.endsWith(JournalWriter.SUFFIX))
                    .map(n -> Long.parseLong(n.substring(0, 20)))
                    .sorted()
                    .toList();
        }
    }
}
