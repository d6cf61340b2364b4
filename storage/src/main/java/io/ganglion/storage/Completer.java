package io.ganglion.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports durability for the journal writer, on its own thread ({@code ganglion-durable-*}): completes the futures of
 * a forced batch and calls each touched replica's {@link DurabilityListener} once, while the journal writer already
 * writes and forces the next batch. Without it, the callbacks of a large batch (a confirm per message, a wake-up per
 * waiting shard) would run between two forces and keep the disk idle. A small batch ({@value #INLINE_MAX} entries at
 * most) found with nothing queued here is reported on the journal writer itself: a thread hop would cost it more.
 *
 * <p>Implementation notes. The journal writer hands over batches in journal order, and reports inline only when
 * nothing handed over is still unreported ({@code queued} is zero), so a replica's reports never overtake each other.
 * Whichever thread reports owns {@code batch}, {@code touched} and the {@code notifiedBatch} and {@code
 * notifiedOffset} of each replica at that time; {@code queued} orders the handovers between them. Neither thread may
 * run {@link ReplicaLog#truncateAfter} and friends: they wait for a report that only these threads give.
 */
final class Completer implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Completer.class);
    private static final Object STOP = new Object();
    /** A forced batch of at most this many entries is reported on the journal writer if nothing is queued here. */
    static final int INLINE_MAX = 64;

    private record Failed(List<JournalWriter.Entry> entries, StorageException error) {}

    private final String name;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final List<Object> drained = new ArrayList<>();
    private final List<ReplicaLog> touched = new ArrayList<>();
    /** Batches handed over and not yet fully reported. */
    private final AtomicInteger queued = new AtomicInteger();

    private long batch;
    private boolean running = true;

    Completer(String name) {
        this.name = name;
    }

    /** Entries written and forced; on the journal writer. */
    void completed(List<JournalWriter.Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        if (entries.size() <= INLINE_MAX && queued.get() == 0) {
            // nothing queued here, so reporting on the caller keeps the order, and saves a thread hop for small
            // batches, where the hop would cost more than the callbacks (an idle store: one append per batch)
            report(entries, null);
        } else {
            queued.incrementAndGet();
            queue.add(entries);
        }
    }

    /** Entries that will never be durable; any thread. */
    void failed(List<JournalWriter.Entry> entries, StorageException error) {
        if (!entries.isEmpty()) {
            queued.incrementAndGet();
            queue.add(new Failed(entries, error));
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
                work += report(failed.entries(), failed.error());
                queued.decrementAndGet();
            } else {
                @SuppressWarnings("unchecked")
                List<JournalWriter.Entry> entries = (List<JournalWriter.Entry>) item;
                work += report(entries, null);
                queued.decrementAndGet();
            }
        }
        drained.clear();
        return work;
    }

    private int report(List<JournalWriter.Entry> entries, StorageException error) {
        long current = ++batch;
        for (JournalWriter.Entry entry : entries) {
            ReplicaLog replica = entry.replica();
            if (entry.type() != RecordType.DELETE && replica.notifiedBatch != current) {
                replica.notifiedBatch = current;
                touched.add(replica);
            }
            if (error == null) {
                replica.notifiedOffset = entry.endAfter(); // in journal order: the last one is the replica's end
                entry.succeed();
            } else {
                entry.fail(error);
            }
        }
        for (ReplicaLog replica : touched) {
            DurabilityListener listener = replica.durabilityListener;
            if (listener != null) {
                try {
                    if (error == null) {
                        listener.durable(replica.notifiedOffset);
                    } else {
                        listener.failed(error);
                    }
                } catch (RuntimeException e) {
                    LOG.error("durability listener failed: dir={} object={}", name, replica.objectId(), e);
                }
            }
        }
        touched.clear();
        return entries.size();
    }
}
