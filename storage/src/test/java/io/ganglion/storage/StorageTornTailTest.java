package io.ganglion.storage;

import static io.ganglion.storage.TestStores.appendDurably;
import static io.ganglion.storage.TestStores.assertPayloads;
import static io.ganglion.storage.TestStores.readAll;
import static io.ganglion.storage.TestStores.smallConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Cuts the journal and a segment at every byte of their last records, and flips bits in them, then reopens: the log
 * holds exactly the records that are whole, contiguous and intact (in the journal: of the runs whose commit frame is
 * whole and matches), never a corrupt one; checkpointed data that is gone makes the replica damaged instead of served.
 */
class StorageTornTailTest {
    private static final long OBJECT = 1;
    private static final int RECORDS = 20;
    private static final int TAIL_RECORDS = 2;

    @TempDir
    Path root;

    private Path pristine;
    private Path work;

    /** A store holding {@link #RECORDS} records of one object, in the journal (not checkpointed) and segments. */
    private void prepareHalted(boolean preallocate) throws IOException {
        pristine = root.resolve("pristine");
        work = root.resolve("work");
        Storage storage = Storage.open(pristine, smallConfig().withPreallocateJournal(preallocate));
        appendDurably(storage.replica(OBJECT), 1, RECORDS);
        storage.halt();
    }

    /** The same, but cleanly closed: checkpointed, the journal empty. */
    private void prepareCheckpointed() throws IOException {
        pristine = root.resolve("pristine");
        work = root.resolve("work");
        try (Storage storage = Storage.open(pristine, smallConfig())) {
            appendDurably(storage.replica(OBJECT), 1, RECORDS);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldCutTornJournalTailAtLastWholeRun(boolean preallocated) throws IOException {
        prepareHalted(preallocated);
        Path journal = onlyJournalFile(pristine);
        List<long[]> frames = journalFrames(journal);
        List<Long> records = recordEnds(frames);
        assertThat(records).hasSize(RECORDS);
        long from = records.get(RECORDS - TAIL_RECORDS - 1);
        for (long cut = from; cut <= frames.getLast()[0]; cut++) {
            restore();
            deleteSegments(work); // as if the unforced segment writes were lost with the power
            Path torn = onlyJournalFile(work);
            if (preallocated) {
                zeroFrom(torn, cut); // a preallocated file keeps its length; the torn part reads as zeros
            } else {
                truncate(torn, cut);
            }
            // zeros over a frame's own trailing zeros (a commit frame ends in its zero reserved field) leave it whole
            int whole = recordsInWholeRuns(frames, cut, preallocated);
            try (Storage storage = Storage.open(work, smallConfig())) {
                ReplicaLog log = storage.replica(OBJECT);
                assertThat(log.lastOffset()).as("cut at byte %d", cut).isEqualTo(whole - 1);
                assertThat(log.damaged()).isFalse();
                assertPayloads(log, readAll(log));
                // new appends land after the cut and survive the next recovery
                appendDurably(log, 1, 2);
                storage.halt();
            }
            try (Storage storage = Storage.open(work, smallConfig())) {
                ReplicaLog log = storage.replica(OBJECT);
                assertThat(log.lastOffset()).as("cut at byte %d, reopened", cut).isEqualTo(whole + 1);
                assertPayloads(log, readAll(log));
            }
        }
    }

    @Test
    void shouldCutJournalAtFlippedBitAndServeNothingAfterIt() throws IOException {
        prepareHalted(false);
        Path journal = onlyJournalFile(pristine);
        List<long[]> frames = journalFrames(journal);
        long from = recordEnds(frames).get(RECORDS - TAIL_RECORDS - 1);
        for (long at = from; at < frames.getLast()[0]; at++) {
            restore();
            deleteSegments(work);
            flipBit(onlyJournalFile(work), at, (int) (at % 8));
            int intact = recordsInWholeRuns(frames, at, false); // records of the runs wholly before the flipped byte
            try (Storage storage = Storage.open(work, smallConfig())) {
                ReplicaLog log = storage.replica(OBJECT);
                assertThat(log.lastOffset()).as("bit flipped at byte %d", at).isEqualTo(intact - 1);
                assertPayloads(log, readAll(log));
            }
        }
    }

    @Test
    void shouldRestoreTornSegmentTailFromJournal() throws IOException {
        prepareHalted(false);
        List<Long> ends = frameEnds(lastSegment(pristine));
        for (long cut = ends.get(ends.size() - TAIL_RECORDS - 1); cut <= ends.getLast(); cut++) {
            restore();
            truncate(lastSegment(work), cut);
            try (Storage storage = Storage.open(work, smallConfig())) {
                ReplicaLog log = storage.replica(OBJECT);
                assertThat(log.lastOffset()).as("segment cut at byte %d", cut).isEqualTo(RECORDS - 1);
                assertThat(log.damaged()).isFalse();
                assertPayloads(log, readAll(log));
            }
        }
    }

    @Test
    void shouldRestoreFlippedSegmentTailFromJournal() throws IOException {
        prepareHalted(false);
        List<Long> ends = frameEnds(lastSegment(pristine));
        for (long at = ends.get(ends.size() - TAIL_RECORDS - 1); at < ends.getLast(); at++) {
            restore();
            flipBit(lastSegment(work), at, (int) (at % 8));
            try (Storage storage = Storage.open(work, smallConfig())) {
                ReplicaLog log = storage.replica(OBJECT);
                assertThat(log.lastOffset())
                        .as("segment bit flipped at byte %d", at)
                        .isEqualTo(RECORDS - 1);
                assertPayloads(log, readAll(log));
            }
        }
    }

    @Test
    void shouldMarkReplicaDamagedWhenCheckpointedSegmentTailIsCut() throws IOException {
        prepareCheckpointed();
        List<Long> ends = frameEnds(lastSegment(pristine));
        for (long cut = ends.get(ends.size() - TAIL_RECORDS - 1); cut < ends.getLast(); cut++) {
            restore();
            truncate(lastSegment(work), cut);
            try (Storage storage = Storage.open(work, smallConfig())) {
                ReplicaLog log = storage.replica(OBJECT);
                assertThat(log.damaged())
                        .as("checkpointed segment cut at byte %d", cut)
                        .isTrue();
                assertThat(log.damage())
                        .hasValueSatisfying(reason -> assertThat(reason).contains("missing"));
                assertThatThrownBy(() -> log.read(log.startOffset(), 100)).isInstanceOf(ReplicaDamagedException.class);
            }
        }
    }

    @Test
    void shouldMarkReplicaDamagedOnCorruptRecordInMiddleOfCheckpointedSegment() throws IOException {
        prepareCheckpointed();
        restore();
        Path first = firstSegment(work);
        flipBit(first, 100, 3);
        try (Storage storage = Storage.open(work, smallConfig())) {
            ReplicaLog log = storage.replica(OBJECT);
            assertThat(log.damaged()).isTrue();
            assertThatThrownBy(() -> log.read(log.startOffset(), 100))
                    .isInstanceOf(ReplicaDamagedException.class)
                    .hasMessageContaining("object=1");
            assertThat(log.append(1, RecordType.DATA, ByteBuffer.allocate(1)))
                    .isEqualTo(AppendOutcome.Rejected.of(AppendOutcome.Reason.DAMAGED));
        }
        // the verdict is persisted: it is not forgotten on the next open
        try (Storage storage = Storage.open(work, smallConfig())) {
            assertThat(storage.replica(OBJECT).damaged()).isTrue();
        }
    }

    // ---------------------------------------------------------------- helpers

    private void restore() throws IOException {
        if (Files.exists(work)) {
            deleteTree(work);
        }
        try (Stream<Path> paths = Files.walk(pristine)) {
            for (Path source : paths.toList()) {
                Path target = work.resolve(pristine.relativize(source).toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else if (!source.getFileName().toString().equals("lock")) {
                    Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static void deleteTree(Path path) throws IOException {
        try (Stream<Path> paths = Files.walk(path)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static Path replicaDir(Path store) {
        return store.resolve("replicas").resolve(ReplicaLog.directoryName(OBJECT));
    }

    private static List<Path> segments(Path store) throws IOException {
        try (Stream<Path> files = Files.list(replicaDir(store))) {
            return files.filter(f -> f.toString().endsWith(Segment.SUFFIX))
                    .sorted()
                    .toList();
        }
    }

    private static Path lastSegment(Path store) throws IOException {
        return segments(store).getLast();
    }

    private static Path firstSegment(Path store) throws IOException {
        return segments(store).getFirst();
    }

    private static void deleteSegments(Path store) throws IOException {
        for (Path segment : segments(store)) {
            Files.delete(segment);
        }
    }

    private static Path onlyJournalFile(Path store) throws IOException {
        try (Stream<Path> files = Files.list(store.resolve("journal"))) {
            List<Path> journal = files.filter(f -> f.toString().endsWith(JournalWriter.SUFFIX))
                    .toList();
            assertThat(journal).hasSize(1);
            return journal.getFirst();
        }
    }

    /** File positions where each frame of the file ends. */
    private static List<Long> frameEnds(Path file) throws IOException {
        List<Long> ends = new ArrayList<>();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            FrameScanner.scan(channel, 0, 1 << 20, (buffer, at, position) -> {
                ends.add(position + RecordDescriptor.frameLength(buffer, at));
                return true;
            });
        }
        return ends;
    }

    /** Each frame of a journal file as {end, 1 for a commit frame else 0, end of its last byte that is not zero}. */
    private static List<long[]> journalFrames(Path file) throws IOException {
        List<long[]> frames = new ArrayList<>();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            FrameScanner.scan(channel, 0, 1 << 20, (buffer, at, position) -> {
                boolean commit = RecordDescriptor.type(buffer, at) == RecordType.COMMIT;
                int length = RecordDescriptor.frameLength(buffer, at);
                int nonZero = length;
                while (buffer.get(at + nonZero - 1) == 0) {
                    nonZero--;
                }
                frames.add(new long[] {position + length, commit ? 1 : 0, position + nonZero});
                return true;
            });
        }
        assertThat(frames.getLast()[1])
                .as("the journal ends with a commit frame")
                .isEqualTo(1);
        return frames;
    }

    private static List<Long> recordEnds(List<long[]> frames) {
        return frames.stream().filter(f -> f[1] == 0).map(f -> f[0]).toList();
    }

    /**
     * Records in the runs whose commit frame ends at or before {@code position}: what recovery may keep. With {@code
     * zeroed}, the bytes from {@code position} on read as zeros rather than being gone, so a frame whose own last bytes
     * are zeros stays whole.
     */
    private static int recordsInWholeRuns(List<long[]> frames, long position, boolean zeroed) {
        int whole = 0;
        int run = 0;
        for (long[] frame : frames) {
            if ((zeroed ? frame[2] : frame[0]) > position) {
                break;
            }
            if (frame[1] == 1) {
                whole += run;
                run = 0;
            } else {
                run++;
            }
        }
        return whole;
    }

    private static void truncate(Path file, long size) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(size);
        }
    }

    private static void zeroFrom(Path file, long position) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            long size = channel.size();
            if (size > position) {
                channel.write(ByteBuffer.allocate((int) (size - position)), position);
            }
        }
    }

    private static void flipBit(Path file, long position, int bit) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, position);
            one.put(0, (byte) (one.get(0) ^ (1 << bit))).rewind();
            channel.write(one, position);
        }
    }
}
