package io.ganglion.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
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
 *  shard ──append──▶ frame in the replica's memory tail (reads) ──▶ journal queue
 *  journal writer ──write batch──▶ hand the batch over ──▶ force ──▶ complete
 *                                        │
 *  segment writer ◀──────────────────────┘  per replica: hold until segmentWriteBytes, then one write;
 *                                           publish writtenThrough, so the shard drops the frames from memory
 * </pre>
 *
 * <p>The layout is decided by the shard when it appends (segment and file position, {@link Segment#reserve}); this
 * thread only puts the bytes there, creating segment files on their first write. It writes a replica's records once
 * they add up to {@link StorageConfig#segmentWriteBytes()} (one write call for many records), and everything it holds
 * when idle for {@value #IDLE_MILLIS} ms, every {@value #SWEEP_MILLIS} ms, once the backlog passes {@link
 * StorageConfig#writeBehindBytes()}, for a checkpoint ({@link #flushAll()}) and on stop.
 *
 * <p>Implementation notes. One thread runs {@link #run()} (the Agent shape). It owns {@code dirty}, {@code staging}
 * and the {@code writerQueued} and {@code writerDue} flags of each replica. A replica's {@code unwritten} queue and its segment files are
 * guarded by the replica's {@code files} lock, which the shard also takes to truncate, discard, reset or delete; the
 * shard's append never takes it. Shared with other threads: the input queue (the journal writer hands batches over,
 * checkpoints add barriers, truncates add syncs), {@link #backlog} and {@link #failure}. The journal writer does not
 * wake this thread for every batch, only once a write may be due ({@code segmentWriteBytes} handed over since the
 * last wake-up); barriers and syncs always wake it. Otherwise it wakes every {@value #IDLE_MILLIS} ms.
 *
 * <p>Faults. A failed write leaves the records queued and is retried on the next pass; a torn write is overwritten by
 * the retry (writes go to fixed positions), and recovery cuts what a crash leaves. While writes fail, {@link
 * #failure()} is set and appends return {@link AppendOutcome.Failed}; the records already appended stay durable
 * through the journal, which a checkpoint cannot drop while they are not in their segments.
 */
final class SegmentWriter implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentWriter.class);
    static final int IDLE_MILLIS = 50;
    static final int SWEEP_MILLIS = 1000;
    private static final Object STOP = new Object();

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
    private final ByteBuffer staging;
    private final AtomicLong backlog = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private volatile IOException failure;
    private long lastSweep = System.nanoTime();
    private boolean running = true;

    SegmentWriter(String name, StorageConfig config, Storage storage) {
        this.name = name;
        this.config = config;
        this.storage = storage;
        this.staging = ByteBuffer.allocateDirect(Math.max(1 << 20, config.segmentWriteBytes()));
    }

    /**
     * Hands over a journal batch just written; its log records go to their segments. On the journal writer; the list
     * is not changed afterwards.
     */
    void handOver(List<JournalWriter.Entry> written) {
        long bytes = 0;
        for (JournalWriter.Entry entry : written) {
            if (entry.segment() != null) {
                bytes += entry.frame().limit();
            }
        }
        if (bytes > 0) {
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
     * Waits until the records handed over so far are in their replicas' {@code unwritten} queues, where a shard
     * holding the replica's files lock can drop them; they need not be written. A truncate calls this before it cuts,
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
                @SuppressWarnings("unchecked")
                List<JournalWriter.Entry> batch = (List<JournalWriter.Entry>) item;
                work += distribute(batch);
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

    private int distribute(List<JournalWriter.Entry> batch) {
        int count = 0;
        for (JournalWriter.Entry entry : batch) {
            if (entry.segment() == null) {
                continue; // a control record: journal only
            }
            ReplicaLog replica = entry.replica();
            long held;
            synchronized (replica.files) {
                replica.unwritten.add(entry);
                held = replica.unwrittenBytes += entry.frame().limit();
            }
            if (!replica.writerQueued) {
                replica.writerQueued = true;
                dirty.add(replica);
            }
            if (held >= config.segmentWriteBytes() && !replica.writerDue) {
                replica.writerDue = true;
                due.add(replica);
            }
            count++;
        }
        return count;
    }

    /** Writes the replicas whose held records reached the write size; the rest wait for the next sweep. */
    private void writeDue() {
        for (ReplicaLog replica : due) {
            replica.writerDue = false;
            write(replica);
        }
        due.clear();
    }

    /** Writes everything held; returns whether all of it got out. */
    private boolean writeAll(long now) {
        lastSweep = now;
        for (ReplicaLog replica : due) {
            replica.writerDue = false;
        }
        due.clear();
        boolean complete = true;
        int kept = 0;
        for (int i = 0; i < dirty.size(); i++) {
            ReplicaLog replica = dirty.get(i);
            complete &= write(replica);
            if (replica.unwrittenBytes > 0) {
                dirty.set(kept++, replica);
            } else {
                replica.writerQueued = false;
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
     * Writes a replica's held records, one write call per run of records in one segment (as many as fit the staging
     * buffer), and publishes how far its segments now reach.
     *
     * @return false if a write failed; what was not written stays held
     */
    private boolean write(ReplicaLog replica) {
        synchronized (replica.files) {
            ArrayDeque<JournalWriter.Entry> pending = replica.unwritten;
            while (!pending.isEmpty()) {
                JournalWriter.Entry first = pending.peekFirst();
                Segment segment = first.segment();
                if (segment.deleted) {
                    // discarded, reset or deleted since it was appended: nothing to write, and nothing to publish
                    // (the shard set writtenThrough for the files as they are now)
                    replica.unwritten.pollFirst();
                    int length = first.frame().limit();
                    replica.unwrittenBytes -= length;
                    addBacklog(-length);
                    continue;
                }
                ByteBuffer bytes;
                int count = 0;
                long expected = first.position();
                staging.clear();
                for (JournalWriter.Entry entry : pending) {
                    int length = entry.frame().limit();
                    if (entry.segment() != segment || entry.position() != expected || length > staging.remaining()) {
                        break;
                    }
                    staging.put(staging.position(), entry.frame(), 0, length);
                    staging.position(staging.position() + length);
                    expected += length;
                    count++;
                }
                if (count == 0) {
                    bytes = first.frame().duplicate(); // larger than the staging buffer: write it as it is
                    count = 1;
                } else {
                    bytes = staging.flip();
                }
                try {
                    if (segment.write(bytes, first.position())) {
                        replica.markDirectoryDirty();
                    }
                } catch (IOException e) {
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
                long length = 0;
                JournalWriter.Entry last = first;
                for (int i = 0; i < count; i++) {
                    last = pending.pollFirst();
                    length += last.frame().limit();
                }
                replica.unwrittenBytes -= length;
                addBacklog(-length);
                replica.writtenThrough = last.endAfter(); // the shard may now drop these frames from memory
            }
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
