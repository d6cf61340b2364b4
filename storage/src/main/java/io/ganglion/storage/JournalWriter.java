package io.ganglion.storage;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal writer of one data directory: group commit.
 *
 * <pre>
 *  shard threads ──submit──▶ JournalQueue ──take + drain──▶ copy frames into one buffer ──▶ write ──┐
 *                                                                                                  │
 *        segment writer ◀── hand the written batch over (its records go to their segments) ◀───────┤
 *                                                                                                  ▼
 *        completer ◀── hand the forced batch over (futures, listeners) ◀── durable offsets ◀── force(false) once
 * </pre>
 *
 * <p>Batching adapts to load with no timer: while one batch is being forced, new entries queue up, and the next
 * drain takes all of them. One idle append costs one write and one force; under load one force covers everything
 * that arrived during the previous one, for any number of objects. This thread does nothing per entry but copy its
 * frame and publish its replica's durable offset: callbacks run on the {@link Completer} and segment writes on the
 * {@link SegmentWriter}, so the time between two forces stays short.
 *
 * <p>Journal files are named by their start position (20 digits) and hold frames back to back; a file rolls when the
 * next frame would not fit, and the rest of a preallocated file stays zero, which ends its scan. Positions are global
 * byte positions across files, so the next file starts where the last frame of the previous one ended.
 *
 * <p>Implementation notes. One thread runs {@link #run()} (the Agent shape: {@link #doWork()} returns the entries it
 * handled, blocking on the queue when idle). It alone owns the current file, the buffer and the batch lists, and it
 * alone writes {@link ReplicaLog#durableOffset} and {@link ReplicaLog#journalFailed}. It hands a batch to the segment
 * writer before it publishes {@link #forcedPosition}, so a checkpoint that read the position and then waits for the
 * segment writer finds every record before it in its segment. Shared with other threads: the queue (any thread
 * submits), {@link #forcedPosition} (read by the checkpointer), {@link #closedFiles} (the
 * checkpointer deletes files wholly behind a checkpoint), {@link #spare} (the background thread preallocates the next
 * file) and {@link #failure}.
 *
 * <p>Faults. A failed write cuts the file back to where the batch began, fails every entry of the batch and marks
 * each replica in it failed: the writer then fails that replica's later log records until a truncate back to its
 * durable offset (or a snapshot) comes through, so no later record can be durable behind a hole. A failed force, or
 * a failure while rolling to a new file, stops the journal for good: the page cache state after a failed fsync is
 * unknown, so every pending and later entry fails until the store is reopened and recovered.
 */
final class JournalWriter implements Runnable {
    static final String SUFFIX = ".journal";
    private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);
    private static final int MAX_DRAIN = 65_536;

    /**
     * One queued change. Its durability is reported once, by the completer: to a future if someone asked for one
     * ({@link #future()}, created on demand so that appends nobody waits on individually cost none), and to the
     * replica's {@link DurabilityListener}.
     */
    static final class Entry {
        private static final Object SUCCEEDED = new Object();
        private static final VarHandle COMPLETION;

        static {
            try {
                COMPLETION = MethodHandles.lookup().findVarHandle(Entry.class, "completion", Object.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final ReplicaLog replica;
        private final ByteBuffer frame;
        private final RecordType type;
        private final long endAfter;
        private final long result;
        private final Segment segment;
        private final int position;
        /** null while pending; then SUCCEEDED or the failure; or the future someone asked for while pending. */
        @SuppressWarnings("unused")
        private volatile Object completion;
        /** The next entry in the {@link JournalQueue}. */
        @SuppressWarnings("unused")
        private volatile Entry next;

        /**
         * @param frame the encoded frame, position 0
         * @param endAfter the replica's last offset once this change is applied; becomes its durable offset (for a
         *     log record, its offset)
         * @param result what the future completes with
         * @param segment for a log record, the segment it goes to; null for a control record
         * @param position for a log record, its file position in {@code segment}
         */
        Entry(
                ReplicaLog replica,
                ByteBuffer frame,
                RecordType type,
                long endAfter,
                long result,
                Segment segment,
                int position) {
            this.replica = replica;
            this.frame = frame;
            this.type = type;
            this.endAfter = endAfter;
            this.result = result;
            this.segment = segment;
            this.position = position;
        }

        ReplicaLog replica() {
            return replica;
        }

        ByteBuffer frame() {
            return frame;
        }

        RecordType type() {
            return type;
        }

        long endAfter() {
            return endAfter;
        }

        long result() {
            return result;
        }

        Segment segment() {
            return segment;
        }

        int position() {
            return position;
        }

        /** The future of this entry's durability: completes with {@link #result()}. Any thread, any number of calls. */
        @SuppressWarnings("unchecked")
        CompletableFuture<Long> future() {
            Object current = completion;
            if (current == null) {
                CompletableFuture<Long> future = new CompletableFuture<>();
                if (COMPLETION.compareAndSet(this, null, future)) {
                    return future;
                }
                current = completion;
            }
            if (current instanceof CompletableFuture<?> future) {
                return (CompletableFuture<Long>) future;
            }
            return current == SUCCEEDED
                    ? CompletableFuture.completedFuture(result)
                    : CompletableFuture.failedFuture((Throwable) current);
        }

        /** On the completer. */
        @SuppressWarnings("unchecked")
        void succeed() {
            if (!COMPLETION.compareAndSet(this, null, SUCCEEDED)) {
                ((CompletableFuture<Long>) completion).complete(result);
            }
        }

        /** On the completer. */
        void fail(StorageException error) {
            if (!COMPLETION.compareAndSet(this, null, error)) {
                ((CompletableFuture<?>) completion).completeExceptionally(error);
            }
        }
    }

    /** Per writer: an entry is linked into one queue at a time. */
    private final Entry stopMarker = new Entry(null, ByteBuffer.allocate(0), RecordType.DATA, 0, 0, null, 0);

    private final Path directory;
    private final StorageConfig config;
    private final FileIo io;
    private final Runnable checkpointRequest;
    private final Runnable spareRequest;
    private final Runnable stopped;
    private final SegmentWriter segmentWriter;
    private final Completer completer;
    private final JournalQueue queue =
            new JournalQueue(new Entry(null, ByteBuffer.allocate(0), RecordType.DATA, 0, 0, null, 0));
    private final List<Entry> batch = new ArrayList<>();
    private final List<Entry> written = new ArrayList<>();
    private final ByteBuffer buffer;
    private final ConcurrentSkipListMap<Long, Long> closedFiles = new ConcurrentSkipListMap<>();
    private final AtomicReference<Path> spare = new AtomicReference<>();
    private final AtomicLong forces = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong spareCounter = new AtomicLong();

    private FileChannel file;
    private long fileStart;
    private long filePosition;
    private long checkpointRequestedAt;
    private boolean running = true;
    private volatile boolean stopping;
    private volatile long forcedPosition;
    private volatile StorageException failure;

    JournalWriter(
            Path directory,
            long start,
            StorageConfig config,
            FileIo io,
            Runnable checkpointRequest,
            Runnable spareRequest,
            Runnable stopped,
            SegmentWriter segmentWriter,
            Completer completer) {
        this.directory = directory;
        this.segmentWriter = segmentWriter;
        this.completer = completer;
        this.config = config;
        this.io = io;
        this.checkpointRequest = checkpointRequest;
        this.spareRequest = spareRequest;
        this.stopped = stopped;
        this.buffer = ByteBuffer.allocateDirect(config.maxBatchBytes());
        this.forcedPosition = start;
        this.checkpointRequestedAt = start;
    }

    /** Opens the first journal file at the position recovery ended; before the writer thread starts. */
    void openFirstFile() throws IOException {
        openFile(forcedPosition);
    }

    static String name(long start) {
        return String.format("%020d%s", start, SUFFIX);
    }

    /** Queues an entry; any thread. Fails it at once if the journal stopped for good. */
    void submit(Entry entry) {
        StorageException failed = failure;
        if (failed != null) {
            completer.failed(List.of(entry), failed);
            return;
        }
        queue.add(entry);
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
            fatal(new StorageException("journal writer crashed", e));
            LOG.error("journal writer crashed: dir={}", directory, e);
            throw e;
        } finally {
            closeQuietly();
        }
    }

    /** Takes everything queued (blocking while idle), writes it, forces once and completes it. */
    int doWork() throws InterruptedException {
        batch.add(queue.take());
        awaitSegmentWriter();
        queue.drainTo(batch, MAX_DRAIN);
        try {
            process();
            return batch.size();
        } finally {
            batch.clear();
            written.clear();
        }
    }

    /**
     * Backpressure: while the segment writer is more than half of {@link StorageConfig#maxWriteBehindBytes()} behind
     * (a disk that cannot take the segment writes as fast as the journal's), wait for it. Confirms then slow down, so
     * publishers with a window of unconfirmed messages slow down. Not while segment writes fail (appends are refused
     * then, and the journal must still report what it has), nor once the store is closing.
     */
    private void awaitSegmentWriter() throws InterruptedException {
        long limit = config.maxWriteBehindBytes() / 2;
        while (segmentWriter.backlog() > limit && segmentWriter.failure() == null && !stopping) {
            LockSupport.parkNanos(this, 200_000);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
    }

    private void process() {
        StorageException failed = failure;
        if (failed != null) {
            List<Entry> refused = new ArrayList<>(batch.size());
            for (Entry entry : batch) {
                if (entry == stopMarker) {
                    running = false;
                } else {
                    refused.add(entry);
                }
            }
            completer.failed(refused, failed);
            return;
        }
        long batchStart = filePosition;
        List<Entry> done = List.of();
        boolean rolled = false;
        boolean forcing = false;
        buffer.clear();
        try {
            for (Entry entry : batch) {
                if (entry == stopMarker) {
                    running = false;
                    continue;
                }
                ReplicaLog replica = entry.replica();
                if (replica.journalFailed) {
                    if (entry.type().logRecord()) {
                        completer.failed(List.of(entry), failedBefore(replica));
                        continue;
                    }
                    if (entry.type() == RecordType.SNAPSHOT
                            || (entry.type() == RecordType.TRUNCATE && entry.endAfter() <= replica.durableOffset)) {
                        replica.journalFailed = false;
                    }
                }
                int length = entry.frame().remaining();
                long used = filePosition + buffer.position();
                if (used + length > config.journalFileBytes() && used > 0) {
                    flush();
                    forcing = true;
                    roll();
                    forcing = false;
                    rolled = true;
                }
                if (length > buffer.remaining()) {
                    flush();
                }
                if (entry.type() == RecordType.TRUNCATE
                        || entry.type() == RecordType.SNAPSHOT
                        || entry.type() == RecordType.DELETE) {
                    // the shard changes its files only after this is forced: no checkpoint may pass it until then
                    replica.pendingRewritePosition = fileStart + filePosition + buffer.position();
                }
                if (length > buffer.capacity()) {
                    DurableFiles.writeFully(file, entry.frame().duplicate(), filePosition);
                    filePosition += length;
                } else {
                    buffer.put(buffer.position(), entry.frame(), 0, length);
                    buffer.position(buffer.position() + length);
                }
                written.add(entry);
            }
            flush();
            if (!written.isEmpty()) {
                done = List.copyOf(written);
                // written whole: the segment writer may put the records in their segments while this is forced
                segmentWriter.handOver(done);
                forcing = true;
                file.force(false);
                forces.incrementAndGet();
            }
        } catch (IOException e) {
            fail(e, batchStart, rolled || forcing);
            return;
        }
        long end = fileStart + filePosition;
        bytes.addAndGet(end - forcedPosition);
        forcedPosition = end;
        batches.incrementAndGet();
        entries.addAndGet(written.size());
        for (Entry entry : done) {
            entry.replica().durableOffset = entry.endAfter();
        }
        // the futures and listeners run on the completer, while this thread goes on with the next batch
        completer.completed(done);
        if (forcedPosition - checkpointRequestedAt >= config.checkpointJournalBytes()) {
            checkpointRequestedAt = forcedPosition;
            checkpointRequest.run();
        }
    }

    private void flush() throws IOException {
        buffer.flip();
        int length = buffer.remaining();
        DurableFiles.writeFully(file, buffer, filePosition);
        filePosition += length;
        buffer.clear();
    }

    private void roll() throws IOException {
        file.force(false);
        forces.incrementAndGet();
        long end = fileStart + filePosition;
        file.close();
        closedFiles.put(fileStart, end);
        openFile(end);
    }

    private void openFile(long start) throws IOException {
        Path path = directory.resolve(name(start));
        Path prepared = spare.getAndSet(null);
        if (prepared != null) {
            Files.move(prepared, path, StandardCopyOption.ATOMIC_MOVE);
        }
        file = io.open(path, Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE));
        DurableFiles.forceDirectory(directory);
        fileStart = start;
        filePosition = 0;
        if (config.preallocateJournal()) {
            spareRequest.run();
        }
    }

    /** Fills the next journal file with zeros ahead of use; on the background thread. */
    void prepareSpare() throws IOException {
        if (spare.get() != null || failure != null) {
            return;
        }
        Path path = directory.resolve("spare-" + spareCounter.incrementAndGet() + ".tmp");
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
            long position = 0;
            while (position < config.journalFileBytes()) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), config.journalFileBytes() - position));
                position += channel.write(zeros, position);
            }
            channel.force(true);
        }
        if (!spare.compareAndSet(null, path)) {
            Files.deleteIfExists(path);
        }
    }

    private void fail(IOException cause, long batchStart, boolean fatal) {
        StorageException error = new StorageException("journal write failed: appends are not durable", cause);
        if (!fatal) {
            try {
                file.truncate(batchStart);
                file.force(true);
                filePosition = batchStart;
            } catch (IOException e) {
                cause.addSuppressed(e);
                fatal = true;
            }
        }
        if (fatal) {
            // published before any future fails, so whoever sees the failure also sees the store stopped
            failure = error;
            LOG.error("journal stopped: dir={} position={}", directory, fileStart + filePosition, cause);
        } else {
            LOG.error("journal batch failed: dir={} entries={}", directory, written.size(), cause);
        }
        for (Entry entry : written) {
            entry.replica().journalFailed = true;
        }
        completer.failed(List.copyOf(written), error);
        if (fatal) {
            fatal(error);
        }
    }

    private void fatal(StorageException error) {
        failure = error;
        stopped.run(); // appends are refused from here on
        List<Entry> pending = new ArrayList<>();
        queue.drainTo(pending, Integer.MAX_VALUE);
        List<Entry> refused = new ArrayList<>(pending.size());
        for (Entry entry : pending) {
            if (entry == stopMarker) {
                running = false;
            } else {
                entry.replica().journalFailed = true;
                refused.add(entry);
            }
        }
        completer.failed(refused, error);
    }

    private static StorageException failedBefore(ReplicaLog replica) {
        return new StorageException("an earlier append of object " + replica.objectId()
                + " failed in the journal; truncate after the durable offset first");
    }

    /** Asks the writer thread to finish what is queued and stop. */
    void stop() {
        stopping = true; // no more waiting for the segment writer: it may be stuck
        queue.add(stopMarker);
    }

    /** Fails entries left in the queue after the writer stopped. */
    void failRemaining(StorageException error) {
        List<Entry> pending = new ArrayList<>();
        queue.drainTo(pending, Integer.MAX_VALUE);
        pending.remove(stopMarker);
        completer.failed(pending, error);
    }

    private void closeQuietly() {
        try {
            file.close();
        } catch (IOException e) {
            LOG.warn("closing journal file failed: dir={}", directory, e);
        }
    }

    /** Journal position up to which everything written was forced; any thread. */
    long forcedPosition() {
        return forcedPosition;
    }

    /** Deletes closed journal files that end at or before {@code position}; on the checkpointer thread. */
    void deleteFilesBefore(long position) throws IOException {
        for (Map.Entry<Long, Long> closed : closedFiles.headMap(position, true).entrySet()) {
            if (closed.getValue() <= position) {
                Files.deleteIfExists(directory.resolve(name(closed.getKey())));
                closedFiles.remove(closed.getKey());
            }
        }
    }

    /** Deletes a spare file left unused; on close. */
    void deleteSpare() throws IOException {
        Path prepared = spare.getAndSet(null);
        if (prepared != null) {
            Files.deleteIfExists(prepared);
        }
    }

    StorageException failure() {
        return failure;
    }

    long forces() {
        return forces.get();
    }

    long batches() {
        return batches.get();
    }

    long entries() {
        return entries.get();
    }

    long bytes() {
        return bytes.get();
    }
}
