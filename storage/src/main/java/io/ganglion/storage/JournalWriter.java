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
 *  shard ──encode into its replica's chunk, commit──▶ replica's cursor in the JournalQueue (once, however many records)
 *                                                              │
 *  journal writer ──take + drain──▶ per replica: copy its new frames (one range per chunk) into one buffer ──▶ write ──┐
 *                                                                                                                   │
 *        segment writer ◀── hand over how far each replica's records were written ◀──────────────────────────────────┤
 *                                                                                                                   ▼
 *        completer ◀── hand the batch's report over (ranges per replica) ◀── durable offsets ◀── force(false) once
 * </pre>
 *
 * <p>Batching adapts to load: while one batch is being forced, new records are committed, and the next drain takes all
 * of them. One idle append costs one write and one force; under load one force covers everything that arrived during
 * the previous one, for any number of objects, and forces start at least {@link StorageConfig#groupCommitNanos()}
 * apart (the writer waits out the rest of the interval before it drains), so a steady trickle of records is not a
 * force, a report and a wake-up of the shard per record. This thread does nothing per record but copy its
 * bytes (a run of a replica's records at a time): it reports, and hands to the segment writer, per replica and batch.
 *
 * <p>Journal files are named by their start position (20 digits) and hold frames back to back; a file rolls when the
 * next frame would not fit, and the rest of a preallocated file stays zero, which ends its scan. Positions are global
 * byte positions across files, so the next file starts where the last frame of the previous one ended.
 *
 * <p>Implementation notes. One thread runs {@link #run()} (the Agent shape: {@link #doWork()} returns the entries it
 * handled, blocking on the queue when idle). It alone owns the current file, the buffer, the batch state and each
 * replica's {@link Cursor} (but for its queue flags), and it alone writes {@link Cursor#durableOffset} and {@link
 * ReplicaLog#journalFailed}. A shard resets its replica's cursor only while this thread cannot touch it: after a
 * truncate, snapshot or delete record of the replica was forced and before the shard appends again. A replica's
 * records go to the journal in its order, and its control records between them exactly where they were submitted
 * ({@link ControlRecord#recordsThrough()}): the writer reads how far the replica committed before it looks at its
 * control records, and a shard counts a control record as pending before it commits anything after it. The writer hands a
 * batch to the segment writer before it publishes {@link #forcedPosition}, so a checkpoint that read the position and
 * then waits for the segment writer finds every record before it in its segment. Shared with other threads: the
 * queue (any thread submits), {@link #forcedPosition} (read by the checkpointer), {@link #closedFiles} (the
 * checkpointer deletes files wholly behind a checkpoint), {@link #spare} (the background thread preallocates the next
 * file) and {@link #failure}.
 *
 * <p>Faults. A failed write cuts the file back to where the batch began, fails everything of the batch and marks
 * each replica in it failed: the writer then refuses that replica's later records until a truncate back to its
 * durable offset (or a snapshot) comes through, so no later record can be durable behind a hole. Replicas drained but
 * not reached go back to the queue. A failed force, or a failure while rolling to a new file, stops the journal for
 * good: the page cache state after a failed fsync is unknown, so every pending and later record fails until the store
 * is reopened and recovered.
 */
final class JournalWriter implements Runnable {
    static final String SUFFIX = ".journal";
    private static final Logger LOG = LoggerFactory.getLogger(JournalWriter.class);
    private static final int MAX_DRAIN = 65_536;
    /** Group commit waits in a row that brought nothing before the writer stops waiting for a while. */
    static final int FRUITLESS_WAITS = 2;
    /** Batches forced at once after {@link #FRUITLESS_WAITS} fruitless waits, before one wait is tried again. */
    static final int BATCHES_WITHOUT_WAIT = 32;
    /** The longest run of batches forced at once between two waits that brought nothing. */
    static final int MAX_BATCHES_WITHOUT_WAIT = 4096;
    /** Entries in a batch up to which the next batch may wait out the group commit interval. */
    static final int SMALL_BATCH = 16;

    /**
     * A replica's place in the journal: how far its records were copied, and its node in the {@link JournalQueue}
     * (queued at most once, by whoever finds {@code queued} clear). Owned by the journal writer, except the two queue
     * flags and a reset by the shard (see the class notes).
     */
    static final class Cursor extends JournalQueue.Node {
        private static final VarHandle QUEUED;
        private static final VarHandle CONTROLS;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                QUEUED = lookup.findVarHandle(Cursor.class, "queued", int.class);
                CONTROLS = lookup.findVarHandle(Cursor.class, "controls", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final ReplicaLog replica;

        /** 1 while the cursor is in the queue or drained and not yet processed. */
        @SuppressWarnings("unused") // through QUEUED
        private volatile int queued;

        /** Control records submitted and not yet written. */
        @SuppressWarnings("unused") // through CONTROLS
        private volatile int controls;

        /** The chunk and byte of the next record to copy; null before the first chunk of the chain. */
        AppendChunk chunk;

        int position;
        /** The last offset copied (or refused). */
        long offset = -1;
        /** The replica's byte count (see {@link ReplicaLog}) through {@code offset}. */
        long bytes;

        /** The last offset forced, with every one before it; any thread reads it. */
        volatile long durableOffset = -1;

        // the batch being written
        private long batch = -1;
        private long batchEnd;
        private long batchBytes;
        private boolean batchRecords;

        Cursor(ReplicaLog replica) {
            this.replica = replica;
        }

        /**
         * Tells the writer that the replica committed records (published {@link ReplicaLog#nextOffset}) or submitted
         * a control record: queues the cursor unless it is queued. On the replica's shard; never blocks.
         */
        void notify(JournalQueue queue) {
            if ((int) QUEUED.getVolatile(this) == 0 && QUEUED.compareAndSet(this, 0, 1)) {
                queue.add(this);
            }
        }

        /** Puts the cursor where the next record of a reset replica will be: at the start of the next chunk. */
        void reset(long lastOffset, long byteCount) {
            chunk = null;
            position = 0;
            offset = lastOffset;
            bytes = byteCount;
        }

        /** Puts the cursor right after {@code lastOffset}, which ends at {@code position} of {@code at}. */
        void cut(AppendChunk at, int atPosition, long lastOffset) {
            chunk = at;
            position = atPosition;
            offset = lastOffset;
            bytes = at.streamBase + atPosition;
        }
    }

    /** Per writer: a node is linked into one queue at a time. */
    private final JournalQueue.Node stopMarker = new JournalQueue.Node();

    private final Path directory;
    private final StorageConfig config;
    private final FileIo io;
    private final Runnable checkpointRequest;
    private final Runnable spareRequest;
    private final Runnable stopped;
    private final SegmentWriter segmentWriter;
    private final Completer completer;
    private final JournalQueue queue = new JournalQueue();
    private final List<JournalQueue.Node> drained = new ArrayList<>();
    private final List<Cursor> touched = new ArrayList<>();
    private final ByteBuffer buffer;
    private final ConcurrentSkipListMap<Long, Long> closedFiles = new ConcurrentSkipListMap<>();
    private final AtomicReference<Path> spare = new AtomicReference<>();
    /** Journal files behind a checkpoint kept for reuse as the next file, so it needs no zeros written ahead. */
    private final java.util.concurrent.ConcurrentLinkedDeque<Path> recycled =
            new java.util.concurrent.ConcurrentLinkedDeque<>();

    private final AtomicLong forces = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong groupCommitWaits = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong spareCounter = new AtomicLong();
    private final AtomicLong reusedFiles = new AtomicLong();

    private FileChannel file;
    private long fileStart;
    private long filePosition;
    private long checkpointRequestedAt;
    private boolean running = true;
    private volatile boolean stopping;
    private volatile long forcedPosition;
    private volatile StorageException failure;

    // the batch being written
    private long batchNumber;
    /** When the last force started ({@link System#nanoTime()}); writer thread only. */
    private long lastForceNanos;
    /** Group commit waits in a row that brought nothing, and the batch before which none is tried again. */
    private int fruitlessWaits;

    private long waitAgainAtBatch;
    private long batchesWithoutWait = BATCHES_WITHOUT_WAIT;
    /** Batches in a row, up to the last one, of at most {@link #SMALL_BATCH} entries. */
    private int smallBatchesInRow;

    private Completer.Report report;
    private boolean rolled;
    private boolean forcing;
    private boolean wrote;
    /** Start of the run of frames found in the current chunk and not yet copied into {@code buffer}. */
    private int runStart;
    // the journal run being written (see RecordDescriptor, "Journal runs"): what its commit frame will name
    private long commitRunStart;
    private long commitRunFrames;
    private int commitRunCrcSum;

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
        this.lastForceNanos = System.nanoTime() - config.groupCommitNanos();
        this.checkpointRequestedAt = start;
    }

    /** Opens the first journal file at the position recovery ended; before the writer thread starts. */
    void openFirstFile() throws IOException {
        openFile(forcedPosition);
    }

    static String name(long start) {
        return String.format("%020d%s", start, SUFFIX);
    }

    /**
     * The queue shards put their replicas' cursors in. A shard keeps it, rather than reach it through this object,
     * whose fields this thread writes all the time.
     */
    JournalQueue queue() {
        return queue;
    }

    /** Queues a control record; on the replica's shard. Fails it at once if the journal stopped for good. */
    void submit(ControlRecord entry) {
        StorageException failed = failure;
        if (failed != null) {
            Completer.Report refused = new Completer.Report();
            refused.control(entry);
            completer.failed(refused, failed);
            return;
        }
        Cursor cursor = entry.replica().journalCursor;
        entry.replica().controls.add(entry);
        Cursor.CONTROLS.getAndAdd(cursor, 1); // before any later commit: see the class notes
        cursor.notify(queue);
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

    /** Takes everything queued (blocking while idle), writes it, forces once and reports it. */
    int doWork() throws InterruptedException {
        JournalQueue.Node first = queue.take();
        drained.add(first);
        spaceForces(first);
        awaitSegmentWriter();
        for (int i = drained.size(); i < MAX_DRAIN; i++) {
            JournalQueue.Node node = queue.poll();
            if (node == null) {
                break;
            }
            drained.add(node);
        }
        try {
            return process();
        } finally {
            drained.clear();
            touched.clear();
        }
    }

    /**
     * Group commit under load: waits until {@link StorageConfig#groupCommitNanos()} after the start of the last force,
     * so that this batch takes what arrives meanwhile. Producers do not wake this thread while it waits here (it is not
     * parked in the queue's take), which is the point: a wake-up and a force per record or two cost the brokers a
     * third of their CPU on two cores.
     *
     * <p>A wait pays only for small batches whose records come from sources each on its own time. Only after two
     * batches in a row of at most {@link #SMALL_BATCH} entries: a force that covers many records needs no help, and
     * a wait would only add latency (a thousand writers that each wait for their last record lost a quarter of their
     * throughput when any batch after a small one waited; their batches alternate large and small). A writer that
     * waits for its own records to be durable before it appends the next (a publisher that waits for each confirm, a
     * window of appends that arrive together) sends nothing during the wait, which would only add to its latency. So
     * a wait that brought nothing (no other replica queued, the first one committed nothing more) counts as
     * fruitless; after {@link #FRUITLESS_WAITS} in a row the writer forces at once for {@link #BATCHES_WITHOUT_WAIT}
     * batches, then tries one wait again, twice as many batches after each probe that brings nothing again (up to
     * {@link #MAX_BATCHES_WITHOUT_WAIT}). The stop marker waits too, at most one interval.
     */
    private void spaceForces(JournalQueue.Node first) {
        long interval = config.groupCommitNanos();
        if (interval == 0 || smallBatchesInRow < 2 || batchNumber < waitAgainAtBatch) {
            return;
        }
        long wait = lastForceNanos + interval - System.nanoTime();
        if (wait <= 0) {
            return;
        }
        ReplicaLog replica = first instanceof Cursor cursor ? cursor.replica : null; // null: the stop marker
        long committed = replica == null ? 0 : replica.nextOffset;
        LockSupport.parkNanos(this, wait);
        groupCommitWaits.incrementAndGet();
        JournalQueue.Node next = queue.poll();
        if (next != null) {
            drained.add(next);
        }
        boolean grew = next != null || (replica != null && replica.nextOffset != committed);
        if (grew) {
            fruitlessWaits = 0;
            batchesWithoutWait = BATCHES_WITHOUT_WAIT;
        } else if (++fruitlessWaits >= FRUITLESS_WAITS) {
            waitAgainAtBatch = batchNumber + batchesWithoutWait;
            batchesWithoutWait = Math.min(batchesWithoutWait * 2, MAX_BATCHES_WITHOUT_WAIT);
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

    private int process() {
        StorageException failed = failure;
        if (failed != null) {
            failPending(drained, 0, failed);
            return drained.size();
        }
        batchNumber++;
        report = new Completer.Report();
        long batchStart = filePosition;
        rolled = false;
        forcing = false;
        wrote = false;
        buffer.clear();
        int index = 0;
        try {
            for (; index < drained.size(); index++) {
                JournalQueue.Node node = drained.get(index);
                if (node == stopMarker) {
                    running = false;
                } else {
                    journal((Cursor) node);
                }
            }
            commit();
            flush();
            if (wrote) {
                // written whole: the segment writer may put the records in their segments while this is forced
                handOver();
                forcing = true;
                lastForceNanos = System.nanoTime();
                file.force(false);
                forces.incrementAndGet();
            }
        } catch (IOException e) {
            fail(e, batchStart, rolled || forcing, index);
            return drained.size();
        }
        long end = fileStart + filePosition;
        bytes.addAndGet(end - forcedPosition);
        forcedPosition = end;
        batches.incrementAndGet();
        entries.addAndGet(report.entries());
        smallBatchesInRow = report.entries() <= SMALL_BATCH ? Math.min(smallBatchesInRow + 1, 2) : 0;
        for (Cursor cursor : touched) {
            if (cursor.batchEnd != Long.MIN_VALUE) {
                cursor.durableOffset = cursor.batchEnd;
            }
        }
        if (forcedPosition - checkpointRequestedAt >= config.checkpointJournalBytes()) {
            // before the report: whoever learns of the batch's durability finds the checkpoint asked for
            checkpointRequestedAt = forcedPosition;
            checkpointRequest.run();
        }
        // the futures and listeners run on the completer, while this thread goes on with the next batch
        completer.completed(report);
        return report.entries();
    }

    /** Copies what the cursor's replica committed, with its control records in place. */
    private void journal(Cursor cursor) throws IOException {
        ReplicaLog replica = cursor.replica;
        Cursor.QUEUED.setVolatile(cursor, 0); // before reading the commit: a later commit queues the cursor again
        long committed = replica.nextOffset - 1;
        if ((int) Cursor.CONTROLS.getVolatile(cursor) > 0) {
            for (ControlRecord entry = replica.controls.peek(); entry != null; entry = replica.controls.peek()) {
                copyRecords(cursor, entry.recordsThrough());
                control(cursor, entry);
                replica.controls.poll();
                Cursor.CONTROLS.getAndAdd(cursor, -1);
            }
        }
        copyRecords(cursor, committed);
    }

    private void touch(Cursor cursor) {
        if (cursor.batch != batchNumber) {
            cursor.batch = batchNumber;
            cursor.batchEnd = Long.MIN_VALUE;
            cursor.batchBytes = cursor.bytes;
            cursor.batchRecords = false;
            touched.add(cursor);
        }
    }

    private void control(Cursor cursor, ControlRecord entry) throws IOException {
        ReplicaLog replica = cursor.replica;
        touch(cursor);
        if (replica.journalFailed
                && (entry.type() == RecordType.SNAPSHOT
                        || (entry.type() == RecordType.TRUNCATE && entry.endAfter() <= cursor.durableOffset))) {
            replica.journalFailed = false;
        }
        int length = entry.frame.remaining();
        makeRoom(length);
        commitRunFrames++;
        commitRunCrcSum += RecordDescriptor.crcField(entry.frame, 0);
        if (entry.type() == RecordType.TRUNCATE
                || entry.type() == RecordType.SNAPSHOT
                || entry.type() == RecordType.DELETE) {
            // the shard changes its files only after this is forced: no checkpoint may pass it until then
            replica.pendingRewritePosition = fileStart + filePosition + buffer.position();
        }
        if (length > buffer.capacity()) {
            DurableFiles.writeFully(file, entry.frame.duplicate(), filePosition);
            filePosition += length;
        } else {
            buffer.put(buffer.position(), entry.frame, 0, length);
            buffer.position(buffer.position() + length);
        }
        wrote = true;
        report.control(entry);
        cursor.batchEnd = entry.endAfter();
    }

    /** Flushes the buffer and rolls the file as needed so that {@code length} more bytes fit. */
    private void makeRoom(int length) throws IOException {
        long used = filePosition + buffer.position();
        if (used + length > fileLimit() && used > 0) {
            commit();
            flush();
            forcing = true;
            roll();
            forcing = false;
            rolled = true;
        }
        if (length > buffer.remaining()) {
            flush();
        }
    }

    /**
     * Copies the replica's records after the cursor through {@code last}, a run of frames at a time, or refuses them
     * if the replica failed in the journal.
     */
    private void copyRecords(Cursor cursor, long last) throws IOException {
        if (cursor.offset >= last) {
            return;
        }
        ReplicaLog replica = cursor.replica;
        touch(cursor);
        long first = cursor.offset + 1;
        AppendChunk chunk = cursor.chunk != null ? cursor.chunk : replica.oldestChunk;
        int position = cursor.position;
        long offset = cursor.offset;
        boolean refuse = replica.journalFailed;
        runStart = position;
        while (offset < last) {
            if (position == chunk.limit) {
                copyRun(chunk, position, refuse);
                chunk = chunk.next;
                position = 0;
                runStart = 0;
                continue;
            }
            int length = chunk.buffer.getInt(position);
            if (!refuse) {
                int run = position - runStart;
                long used = filePosition + buffer.position() + run;
                if ((used + length > fileLimit() && used > 0) || run + length > buffer.remaining()) {
                    copyRun(chunk, position, false);
                    makeRoom(length);
                }
                if (length > buffer.capacity()) {
                    DurableFiles.writeFully(file, chunk.buffer.slice(position, length), filePosition);
                    filePosition += length;
                    wrote = true;
                    runStart = position + length;
                }
                commitRunFrames++;
                commitRunCrcSum += RecordDescriptor.crcField(chunk.buffer, position);
            }
            position += length;
            offset++;
        }
        copyRun(chunk, position, refuse);
        cursor.chunk = chunk;
        cursor.position = position;
        cursor.offset = last;
        cursor.bytes = chunk.streamBase + position;
        if (refuse) {
            report.refused(replica, first, last);
        } else {
            report.records(replica, first, last);
            cursor.batchEnd = last;
            cursor.batchRecords = true;
        }
    }

    /** Copies the frames from {@link #runStart} to {@code end} of {@code chunk} into the buffer. */
    private void copyRun(AppendChunk chunk, int end, boolean refuse) {
        int length = end - runStart;
        if (length > 0 && !refuse) {
            buffer.put(buffer.position(), chunk.buffer, runStart, length);
            buffer.position(buffer.position() + length);
            wrote = true;
        }
        runStart = end;
    }

    /** Tells the segment writer how far each replica's records are written in the journal. */
    private void handOver() {
        int count = 0;
        for (Cursor cursor : touched) {
            if (cursor.batchRecords) {
                count++;
            }
        }
        if (count == 0) {
            return;
        }
        SegmentWriter.Handover handover = new SegmentWriter.Handover(count);
        for (Cursor cursor : touched) {
            if (cursor.batchRecords) {
                handover.add(
                        cursor.replica,
                        cursor.chunk,
                        cursor.position,
                        cursor.offset,
                        cursor.bytes,
                        cursor.bytes - cursor.batchBytes);
            }
        }
        segmentWriter.handOver(handover);
    }

    /** Bytes of a journal file that frames may fill: room is always left for the commit frame that ends the run. */
    private long fileLimit() {
        return config.journalFileBytes() - RecordDescriptor.COMMIT_LENGTH;
    }

    /** Ends the current run with its commit frame (in the buffer, written by the next flush); nothing if it is empty. */
    private void commit() throws IOException {
        if (commitRunFrames == 0) {
            return;
        }
        if (buffer.remaining() < RecordDescriptor.COMMIT_LENGTH) {
            flush();
        }
        buffer.put(RecordDescriptor.encodeCommit(commitRunStart, commitRunFrames, commitRunCrcSum));
        startRun(fileStart + filePosition + buffer.position());
    }

    private void startRun(long position) {
        commitRunStart = position;
        commitRunFrames = 0;
        commitRunCrcSum = 0;
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
        startRun(start);
        if (config.preallocateJournal()) {
            spareRequest.run();
        }
    }

    /**
     * Bytes of zeros written between two forces of a spare journal file: forcing a whole file of zeros at once makes
     * the journal's own forces wait behind tens of megabytes of write-back (100-230 ms stalls measured at 64 MiB
     * files), so the zeros go to disk a little at a time.
     */
    private static final int SPARE_FORCE_BYTES = 1 << 20;

    /**
     * Journal files kept for reuse at most. Two cover the default configuration: a checkpoint every 16 MiB of journal
     * frees a 64 MiB file soon after the journal left it, and the journal rolls into them one by one; after an open,
     * two files of zeros carry the journal to its first checkpoints.
     */
    static final int MAX_RECYCLED = 2;

    /** Names a new file of zeros in the pool of files to reuse (not counted as reused when the journal takes it). */
    private static final String ZEROS_PREFIX = "zeros-";

    /**
     * Readies the next journal file ahead of use: a file recycled from behind a checkpoint if there is one (its old
     * frames can never be replayed: see RecordDescriptor, "Journal runs"), else a new one filled with zeros, forcing
     * every megabyte. On the background thread.
     */
    void prepareSpare() throws IOException {
        if (spare.get() != null || failure != null) {
            return;
        }
        Path path = directory.resolve("spare-" + spareCounter.incrementAndGet() + ".tmp");
        Path reused = recycled.pollFirst();
        if (reused != null) {
            Files.move(reused, path, StandardCopyOption.ATOMIC_MOVE);
            if (!reused.getFileName().toString().startsWith(ZEROS_PREFIX)) {
                reusedFiles.incrementAndGet();
            }
        } else {
            writeZeros(path);
        }
        if (!spare.compareAndSet(null, path)) {
            Files.deleteIfExists(path);
        }
    }

    /**
     * Fills new files with zeros until {@link #MAX_RECYCLED} are kept for reuse: the files the journal rolls into
     * before its first checkpoint frees any. On the background thread, once after open.
     */
    void fillReusePool() throws IOException {
        while (recycled.size() < MAX_RECYCLED && failure == null) {
            Path path = directory.resolve(ZEROS_PREFIX + spareCounter.incrementAndGet() + ".tmp");
            writeZeros(path);
            recycled.addLast(path);
        }
    }

    /** Hands the writer a whole journal file from before the open, to reuse; before the writer starts. */
    void keepForReuse(Path file) {
        recycled.addLast(file);
    }

    /** Creates {@code path} as a journal file of zeros, forcing every megabyte. */
    private void writeZeros(Path path) throws IOException {
        long began = System.nanoTime();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect(SPARE_FORCE_BYTES);
            long position = 0;
            while (position < config.journalFileBytes()) {
                int length = (int) Math.min(zeros.capacity(), config.journalFileBytes() - position);
                DurableFiles.writeFully(channel, zeros.clear().limit(length), position);
                position += length;
                channel.force(false);
            }
            channel.force(true);
        }
        LOG.info(
                "event=journal_file_zeroed dir={} bytes={} ms={}",
                directory,
                config.journalFileBytes(),
                java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
    }

    /**
     * A batch failed at {@code index} of the drained cursors: everything written so far fails and its replicas are
     * marked failed; the cursors not reached go back to the queue (the one being copied too, for what is left of it).
     */
    private void fail(IOException cause, long batchStart, boolean fatal, int index) {
        StorageException error = new StorageException("journal write failed: appends are not durable", cause);
        if (!fatal) {
            try {
                file.truncate(batchStart);
                file.force(true);
                filePosition = batchStart;
                startRun(fileStart + batchStart);
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
            LOG.error("journal batch failed: dir={} entries={}", directory, report.entries(), cause);
        }
        for (Cursor cursor : touched) {
            cursor.replica.journalFailed = true;
        }
        completer.failed(report, error);
        for (int i = index; i < drained.size(); i++) {
            JournalQueue.Node node = drained.get(i);
            if (node == stopMarker) {
                queue.add(node);
            } else if (Cursor.QUEUED.compareAndSet((Cursor) node, 0, 1) || i > index) {
                queue.add(node); // queued again unless its shard did it meanwhile
            }
        }
        if (fatal) {
            fatal(error);
        }
    }

    private void fatal(StorageException error) {
        failure = error;
        stopped.run(); // appends are refused from here on
        List<JournalQueue.Node> pending = new ArrayList<>();
        for (JournalQueue.Node node = queue.poll(); node != null; node = queue.poll()) {
            pending.add(node);
        }
        failPending(pending, 0, error);
    }

    /** Fails what the drained cursors' replicas committed or submitted and the journal did not take. */
    private void failPending(List<JournalQueue.Node> nodes, int from, StorageException error) {
        Completer.Report refused = new Completer.Report();
        for (int i = from; i < nodes.size(); i++) {
            JournalQueue.Node node = nodes.get(i);
            if (node == stopMarker) {
                running = false;
                continue;
            }
            Cursor cursor = (Cursor) node;
            ReplicaLog replica = cursor.replica;
            Cursor.QUEUED.setVolatile(cursor, 0);
            replica.journalFailed = true;
            long committed = replica.nextOffset - 1;
            for (ControlRecord entry = replica.controls.poll(); entry != null; entry = replica.controls.poll()) {
                Cursor.CONTROLS.getAndAdd(cursor, -1);
                if (entry.recordsThrough() > cursor.offset) {
                    refused.records(replica, cursor.offset + 1, entry.recordsThrough());
                    cursor.offset = entry.recordsThrough();
                }
                refused.control(entry);
            }
            if (committed > cursor.offset) {
                refused.records(replica, cursor.offset + 1, committed);
                cursor.offset = committed;
            }
        }
        completer.failed(refused, error);
    }

    /** Asks the writer thread to finish what is queued and stop. */
    void stop() {
        stopping = true; // no more waiting for the segment writer: it may be stuck
        queue.add(stopMarker);
    }

    /** Fails what is left in the queue after the writer stopped. */
    void failRemaining(StorageException error) {
        List<JournalQueue.Node> pending = new ArrayList<>();
        for (JournalQueue.Node node = queue.poll(); node != null; node = queue.poll()) {
            pending.add(node);
        }
        failPending(pending, 0, error);
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

    /**
     * Retires closed journal files that end at or before {@code position}: keeps up to {@link #MAX_RECYCLED} whole
     * preallocated ones for reuse (renamed out of the journal's name space, so recovery never reads them) and deletes
     * the rest; on the checkpointer thread.
     */
    void deleteFilesBefore(long position) throws IOException {
        for (Map.Entry<Long, Long> closed : closedFiles.headMap(position, true).entrySet()) {
            if (closed.getValue() <= position) {
                Path path = directory.resolve(name(closed.getKey()));
                if (config.preallocateJournal()
                        && recycled.size() < MAX_RECYCLED
                        && Files.exists(path)
                        && Files.size(path) == config.journalFileBytes()) {
                    Path keep = directory.resolve("recycled-" + spareCounter.incrementAndGet() + ".tmp");
                    Files.move(path, keep, StandardCopyOption.ATOMIC_MOVE);
                    recycled.addLast(keep);
                } else {
                    Files.deleteIfExists(path);
                }
                closedFiles.remove(closed.getKey());
            }
        }
    }

    /** How many journal files that held frames were reused instead of new files filled with zeros. */
    long reusedFiles() {
        return reusedFiles.get();
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

    long groupCommitWaits() {
        return groupCommitWaits.get();
    }

    long entries() {
        return entries.get();
    }

    long bytes() {
        return bytes.get();
    }
}
