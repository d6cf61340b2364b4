package io.ganglion.storage;

import static io.ganglion.storage.TestStores.NOW;
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
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplicaLogTest {
    @TempDir
    Path dir;

    private Storage storage;
    private ReplicaLog log;

    @BeforeEach
    void open() throws IOException {
        storage = Storage.open(dir, smallConfig());
        log = storage.replica(42);
    }

    @AfterEach
    void close() throws IOException {
        storage.close();
    }

    @Test
    void shouldAssignContiguousOffsetsAndReportDurability() {
        for (int i = 0; i < 10; i++) {
            AppendOutcome outcome = log.append(1, RecordType.DATA, payload(42, i));
            assertThat(outcome).isInstanceOfSatisfying(Appended.class, appended -> {
                assertThat(appended.offset()).isEqualTo(log.lastOffset());
            });
            assertThat(await(((Appended) outcome).durable())).isEqualTo(i);
        }
        assertThat(log.durableOffset()).isEqualTo(9);
        assertThat(log.nextOffset()).isEqualTo(10);
    }

    @Test
    void shouldReadRecordsWithinByteBudgetButAtLeastOne() throws IOException {
        appendDurably(log, 1, 100);
        List<LogRecord> one = log.read(5, 1);
        assertThat(one).hasSize(1);
        assertThat(one.getFirst().offset()).isEqualTo(5);
        assertThat(one.getFirst().timestamp()).isEqualTo(TestStores.NOW);
        assertThat(one.getFirst().type()).isEqualTo(RecordType.DATA);
        List<LogRecord> some = log.read(5, 400);
        int bytes = some.stream()
                .mapToInt(r -> RecordDescriptor.frameLength(r.payload().remaining()))
                .sum();
        assertThat(bytes).isLessThanOrEqualTo(400);
        assertThat(some.size()).isGreaterThan(1);
        assertThat(log.read(100, 4096)).isEmpty();
        assertPayloads(log, readAll(log));
    }

    @Test
    void shouldRollSegmentsAtConfiguredSize() throws IOException {
        appendDurably(log, 1, 200); // about 100 bytes each, 4 KiB segments
        assertThat(log.segmentFiles()).hasSizeGreaterThan(3);
        assertThat(readAll(log)).hasSize(200);
    }

    @Test
    void shouldAcceptFollowerAppendOnlyAtNextOffset() {
        appendDurably(log, 1, 3);
        assertThat(log.appendAt(5, 1, RecordType.DATA, 7, payload(42, 5))).isEqualTo(Rejected.of(Reason.GAP));
        assertThat(log.appendAt(2, 1, RecordType.DATA, 7, payload(42, 2))).isEqualTo(Rejected.of(Reason.OVERLAP));
        AppendOutcome copied = log.appendAt(3, 2, RecordType.EPOCH_START, 7, payload(42, 3));
        assertThat(copied).isInstanceOf(Appended.class);
        assertThat(await(((Appended) copied).durable())).isEqualTo(3);
        assertThat(log.epochHistory().entries())
                .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(2, 3));
    }

    @Test
    void shouldTakeARecoveryCopyBelowTheSealedEpochButNotAGapOrAStaleEpoch() {
        appendDurably(log, 1, 2);
        await(log.seal(2));
        assertThat(log.appendAt(2, 2, RecordType.DATA, 0, payload(42, 2))).isEqualTo(Rejected.of(Reason.SEALED_EPOCH));

        AppendOutcome copied = log.appendCopy(2, 2, RecordType.EPOCH_START, 7, payload(42, 2));

        assertThat(copied).isInstanceOf(Appended.class);
        assertThat(await(((Appended) copied).durable())).isEqualTo(2);
        assertThat(log.appendCopy(4, 2, RecordType.DATA, 7, payload(42, 4))).isEqualTo(Rejected.of(Reason.GAP));
        assertThat(log.appendCopy(3, 1, RecordType.DATA, 7, payload(42, 3))).isEqualTo(Rejected.of(Reason.STALE_EPOCH));
        assertThat(log.sealedEpoch()).isEqualTo(2);
        assertThat(log.epochHistory().entries())
                .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(2, 2));
    }

    @Test
    void shouldRefuseAppendsAtOrBelowSealedEpoch() {
        appendDurably(log, 2, 4);
        SealResult seal = await(log.seal(2));
        assertThat(seal).isEqualTo(new SealResult(2, 2, 3, 3));
        assertThat(log.append(2, RecordType.DATA, payload(42, 4))).isEqualTo(Rejected.of(Reason.SEALED_EPOCH));
        assertThat(log.append(1, RecordType.DATA, payload(42, 4))).isEqualTo(Rejected.of(Reason.SEALED_EPOCH));
        assertThat(log.appendAt(4, 2, RecordType.DATA, 0, payload(42, 4))).isEqualTo(Rejected.of(Reason.SEALED_EPOCH));
        assertThat(log.append(3, RecordType.EPOCH_START, payload(42, 4))).isInstanceOf(Appended.class);
        assertThat(log.sealedEpoch()).isEqualTo(2);
    }

    @Test
    void shouldNotLowerSealedEpoch() {
        await(log.seal(5));
        SealResult again = await(log.seal(3));
        assertThat(again.sealedEpoch()).isEqualTo(5);
        assertThat(log.sealedEpoch()).isEqualTo(5);
    }

    @Test
    void shouldRefuseAppendOfEpochBelowLastRecord() {
        appendDurably(log, 4, 1);
        assertThat(log.append(3, RecordType.DATA, payload(42, 1))).isEqualTo(Rejected.of(Reason.STALE_EPOCH));
    }

    @Test
    void shouldRefuseRecordLargerThanMaximum() {
        ByteBuffer huge = ByteBuffer.allocate(smallConfig().maxRecordBytes());
        assertThat(log.append(1, RecordType.DATA, huge)).isEqualTo(Rejected.of(Reason.TOO_LARGE));
        assertThat(log.nextOffset()).isZero();
    }

    @Test
    void shouldRejectControlTypeInAppend() {
        assertThatThrownBy(() -> log.append(1, RecordType.SEAL, ByteBuffer.allocate(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldTruncateDivergentSuffixAndContinueFromIt() throws IOException {
        appendDurably(log, 1, 50);
        appendDurably(log, 2, 50);
        assertThat(log.truncateAfter(59)).isEqualTo(59);
        assertThat(log.lastOffset()).isEqualTo(59);
        assertThat(log.durableOffset()).isEqualTo(59);
        assertThat(log.epochHistory().entries())
                .containsExactly(new EpochHistory.Entry(1, 0), new EpochHistory.Entry(2, 50));
        assertThat(log.truncateAfter(20)).isEqualTo(20);
        assertThat(log.epochHistory().entries()).containsExactly(new EpochHistory.Entry(1, 0));
        appendDurably(log, 3, 5);
        List<LogRecord> records = readAll(log);
        assertThat(records).hasSize(26);
        assertThat(records.get(21).epoch()).isEqualTo(3);
        assertPayloads(log, records);
    }

    @Test
    void shouldFindTheFirstRecordAppendedAtOrAfterATime(@TempDir Path other) throws IOException {
        java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(1_000);
        StorageConfig small = TestStores.smallConfig();
        StorageConfig ticking = new StorageConfig(
                small.segmentBytes(),
                small.journalFileBytes(),
                small.checkpointJournalBytes(),
                small.maxBatchBytes(),
                small.maxRecordBytes(),
                small.preallocateJournal(),
                clock::get);
        try (Storage store = Storage.open(other, ticking)) {
            ReplicaLog timed = store.replica(7);
            for (int i = 0; i < 300; i++) {
                clock.set(1_000 + 10L * i); // offset i at 1000 + 10 i
                await(((Appended) timed.append(1, RecordType.DATA, payload(7, i))).durable());
            }
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 0, 0)).isZero();
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 1_000, 0)).isZero();
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 1_001, 0)).isEqualTo(1);
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 2_500, 0)).isEqualTo(150);
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 2_505, 0)).isEqualTo(151);
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 3_990, 0)).isEqualTo(299);
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 3_991, 0))
                    .as("all older")
                    .isEqualTo(300);
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 1_000, 200))
                    .as("not before from")
                    .isEqualTo(200);
            assertThat(LogTime.retainedStart(timed, Long.MAX_VALUE, Long.MIN_VALUE))
                    .as("no limit")
                    .isZero();
            assertThat(LogTime.retainedStart(timed, Long.MAX_VALUE, 2_500)).isEqualTo(timed.retainedStartByAge(2_500));
            assertThat(LogTime.retainedStart(timed, 1_000, 2_500))
                    .as("the limit that keeps less")
                    .isEqualTo(Math.max(timed.retainedStart(1_000), timed.retainedStartByAge(2_500)));
            long keep = timed.retainedStartByAge(2_500);
            assertThat(keep)
                    .as("the base of the segment holding offset 150")
                    .isPositive()
                    .isLessThanOrEqualTo(150);
            assertThat(timed.retainedStartByAge(0)).as("nothing old enough").isZero();
            long active = timed.retainedStartByAge(10_000);
            assertThat(active)
                    .as("all old: the active segment stays")
                    .isGreaterThan(keep)
                    .isLessThan(300);
            long start = await(timed.discardBefore(keep));
            assertThat(start).isEqualTo(keep);
            assertThat(timed.read(keep, 1 << 20).getFirst().offset()).isEqualTo(keep);
            assertThat(LogTime.firstOffsetAtOrAfter(timed, 0, 0))
                    .as("not before the start")
                    .isEqualTo(start);
        }
    }

    @Test
    void shouldKeepTheNewestWholeSegmentsThatFitARetentionSize() throws IOException {
        appendDurably(log, 1, 200); // 4 KiB segments: several of them
        assertThat(log.retainedStart(Long.MAX_VALUE)).isZero();
        assertThat(log.retainedStart(0)).as("the active segment stays").isPositive();

        long budget = 6_000;
        long start = log.retainedStart(budget);
        assertThat(start).isPositive();
        assertThat(await(log.discardBefore(start))).isEqualTo(start);
        List<LogRecord> kept = readAll(log);
        assertThat(kept.getFirst().offset()).isEqualTo(start);
        assertThat(kept.stream()
                        .mapToLong(r -> RecordDescriptor.frameLength(r.payload().remaining()))
                        .sum())
                .isLessThanOrEqualTo(budget);
        assertThat(log.retainedStart(budget)).as("nothing more to discard").isEqualTo(start);
        assertThat(log.retainedStart(1_000))
                .as("a smaller budget keeps fewer segments")
                .isGreaterThan(start);
        assertPayloads(log, kept);
    }

    @Test
    void shouldDiscardWholeSegmentsOnly() throws IOException {
        appendDurably(log, 1, 200);
        long start = await(log.discardBefore(100));
        assertThat(start).isEqualTo(log.startOffset()).isLessThanOrEqualTo(100).isGreaterThan(0);
        assertThatThrownBy(() -> log.read(start - 1, 100)).isInstanceOf(IllegalArgumentException.class);
        assertThat(log.read(start, 100).getFirst().offset()).isEqualTo(start);
        assertThat(await(log.discardBefore(10_000))).isEqualTo(log.startOffset());
        assertThat(log.lastOffset()).isEqualTo(199); // the active segment stays
    }

    @Test
    void shouldContinueFromSnapshotOffset() throws IOException {
        appendDurably(log, 1, 20);
        EpochHistory history = EpochHistory.of(List.of(new EpochHistory.Entry(2, 0)));
        assertThat(log.installSnapshot(499, history, ByteBuffer.wrap(new byte[] {9, 9})))
                .isEqualTo(499);
        assertThat(log.startOffset()).isEqualTo(500);
        assertThat(log.nextOffset()).isEqualTo(500);
        assertThat(log.durableOffset()).isEqualTo(499);
        assertThat(log.read(500, 100)).isEmpty();
        assertThat(log.snapshot())
                .hasValueSatisfying(s -> assertThat(s.offset()).isEqualTo(499));
        assertThat(await(((Appended) log.append(2, RecordType.DATA, payload(42, 500))).durable()))
                .isEqualTo(500);
    }

    @Test
    void shouldMarkReplicaDamagedOnCorruptRecordInSegment() throws IOException {
        appendDurably(log, 1, 30);
        storage.awaitSegmentWrites(); // from here reads come from the file
        Path segment = log.segmentFiles().getFirst();
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, 300);
            one.put(0, (byte) (one.get(0) ^ 0x10)).rewind();
            channel.write(one, 300);
        }
        assertThatThrownBy(() -> readAll(log))
                .isInstanceOf(ReplicaDamagedException.class)
                .hasMessageContaining("object=42");
        assertThat(log.damaged()).isTrue();
        assertThatThrownBy(() -> log.read(0, 10)).isInstanceOf(ReplicaDamagedException.class);
        assertThat(log.append(1, RecordType.DATA, payload(42, 30))).isEqualTo(Rejected.of(Reason.DAMAGED));
        assertThatThrownBy(() -> log.truncateAfter(5)).isInstanceOf(ReplicaDamagedException.class);
    }

    @Test
    void shouldClearDamageWhenSnapshotInstalled() throws IOException {
        appendDurably(log, 1, 30);
        storage.awaitSegmentWrites();
        Path segment = log.segmentFiles().getFirst();
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(new byte[] {0x55, 0x55}), 20);
        }
        assertThatThrownBy(() -> log.read(0, 100)).isInstanceOf(ReplicaDamagedException.class);
        log.installSnapshot(29, EpochHistory.of(List.of(new EpochHistory.Entry(1, 0))), ByteBuffer.allocate(4));
        assertThat(log.damaged()).isFalse();
        assertThat(await(((Appended) log.append(1, RecordType.DATA, payload(42, 30))).durable()))
                .isEqualTo(30);
    }

    @Test
    void shouldRefuseTruncateFromACompletionCallback() throws IOException {
        FaultyFileIo io = new FaultyFileIo(JournalWriter.SUFFIX);
        try (Storage gated = Storage.open(dir.resolve("gated"), smallConfig(), io)) {
            ReplicaLog other = gated.replica(1);
            io.forceGate = new java.util.concurrent.CountDownLatch(1);
            AppendOutcome outcome = other.append(1, RecordType.DATA, payload(1, 0));
            // registered while the force is held, so it runs on the journal writer thread
            CompletableFuture<Long> truncated = ((Appended) outcome).durable().thenApply(offset -> {
                try {
                    return other.truncateAfter(-1); // would wait for the journal on the journal's own thread
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            io.forceGate.countDown();
            assertThat(truncated)
                    .failsWithin(30, TimeUnit.SECONDS)
                    .withThrowableThat()
                    .withCauseInstanceOf(IllegalStateException.class);
            assertThat(other.lastOffset()).isZero();
            assertThat(appendDurably(other, 1, 1)).isEqualTo(1); // nothing was queued by the refused truncate
        }
    }

    @Test
    void shouldRefuseAppendsAfterStoreClosed() throws IOException {
        storage.close();
        assertThat(log.append(1, RecordType.DATA, payload(42, 0))).isEqualTo(Rejected.of(Reason.CLOSED));
    }

    @Test
    void shouldTakeRecordsLargerThanAChunkAndThanTheJournalBuffer(@TempDir Path other) throws IOException {
        StorageConfig config = new StorageConfig(1 << 20, 1 << 20, 1L << 40, 64 * 1024, 512 * 1024, false, () -> NOW);
        int[] sizes = {100, 70_000, 300_000, 50, 200_000, 10};
        try (Storage store = Storage.open(other, config)) {
            ReplicaLog replica = store.replica(1);
            for (int size : sizes) {
                assertThat(replica.append(1, RecordType.DATA, filled(size))).isInstanceOf(Appended.class);
            }
            assertThat(await(((Appended) replica.append(1, RecordType.DATA, filled(1))).durable()))
                    .isEqualTo(sizes.length);
            assertSizes(replica, sizes); // from memory
            store.awaitSegmentWrites();
            assertSizes(replica, sizes); // from the segment
            store.halt();
        }
        try (Storage store = Storage.open(other, config)) {
            assertSizes(store.replica(1), sizes); // replayed from the journal
        }
    }

    @Test
    void shouldAppendInPlaceOfRecordsCutFromTheMiddleOfAChunk(@TempDir Path other) throws IOException {
        StorageConfig config = smallConfig().withSegmentBytes(1 << 20);
        Storage store = Storage.open(other, config);
        ReplicaLog replica = store.replica(1);
        appendDurably(replica, 1, 30);
        store.awaitSegmentWrites(); // the segment writer is past the cut
        appendDurably(replica, 1, 10); // and these it holds
        assertThat(replica.truncateAfter(24)).isEqualTo(24);
        assertThat(appendDurably(replica, 2, 20)).isEqualTo(44);
        List<LogRecord> records = readAll(replica);
        assertThat(records).hasSize(45);
        assertPayloads(replica, records);
        assertThat(records.get(24).epoch()).isEqualTo(1);
        assertThat(records.get(25).epoch()).isEqualTo(2);
        store.awaitSegmentWrites();
        assertPayloads(replica, readAll(replica));
        store.halt();
        try (Storage reopened = Storage.open(other, config)) {
            ReplicaLog replayed = reopened.replica(1);
            List<LogRecord> recovered = readAll(replayed);
            assertThat(recovered).hasSize(45);
            assertThat(recovered.get(25).epoch()).isEqualTo(2);
            assertPayloads(replayed, recovered);
        }
    }

    private static ByteBuffer filled(int size) {
        byte[] bytes = new byte[size];
        java.util.Arrays.fill(bytes, (byte) (size % 251));
        return ByteBuffer.wrap(bytes);
    }

    private static void assertSizes(ReplicaLog replica, int[] sizes) throws IOException {
        for (int i = 0; i < sizes.length; i++) {
            List<LogRecord> one = replica.read(i, 1);
            assertThat(one).hasSize(1);
            ByteBuffer payload = one.getFirst().payload();
            assertThat(payload.remaining()).isEqualTo(sizes[i]);
            assertThat(payload.get(sizes[i] - 1)).isEqualTo((byte) (sizes[i] % 251));
        }
    }
}
