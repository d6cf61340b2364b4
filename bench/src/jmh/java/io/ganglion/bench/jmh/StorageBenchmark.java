package io.ganglion.bench.jmh;

import io.ganglion.storage.AppendOutcome;
import io.ganglion.storage.RecordType;
import io.ganglion.storage.ReplicaLog;
import io.ganglion.storage.Storage;
import io.ganglion.storage.StorageConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Appends to one replica log of a real {@link Storage} under a temporary folder (default settings: journal with group
 * commit, segment writer behind it): one record waited for until durable, and a batch of 64 whose last one is waited
 * for. The figures include the disk's force; run them on the disk a broker would use ({@code java.io.tmpdir}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class StorageBenchmark {
    private static final int BATCH = 64;

    @Param("1024")
    int recordBytes;

    private Path directory;
    private Storage storage;
    private ReplicaLog log;
    private ByteBuffer payload;

    @Setup(Level.Trial)
    public void open() throws IOException {
        directory = Files.createTempDirectory("ganglion-jmh-storage");
        storage = Storage.open(directory, StorageConfig.defaults(System::currentTimeMillis));
        log = storage.replica(1);
        payload = ByteBuffer.allocateDirect(recordBytes);
        while (payload.hasRemaining()) {
            payload.put((byte) 'x');
        }
        payload.flip();
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        storage.close();
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    /** One record appended and waited for until the journal forced it. */
    @Benchmark
    public long appendDurable() {
        return durable(append());
    }

    /** {@value #BATCH} records appended, then the last one waited for: the cost per record under group commit. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long appendBatchDurable() {
        AppendOutcome last = null;
        for (int i = 0; i < BATCH; i++) {
            last = append();
        }
        return durable(last);
    }

    private AppendOutcome append() {
        return log.append(1, RecordType.DATA, payload.duplicate());
    }

    private static long durable(AppendOutcome outcome) {
        if (outcome instanceof AppendOutcome.Appended appended) {
            return appended.durable().join();
        }
        throw new IllegalStateException("append refused: " + outcome);
    }
}
