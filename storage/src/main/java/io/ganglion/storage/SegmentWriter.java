package io.ganglion.storage;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The segment writer of one data directory: writes log records to their segment files behind the journal, so that no
 * shard thread ever makes a file system call to append.
 *
 * <pre>
 *  shard ──append──▶ frame encoded into the replica's current {@link AppendChunk} ──▶ cursor in the journal queue
 *  journal writer ──write batch──▶ hand over, per replica, how far it is written ──▶ force ──▶ report
 *                                        │
 *  segment writer ◀──────────────────────┘  per replica: once segmentWriteBytes are handed over, one write per chunk
 *                                           range, straight from the chunk; publish writtenThrough and the chunk it
 *                                           reached, so the shard gives the chunks behind it back to the pool
 * </pre>
 *
 * <p>The layout is decided by the shard when it appends (segment and file position, {@link Segment#reserve}; a chunk
 * holds the frames exactly as they lie in the file); this thread only puts the bytes there, creating segment files on
 * their first write. It writes a replica's records once {@link StorageConfig#segmentWriteBytes()} of them were handed
 * over (one write call per chunk), and everything it holds when idle for {@value #IDLE_MILLIS} ms, every {@value
 * #SWEEP_MILLIS} ms, once the backlog passes {@link StorageConfig#writeBehindBytes()}, for a checkpoint ({@link
 * #flushAll()}) and on stop.
 *
 * <p>Implementation notes. One thread runs {@link #run()} (the Agent shape). It owns {@code dirty} and each
 * replica's {@link Cursor}, except that the shard moves a cursor back (truncate) or resets it (snapshot install,
 * delete) while it holds the replica's {@code files} lock, after {@link #awaitTakenIn()} and with nothing of the
 * replica on its way from the journal. It writes a replica only under that lock, which the shard also takes to
 * truncate, discard, reset or delete; the shard's append never takes it. Shared with other threads: the input queue
 * (the journal writer hands batches over, checkpoints add barriers, truncates add syncs), {@link #backlog}, {@link
 * #failure} and each cursor's published fields. The journal writer does not wake this thread for every batch, only
 * once a write may be due ({@code segmentWriteBytes} handed over since the last wake-up); barriers and syncs always
 * wake it. Otherwise it wakes every {@value #IDLE_MILLIS} ms.
 *
 * <p>Faults. A failed write leaves the records held and is retried on the next pass; a torn write is overwritten by
 * the retry (writes go to fixed positions), and recovery cuts what a crash leaves. While writes fail, {@link
 * #failure()} is set and appends return {@link AppendOutcome.Failed}; the records already appended stay durable
 * through the journal, which a checkpoint cannot drop while they are not in their segments.
 */
final class SegmentWriter implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentWriter.class);
    static final int IDLE_MILLIS = 50;
    static final int SWEEP_MILLIS = 1000;
    private static final Object STOP = new Object();

    /**
     * What one journal batch wrote, per replica: the replica's records are in the journal through {@code offset}, which
     * ends at {@code position} of {@code chunk}. Filled by the journal writer, then not changed.
     */
    static final class Handover {
        private final ReplicaLog[] replicas;
        private final AppendChunk[] chunks;
        private final int[] positions;
        private final long[] offsets;
        private final long[] byteCounts;
        private int size;
        private long bytes;

        Handover(int capacity) {
            replicas = new ReplicaLog[capacity];
            chunks = new AppendChunk[capacity];
            positions = new int[capacity];
            offsets = new long[capacity];
            byteCounts = new long[capacity];
        }

        /**
         * @param byteCount the replica's byte count through {@code offset} (see {@link ReplicaLog})
         * @param added bytes of the replica's records in this batch
         */
        void add(ReplicaLog replica, AppendChunk chunk, int position, long offset, long byteCount, long added) {
            replicas[size] = replica;
            chunks[size] = chunk;
            positions[size] = position;
            offsets[size] = offset;
            byteCounts[size] = byteCount;
            bytes += added;
            size++;
        }
    }

    /**
     * A replica's place in its chunk chain for this thread: written through {@code chunk}/{@code position}, handed
     * over through {@code handedChunk}/{@code handedPosition}. See the class notes for who may change it.
     */
    static final class Cursor {
        /** Where the next write starts; null before the first chunk of the chain. */
        AppendChunk chunk;

        int position;
        /** The replica's byte count through the cursor: bytes written (or dropped, for a deleted segment). */
        long bytes;

        AppendChunk handedChunk;
        int handedPosition;
        long handedOffset = -1;
        long handedBytes;
        /** In {@code dirty}, in {@code due}. */
        boolean queued;

        boolean due;

        /** The last offset whose record is in its segment file (written, perhaps not forced). */
        volatile long writtenThrough = -1;
        /** The replica's byte count through what was written, published with {@code writtenThrough}. */
        volatile long writtenBytes;
        /** The sequence of the chunk the cursor is in, published after {@code writtenThrough}: chunks before it are done. */
        volatile long chunkSequence = -1;

        /** Held bytes: handed over and not yet written. */
        long held() {
            return handedBytes - bytes;
        }

        /** Puts the cursor (and what was handed over) at {@code lastOffset}, with nothing in chunks; under the lock. */
        void reset(long lastOffset, long byteCount) {
            chunk = null;
            position = 0;
            bytes = byteCount;
            handedChunk = null;
            handedPosition = 0;
            handedOffset = lastOffset;
            handedBytes = byteCount;
            writtenBytes = byteCount;
            writtenThrough = lastOffset;
            chunkSequence = -1;
        }

        /**
         * Moves the cursor and what was handed over back to right after {@code lastOffset}, which ends at {@code
         * position} of {@code at}, if they are past it; under the lock.
         */
        void cut(AppendChunk at, int atPosition, long lastOffset) {
            long byteCount = at.streamBase + atPosition;
            if (handedBytes > byteCount) {
                handedChunk = at;
                handedPosition = atPosition;
                handedOffset = lastOffset;
                handedBytes = byteCount;
            }
            if (bytes > byteCount) {
                chunk = at;
                position = atPosition;
                bytes = byteCount;
                writtenBytes = byteCount;
                chunkSequence = at.sequence;
            }
            if (writtenThrough > lastOffset) {
                writtenThrough = lastOffset;
            }
        }
    }

    /** A checkpoint's request: write everything handed over before it. */
    private record Barrier(CompletableFuture<Void> done) {}

    /** A truncate's request: take in (not write) everything handed over before it. */
    private record Sync(CompletableFuture<Void> done) {}

    private final String name;
    private final StorageConfig config;
    private final Storage storage;
    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    /** The writer thread while it sleeps with nothing to take; null otherwise. */
    private volatile Thread sleeping;
    /** Journal writer only: bytes handed over since it last woke this thread. */
    private long handedSinceWake;

    private final List<Object> drained = new ArrayList<>();
    private final List<Barrier> barriers = new ArrayList<>();
    private final List<ReplicaLog> dirty = new ArrayList<>();
    private final List<ReplicaLog> due = new ArrayList<>();
    private final AtomicLong backlog = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private volatile IOException failure;
    private long lastSweep = System.nanoTime();
    private boolean running = true;

    SegmentWriter(String name, StorageConfig config, Storage storage) {
        this.name = name;
        this.config = config;
        this.storage = storage;
    }

    /** Hands over a journal batch just written; its log records go to their segments. On the journal writer. */
    void handOver(Handover written) {
        long bytes = written.bytes;
        if (written.size > 0) {
            addBacklog(bytes);
            queue.add(written);
            // no wake-up per batch: this thread is not waited for, so wake it only when a write may be due
            handedSinceWake += bytes;
            if (handedSinceWake >= config.segmentWriteBytes()) {
                handedSinceWake = 0;
                wake();
            }
        }
    }

    /**
     * Writes everything handed over before this call.
     *
     * @return completes once written, exceptionally if a write failed
     */
    CompletableFuture<Void> flushAll() {
        Barrier barrier = new Barrier(new CompletableFuture<>());
        queue.add(barrier);
        wake();
        return barrier.done();
    }

    /**
     * Waits until the records handed over so far are taken into their replicas' cursors, where a shard holding the
     * replica's files lock can drop them; they need not be written. A truncate calls this before it cuts,
     * so no record past the cut reaches the files afterwards. Waits for a write in progress.
     */
    void awaitTakenIn() throws StorageException {
        Sync sync = new Sync(new CompletableFuture<>());
        queue.add(sync);
        wake();
        try {
            sync.done().join(); // uninterruptible, like the journal wait before it
        } catch (java.util.concurrent.CompletionException e) {
            throw new StorageException("segment writer stopped", e.getCause());
        }
    }

    /** Asks the thread to write everything it holds and stop. */
    void stop() {
        queue.add(STOP);
        wake();
    }

    private void wake() {
        Thread thread = sleeping;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    /** The next item, sleeping up to {@link #IDLE_MILLIS} for one; null if none came. */
    private Object next() throws InterruptedException {
        Object item = queue.poll();
        if (item == null) {
            sleeping = Thread.currentThread();
            item = queue.poll(); // an item added before sleeping was set would otherwise wait out the sleep
            if (item == null) {
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS));
                item = queue.poll();
            }
            sleeping = null;
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
        return item;
    }

    @Override
    public void run() {
        try {
            while (running) {
                doWork();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            LOG.error("segment writer crashed: dir={}", name, e);
            failure = new StorageException("segment writer crashed", e);
            storage.refreshAppendRefusal();
            throw e;
        } finally {
            for (Barrier barrier : barriers) {
                barrier.done().completeExceptionally(new StorageException("segment writer stopped"));
            }
            for (Object item = queue.poll(); item != null; item = queue.poll()) {
                if (item instanceof Barrier barrier) {
                    barrier.done().completeExceptionally(new StorageException("segment writer stopped"));
                } else if (item instanceof Sync sync) {
                    sync.done().completeExceptionally(new StorageException("segment writer stopped"));
                }
            }
        }
    }

    /** Takes what was handed over (waiting a little while idle), and writes what is due. */
    int doWork() throws InterruptedException {
        Object first = next();
        long now = System.nanoTime();
        if (first == null) {
            writeAll(now); // idle: nothing is worth holding
            return 0;
        }
        drained.add(first);
        for (Object item = queue.poll(); item != null; item = queue.poll()) {
            drained.add(item);
        }
        int work = 0;
        for (Object item : drained) {
            if (item == STOP) {
                running = false;
            } else if (item instanceof Barrier barrier) {
                barriers.add(barrier);
            } else if (item instanceof Sync sync) {
                sync.done().complete(null); // everything before it is taken in: items are handled in order
            } else {
                work += distribute((Handover) item);
            }
        }
        drained.clear();
        if (!barriers.isEmpty()
                || !running
                || failure != null
                || backlog.get() >= config.writeBehindBytes()
                || now - lastSweep >= TimeUnit.MILLISECONDS.toNanos(SWEEP_MILLIS)) {
            boolean complete = writeAll(now);
            for (Barrier barrier : barriers) {
                if (complete) {
                    barrier.done().complete(null);
                } else {
                    barrier.done().completeExceptionally(new StorageException("segment writes failing", failure));
                }
            }
            barriers.clear();
        } else {
            writeDue();
        }
        return work;
    }

    private int distribute(Handover handover) {
        for (int i = 0; i < handover.size; i++) {
            ReplicaLog replica = handover.replicas[i];
            Cursor cursor = replica.segmentCursor;
            cursor.handedChunk = handover.chunks[i];
            cursor.handedPosition = handover.positions[i];
            cursor.handedOffset = handover.offsets[i];
            cursor.handedBytes = handover.byteCounts[i];
            if (!cursor.queued) {
                cursor.queued = true;
                dirty.add(replica);
            }
            if (cursor.held() >= config.segmentWriteBytes() && !cursor.due) {
                cursor.due = true;
                due.add(replica);
            }
        }
        return handover.size;
    }

    /** Writes the replicas whose held records reached the write size; the rest wait for the next sweep. */
    private void writeDue() {
        for (ReplicaLog replica : due) {
            replica.segmentCursor.due = false;
            write(replica);
        }
        due.clear();
    }

    /** Writes everything held; returns whether all of it got out. */
    private boolean writeAll(long now) {
        lastSweep = now;
        for (ReplicaLog replica : due) {
            replica.segmentCursor.due = false;
        }
        due.clear();
        boolean complete = true;
        int kept = 0;
        for (int i = 0; i < dirty.size(); i++) {
            ReplicaLog replica = dirty.get(i);
            complete &= write(replica);
            if (replica.segmentCursor.held() > 0) {
                dirty.set(kept++, replica);
            } else {
                replica.segmentCursor.queued = false;
            }
        }
        dirty.subList(kept, dirty.size()).clear();
        if (complete && failure != null) {
            LOG.info("segment writes recovered: dir={}", name);
            failure = null;
            storage.refreshAppendRefusal();
        }
        return complete;
    }

    /**
     * Writes a replica's held records, one write call per chunk (straight from the chunk's memory), and publishes how
     * far its segments now reach.
     *
     * @return false if a write failed; what was not written stays held
     */
    private boolean write(ReplicaLog replica) {
        synchronized (replica.files) {
            Cursor cursor = replica.segmentCursor;
            if (cursor.held() <= 0) {
                return true;
            }
            AppendChunk chunk = cursor.chunk != null ? cursor.chunk : replica.oldestChunk;
            int position = cursor.position;
            while (true) {
                boolean last = chunk == cursor.handedChunk;
                int end = last ? cursor.handedPosition : chunk.limit;
                if (end > position) {
                    Segment segment = chunk.segment;
                    // a deleted segment (discarded, reset or deleted since it was appended): nothing to write
                    if (!segment.deleted) {
                        try {
                            if (segment.write(
                                    chunk.buffer.slice(position, end - position), chunk.fileBase + position)) {
                                replica.markDirectoryDirty();
                            }
                        } catch (IOException e) {
                            cursor.chunk = chunk;
                            cursor.position = position;
                            if (failure == null) {
                                LOG.error(
                                        "segment write failed, retrying: dir={} object={} segment={}",
                                        name,
                                        replica.objectId(),
                                        segment.path().getFileName(),
                                        e);
                                failure = e;
                                storage.refreshAppendRefusal();
                            }
                            return false;
                        }
                        writes.incrementAndGet();
                        replica.markDirty(segment);
                    }
                    long written = chunk.streamBase + end - cursor.bytes;
                    cursor.bytes += written;
                    addBacklog(-written);
                }
                if (last) {
                    position = end;
                    break;
                }
                chunk = chunk.next;
                position = 0;
            }
            cursor.chunk = chunk;
            cursor.position = position;
            cursor.writtenBytes = cursor.bytes;
            cursor.writtenThrough = cursor.handedOffset; // the shard may now read these records from the file
            cursor.chunkSequence = chunk.sequence; // and, after that, give the chunks before this one back
            return true;
        }
    }

    /** Frees the accounting of records a shard dropped unwritten (truncate, reset, delete). Any thread. */
    void dropped(long bytes) {
        addBacklog(-bytes);
    }

    private void addBacklog(long bytes) {
        backlog.addAndGet(bytes);
    }

    /** Bytes handed over and not yet written or dropped. Any thread. */
    long backlog() {
        return backlog.get();
    }

    /** The last segment write failure, while writes fail. Any thread. */
    IOException failure() {
        return failure;
    }

    /** Segment write calls made so far. */
    long writes() {
        return writes.get();
    }
}
