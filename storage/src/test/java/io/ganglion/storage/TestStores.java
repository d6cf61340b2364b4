package io.ganglion.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Shared helpers for storage tests: a small config, deterministic payloads, waiting on futures. */
final class TestStores {
    static final long NOW = 1_790_000_000_000L;

    private TestStores() {}

    /** Small files so tests roll segments and journal files; no preallocation unless asked. */
    static StorageConfig smallConfig() {
        return new StorageConfig(4096, 64 * 1024, 1L << 40, 64 * 1024, 64 * 1024, false, () -> NOW);
    }

    /** The payload of record {@code offset} of {@code objectId}: its length varies with the offset. */
    static ByteBuffer payload(long objectId, long offset) {
        String text = "object-" + objectId + "-offset-" + offset + "-" + "x".repeat((int) (offset % 37));
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    static String text(ByteBuffer buffer) {
        ByteBuffer copy = buffer.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("future did not complete within 30 s; threads:\n" + threadDump(), e);
        } catch (Exception e) {
            throw new AssertionError("future did not complete normally", e);
        }
    }

    /** Every live thread's stack, for a test that waited in vain. */
    static String threadDump() {
        StringBuilder dump = new StringBuilder();
        for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            dump.append(info.getThreadName())
                    .append(' ')
                    .append(info.getThreadState())
                    .append('\n');
            for (StackTraceElement frame : info.getStackTrace()) {
                dump.append("    at ").append(frame).append('\n');
            }
        }
        return dump.toString();
    }

    /** Appends {@code count} records as the owner and waits until the last is durable. Returns the last offset. */
    static long appendDurably(ReplicaLog log, long epoch, int count) {
        CompletableFuture<Long> last = CompletableFuture.completedFuture(log.lastOffset());
        for (int i = 0; i < count; i++) {
            AppendOutcome outcome = log.append(epoch, RecordType.DATA, payload(log.objectId(), log.nextOffset()));
            assertThat(outcome).isInstanceOf(AppendOutcome.Appended.class);
            last = ((AppendOutcome.Appended) outcome).durable();
        }
        return await(last);
    }

    /** Appends one data record of {@link #payload} for {@code payloadOffset}, expected accepted; its durable future. */
    static CompletableFuture<Long> appendData(ReplicaLog log, long epoch, long payloadOffset) {
        return ((AppendOutcome.Appended) log.append(epoch, RecordType.DATA, payload(log.objectId(), payloadOffset)))
                .durable();
    }

    /** Reads every record from the log start, asserting contiguous offsets. */
    static List<LogRecord> readAll(ReplicaLog log) throws IOException {
        List<LogRecord> all = new java.util.ArrayList<>();
        long next = log.startOffset();
        while (next < log.nextOffset()) {
            List<LogRecord> batch = log.read(next, 8192);
            assertThat(batch).isNotEmpty();
            for (LogRecord record : batch) {
                assertThat(record.offset()).isEqualTo(next);
                next++;
                all.add(record);
            }
        }
        return all;
    }

    /** Asserts every record has the payload {@link #payload} gives for its offset. */
    static void assertPayloads(ReplicaLog log, List<LogRecord> records) {
        for (LogRecord record : records) {
            assertThat(text(record.payload()))
                    .as("payload of offset %d", record.offset())
                    .isEqualTo(text(payload(log.objectId(), record.offset())));
        }
    }
}
