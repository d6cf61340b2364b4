package io.ganglion.storage;

import java.io.IOException;
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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal writer of one data directory: group commit.
 *
 * <pre>
 *  shard threads ──submit──▶ queue ──take + drainTo──▶ copy frames into one buffer ──▶ write ──▶ force(false) once
 *                                                                                                   │
 *                                         complete every entry of the batch (durable offset, future) ◀┘
 * </pre>
 *
 * <p>Batching adapts to load with no timer: while one batch is being forced, new entries queue up, and the next
 * {@code drainTo} takes all of them. One idle append costs one write and one force; under load one force covers
 * everything that arrived during the previous one, for any number of objects.
 *
 * <p>Journal files are named by their start position (20 digits) and hold frames back to back; a file rolls when the
 * next frame would not fit, and the rest of a preallocated file stays zero, which ends its scan. Positions are global
 * byte positions across files, so the next file starts where the last frame of the previous one ended.
 *
 * <p>Implementation notes. One thread runs {@link #run()} (the Agent shape: {@link #doWork()} returns the entries it
 * handled, blocking on the queue when idle). It alone owns the current file, the buffer and the batch lists, and it
 * alone writes {@link ReplicaLog#durableOffset} and {@link ReplicaLog#journalFailed}. Shared with other threads: the
 * queue (any thread submits), {@link #forcedPosition} (read by the checkpointer), {@link #closedFiles} (the
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
     * One queued change.
     *
     * @param frame the encoded frame, position 0
     * @param endAfter the replica's last offset once this change is applied; becomes its durable offset
     * @param result what the future completes with
     */
    record Entry(
            ReplicaLog replica,
            ByteBuffer frame,
            RecordType type,
            long endAfter,
            long result,
            CompletableFuture<Long> future) {}

    private static final Entry STOP = new Entry(null, ByteBuffer.allocate(0), RecordType.DATA, 0, 0, null);

    private final Path directory;
    private final StorageConfig config;
    private final FileIo io;
    private final Runnable checkpointRequest;
    private final Runnable spareRequest;
    private final LinkedBlockingQueue<Entry> queue = new LinkedBlockingQueue<>();
    private final List<Entry> batch = new ArrayList<>();
    private final List<Entry> written = new ArrayList<>();
    private final ByteBuffer buffer;
    private final ConcurrentSkipListMap<Long, Long> closedFiles = new ConcurrentSkipListMap<>();
    private final AtomicReference<Path> spare = new AtomicReference<>();
    private final AtomicLong forces = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private final AtomicLong spareCounter = new AtomicLong();

    private FileChannel file;
    private long fileStart;
    private long filePosition;
    private long checkpointRequestedAt;
    private boolean running = true;
    private volatile long forcedPosition;
    private volatile StorageException failure;

    JournalWriter(
            Path directory,
            long start,
            StorageConfig config,
            FileIo io,
            Runnable checkpointRequest,
            Runnable spareRequest)
            throws IOException {
        this.directory = directory;
        this.config = config;
        this.io = io;
        this.checkpointRequest = checkpointRequest;
        this.spareRequest = spareRequest;
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
            entry.future().completeExceptionally(failed);
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
        queue.drainTo(batch, MAX_DRAIN);
        try {
            process();
            return batch.size();
        } finally {
            batch.clear();
            written.clear();
        }
    }

    private void process() {
        StorageException failed = failure;
        if (failed != null) {
            for (Entry entry : batch) {
                if (entry == STOP) {
                    running = false;
                } else {
                    entry.future().completeExceptionally(failed);
                }
            }
            return;
        }
        long batchStart = filePosition;
        boolean rolled = false;
        boolean forcing = false;
        buffer.clear();
        try {
            for (Entry entry : batch) {
                if (entry == STOP) {
                    running = false;
                    continue;
                }
                ReplicaLog replica = entry.replica();
                if (replica.journalFailed) {
                    if (entry.type().logRecord()) {
                        entry.future().completeExceptionally(failedBefore(replica));
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
                if (entry.type() == RecordType.TRUNCATE || entry.type() == RecordType.SNAPSHOT) {
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
                forcing = true;
                file.force(false);
                forces.incrementAndGet();
            }
        } catch (IOException e) {
            fail(e, batchStart, rolled || forcing);
            return;
        }
        forcedPosition = fileStart + filePosition;
        batches.incrementAndGet();
        entries.addAndGet(written.size());
        for (Entry entry : written) {
            entry.replica().durableOffset = entry.endAfter();
            entry.future().complete(entry.result());
        }
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
            entry.future().completeExceptionally(error);
        }
        if (fatal) {
            fatal(error);
        }
    }

    private void fatal(StorageException error) {
        failure = error;
        List<Entry> pending = new ArrayList<>();
        queue.drainTo(pending);
        for (Entry entry : pending) {
            if (entry == STOP) {
                running = false;
            } else {
                entry.replica().journalFailed = true;
                entry.future().completeExceptionally(error);
            }
        }
    }

    private static StorageException failedBefore(ReplicaLog replica) {
        return new StorageException("an earlier append of object " + replica.objectId()
                + " failed in the journal; truncate after the durable offset first");
    }

    /** Asks the writer thread to finish what is queued and stop. */
    void stop() {
        queue.add(STOP);
    }

    /** Fails entries left in the queue after the writer stopped. */
    void failRemaining(StorageException error) {
        List<Entry> pending = new ArrayList<>();
        queue.drainTo(pending);
        for (Entry entry : pending) {
            if (entry != STOP) {
                entry.future().completeExceptionally(error);
            }
        }
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
}
