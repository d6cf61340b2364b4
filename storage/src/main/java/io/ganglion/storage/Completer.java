package io.ganglion.storage;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports durability for the journal writer, on its own thread ({@code ganglion-durable-*}): for each forced batch it
 * completes the futures asked for (see {@link AppendFutures}) and those of control records, and calls each touched
 * replica's {@link DurabilityListener} once, with the replica's last offset in the batch, while the journal writer
 * already writes and forces the next batch. Without it, the callbacks of a large batch (a confirm per message, a
 * wake-up per waiting shard) would run between two forces and keep the disk idle. A small batch ({@value #INLINE_MAX}
 * items at most) found with nothing queued here is reported on the journal writer itself: a thread hop would cost it
 * more.
 *
 * <p>A batch is reported as a {@link Report}: per replica, ranges of records (one item for the records of a replica
 * between two of its control records, not one per record) and the control records, in journal order.
 *
 * <p>Implementation notes. The journal writer hands over reports in journal order, and reports inline only when
 * nothing handed over is still unreported ({@code queued} is zero), so a replica's reports never overtake each other.
 * Whichever thread reports owns {@code touched} and each replica's {@link Mark} at that time;
 * {@code queued} orders the handovers between them. Neither thread may run {@link ReplicaLog#truncateAfter} and
 * friends: they wait for a report that only these threads give.
 */
final class Completer implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Completer.class);
    private static final Object STOP = new Object();
    /** A forced batch of at most this many items is reported on the journal writer if nothing is queued here. */
    static final int INLINE_MAX = 64;

    /**
     * What one journal batch holds, in journal order: ranges of a replica's records, records refused because the
     * replica failed before, and control records. Filled by the journal writer, then handed over and not changed.
     */
    static final class Report {
        private static final byte RECORDS = 0;
        private static final byte REFUSED = 1;
        private static final byte CONTROL = 2;

        private Object[] items = new Object[16];
        private long[] from = new long[16];
        private long[] through = new long[16];
        private byte[] kinds = new byte[16];
        private int size;
        private int records;

        /** Records {@code from} .. {@code through} of {@code replica}, written in this batch. */
        void records(ReplicaLog replica, long first, long last) {
            add(RECORDS, replica, first, last);
            records += (int) (last - first + 1);
        }

        /** Records of a replica that failed in the journal before, not written. */
        void refused(ReplicaLog replica, long first, long last) {
            add(REFUSED, replica, first, last);
        }

        void control(ControlRecord entry) {
            add(CONTROL, entry, 0, 0);
            records++;
        }

        private void add(byte kind, Object item, long first, long last) {
            if (size == items.length) {
                int grown = size * 2;
                items = Arrays.copyOf(items, grown);
                from = Arrays.copyOf(from, grown);
                through = Arrays.copyOf(through, grown);
                kinds = Arrays.copyOf(kinds, grown);
            }
            items[size] = item;
            from[size] = first;
            through[size] = last;
            kinds[size] = kind;
            size++;
        }

        int size() {
            return size;
        }

        boolean isEmpty() {
            return size == 0;
        }

        /** Journal entries: records written or refused, and control records. */
        int entries() {
            return records;
        }
    }

    /**
     * What the reporting thread notes of one replica while it reports a batch; kept out of the replica's own object,
     * whose lines its shard writes on every append.
     */
    static final class Mark {
        /** The report this replica was last touched in. */
        long report = -1;
        /** The replica's last durable offset in it, {@link Long#MIN_VALUE} if none. */
        long offset;
        /** A failure in it, or null. */
        StorageException failure;
    }

    private final String name;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final List<Object> drained = new ArrayList<>();
    private final List<ReplicaLog> touched = new ArrayList<>();
    /** Reports handed over and not yet done. */
    private final AtomicInteger queued = new AtomicInteger();

    private long report;
    private boolean running = true;

    private record Failed(Report report, StorageException error) {}

    Completer(String name) {
        this.name = name;
    }

    /** A batch written and forced; on the journal writer. */
    void completed(Report batch) {
        if (batch.isEmpty()) {
            return;
        }
        if (batch.size() <= INLINE_MAX && queued.get() == 0) {
            // nothing queued here, so reporting on the caller keeps the order, and saves a thread hop for small
            // batches, where the hop would cost more than the callbacks (an idle store: one append per batch)
            report(batch, null);
        } else {
            queued.incrementAndGet();
            queue.add(batch);
        }
    }

    /** Everything in {@code batch} will never be durable; any thread. */
    void failed(Report batch, StorageException error) {
        if (!batch.isEmpty()) {
            queued.incrementAndGet();
            queue.add(new Failed(batch, error));
        }
    }

    /** Reports what is queued, then stops. */
    void stop() {
        queue.add(STOP);
    }

    @Override
    public void run() {
        try {
            while (running) {
                doWork();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    int doWork() throws InterruptedException {
        drained.add(queue.take());
        queue.drainTo(drained);
        int work = 0;
        for (Object item : drained) {
            if (item == STOP) {
                running = false;
            } else if (item instanceof Failed failed) {
                work += report(failed.report(), failed.error());
                queued.decrementAndGet();
            } else {
                work += report((Report) item, null);
                queued.decrementAndGet();
            }
        }
        drained.clear();
        return work;
    }

    private int report(Report batch, StorageException error) {
        long current = ++report;
        for (int i = 0; i < batch.size; i++) {
            switch (batch.kinds[i]) {
                case Report.RECORDS -> {
                    ReplicaLog replica = (ReplicaLog) batch.items[i];
                    if (error == null) {
                        replica.futures.durable(batch.through[i]);
                        touch(replica, current).offset = batch.through[i];
                    } else {
                        replica.futures.failed(batch.from[i], error);
                        touch(replica, current).failure = error;
                    }
                }
                case Report.REFUSED -> {
                    ReplicaLog replica = (ReplicaLog) batch.items[i];
                    StorageException cause = error != null ? error : failedBefore(replica);
                    replica.futures.failed(batch.from[i], cause);
                    touch(replica, current).failure = cause;
                }
                default -> {
                    ControlRecord entry = (ControlRecord) batch.items[i];
                    if (error == null) {
                        entry.succeed();
                    } else {
                        entry.fail(error);
                    }
                    if (entry.type() != RecordType.DELETE) {
                        Mark mark = touch(entry.replica(), current);
                        if (error == null) {
                            mark.offset = entry.endAfter();
                        } else {
                            mark.failure = error;
                        }
                    }
                }
            }
        }
        for (ReplicaLog replica : touched) {
            DurabilityListener listener = replica.durabilityListener;
            Mark mark = replica.completerMark;
            StorageException failure = mark.failure;
            long offset = mark.offset;
            mark.failure = null;
            if (listener != null) {
                try {
                    // failures first: in one batch, a replica's failed records come before a truncate that clears
                    // the failure and the records after it
                    if (failure != null) {
                        listener.failed(failure);
                    }
                    if (offset != Long.MIN_VALUE) {
                        listener.durable(offset);
                    }
                } catch (RuntimeException e) {
                    LOG.error("durability listener failed: dir={} object={}", name, replica.objectId(), e);
                }
            }
        }
        touched.clear();
        return batch.entries();
    }

    private Mark touch(ReplicaLog replica, long current) {
        Mark mark = replica.completerMark;
        if (mark.report != current) {
            mark.report = current;
            mark.offset = Long.MIN_VALUE;
            mark.failure = null;
            touched.add(replica);
        }
        return mark;
    }

    static StorageException failedBefore(ReplicaLog replica) {
        return new StorageException("an earlier append of object " + replica.objectId()
                + " failed in the journal; truncate after the durable offset first");
    }
}
