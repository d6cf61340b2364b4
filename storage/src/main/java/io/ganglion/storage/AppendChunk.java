package io.ganglion.storage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A run of one replica's newest frames in memory, back to back exactly as they will lie in their segment file: byte
 * {@code i} of the chunk goes to file position {@code fileBase + i} of {@link #segment}. The shard encodes each record
 * straight into the replica's current chunk; the journal writer copies ranges of it into its batch; the segment
 * writer writes ranges of it to the segment file with one call each; reads of records not yet in their segment come
 * from it. A record is never split between chunks, and a chunk never spans two segments.
 *
 * <pre>
 *  oldest ──next──▶ ... ──next──▶ current (the shard appends here)
 *  [frame][frame][frame]...        segment writer cursor ≤ journal writer cursor ≤ what the shard committed
 * </pre>
 *
 * <p>Implementation notes. The shard owns the chain: it creates chunks, sets {@link #limit} and then {@link #next}
 * when it moves on to a new chunk, before it commits (publishes {@link ReplicaLog#nextOffset}) any record in the new
 * one, and it alone gives chunks back to the {@link Pool}, only once the segment writer's cursor is in a later chunk
 * (which implies the journal writer's is too). The journal and segment writers read a chunk only below what was
 * committed, with absolute {@code get}s on {@link #buffer}, whose position and limit nobody changes; the shard's
 * {@link #view} is its own for the CRC.
 */
final class AppendChunk {
    /** The smallest chunk; a replica's chunks double from here up to {@link #MAX_BYTES} while it keeps appending. */
    static final int MIN_BYTES = 4 << 10;
    /** The largest pooled chunk; a larger frame gets a chunk of its own, on the heap and not pooled. */
    static final int MAX_BYTES = 64 << 10;

    final ByteBuffer buffer;
    /** The shard's view of {@link #buffer}, for the CRC (its position and limit change). */
    final ByteBuffer view;

    final Segment segment;
    /** File position in {@link #segment} of byte 0. */
    final int fileBase;
    /** Offset of the first record in the chunk. */
    final long firstOffset;
    /** The replica's byte count (see {@link ReplicaLog}) at byte 0: counts bytes written, handed over and held. */
    final long streamBase;
    /** Increases along the chain; the segment writer publishes the one its cursor is in. */
    final long sequence;

    private final boolean pooled;

    /** Bytes used, once the shard moved on to {@link #next}; until then {@link Integer#MAX_VALUE}. */
    int limit = Integer.MAX_VALUE;
    /** The next chunk; set after {@link #limit}. */
    AppendChunk next;
    /** Shard only: the offset of the last record, once the chunk is closed. */
    long lastOffset;

    private AppendChunk(
            ByteBuffer buffer,
            boolean pooled,
            Segment segment,
            int fileBase,
            long firstOffset,
            long streamBase,
            long sequence) {
        this.buffer = buffer;
        this.view = buffer.duplicate();
        this.pooled = pooled;
        this.segment = segment;
        this.fileBase = fileBase;
        this.firstOffset = firstOffset;
        this.streamBase = streamBase;
        this.sequence = sequence;
        this.lastOffset = firstOffset - 1;
    }

    int capacity() {
        return buffer.capacity();
    }

    /**
     * Reads records from {@code from} out of the chain starting at {@code oldest}, those that fit in {@code maxBytes}
     * of frames, at least one: the records not yet in their segments. They were written by this process, so they are
     * not checked again, and they are copied, since the chunks are reused once written. On the shard thread.
     *
     * @param current the chunk the shard appends to, whose frames end at {@code currentEnd}
     * @param next the replica's next offset: the chain holds the records below it
     */
    static List<LogRecord> read(
            AppendChunk oldest, long from, int maxBytes, AppendChunk current, int currentEnd, long next) {
        AppendChunk chunk = oldest;
        while ((chunk == current ? next - 1 : chunk.lastOffset) < from) {
            chunk = chunk.next;
        }
        int position = chunk.segment.position(from) - chunk.fileBase;
        List<LogRecord> records = new ArrayList<>();
        long offset = from;
        int total = 0;
        boolean full = false;
        while (!full && offset < next) {
            int end = chunk == current ? currentEnd : chunk.limit;
            if (position >= end) {
                chunk = chunk.next;
                position = 0;
                continue;
            }
            int start = position;
            long first = offset;
            while (position < end) {
                int length = chunk.buffer.getInt(position);
                if (total + length > maxBytes && total > 0) {
                    full = true;
                    break;
                }
                total += length;
                position += length;
                offset++;
            }
            ByteBuffer copy = ByteBuffer.allocate(position - start);
            copy.put(0, chunk.buffer, start, position - start);
            for (int at = 0; at < copy.capacity(); at += RecordDescriptor.frameLength(copy, at)) {
                records.add(RecordDescriptor.logRecord(copy, at, first++));
            }
        }
        return records;
    }

    /** Gives the memory back to the pool; the chunk is not used afterwards. */
    void release(Pool pool) {
        if (pooled) {
            pool.give(buffer);
        }
    }

    /**
     * Direct buffers of a few sizes (powers of two from {@link #MIN_BYTES} to {@link #MAX_BYTES}), reused, so that
     * records held for the segment writer are neither on the heap (where young collections would copy them) nor
     * allocated per record. Any thread.
     */
    static final class Pool {
        private static final int CLASSES = Integer.numberOfTrailingZeros(MAX_BYTES / MIN_BYTES) + 1;

        @SuppressWarnings("unchecked")
        private final ConcurrentLinkedQueue<ByteBuffer>[] free = new ConcurrentLinkedQueue[CLASSES];

        private final AtomicLong pooledBytes = new AtomicLong();
        private final long maxPooledBytes;

        Pool(long maxPooledBytes) {
            this.maxPooledBytes = maxPooledBytes;
            for (int i = 0; i < CLASSES; i++) {
                free[i] = new ConcurrentLinkedQueue<>();
            }
        }

        /**
         * A new chunk of {@code bytes} (a power of two between the bounds), or of exactly {@code frameLength} bytes on
         * the heap when a frame is larger than {@link #MAX_BYTES}.
         */
        AppendChunk take(
                int bytes,
                int frameLength,
                Segment segment,
                int fileBase,
                long firstOffset,
                long streamBase,
                long sequence) {
            if (frameLength > MAX_BYTES) {
                return new AppendChunk(
                        ByteBuffer.allocate(frameLength), false, segment, fileBase, firstOffset, streamBase, sequence);
            }
            int index = Integer.numberOfTrailingZeros(bytes / MIN_BYTES);
            ByteBuffer buffer = free[index].poll();
            if (buffer == null) {
                try {
                    buffer = ByteBuffer.allocateDirect(bytes);
                } catch (OutOfMemoryError directMemoryFull) {
                    // -XX:MaxDirectMemorySize reached (write-behind memory of many replicas): a heap chunk, not pooled,
                    // rather than an append lost to an error
                    return new AppendChunk(
                            ByteBuffer.allocate(bytes), false, segment, fileBase, firstOffset, streamBase, sequence);
                }
            } else {
                pooledBytes.addAndGet(-bytes);
            }
            return new AppendChunk(buffer, true, segment, fileBase, firstOffset, streamBase, sequence);
        }

        void give(ByteBuffer buffer) {
            int bytes = buffer.capacity();
            if (pooledBytes.addAndGet(bytes) > maxPooledBytes) {
                pooledBytes.addAndGet(-bytes); // dropped: the collector frees it
                return;
            }
            free[Integer.numberOfTrailingZeros(bytes / MIN_BYTES)].offer(buffer);
        }

        /** Bytes in free chunks. */
        long pooledBytes() {
            return pooledBytes.get();
        }
    }
}
