package io.ganglion.storage;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The durability futures of one generation of a replica's log: the appends between two truncates (or a snapshot
 * install or a deletion), when an offset means one record. An append costs no future and no entry here; {@link
 * AppendOutcome.Appended#durable()} asks for one, and the completer, which reports the replica's records in journal
 * order, completes what was asked for. A future asked for after its record was reported is made completed at once.
 *
 * <p>Implementation notes. The completer alone raises {@code durableThrough} (the highest offset of this generation
 * reported durable) and lowers {@code failedFrom} (the first offset reported failed; every later record of the
 * generation fails too, as the journal refuses a failed replica's records until a truncate starts a new generation).
 * It publishes them before it looks for waiters, and a waiter is added under the lock after checking them again, so
 * none is missed. The shard starts the next generation only once the truncate or reset that ends this one was
 * reported, so nothing is reported here after that.
 */
final class AppendFutures {
    private record Waiter(long offset, CompletableFuture<Long> future) {}

    private volatile long durableThrough;
    private volatile long failedFrom;
    private volatile StorageException failure;
    /** Whether {@code waiters} may be non-empty: lets the completer skip the lock. */
    private volatile boolean waiting;
    /** In offset order; guarded by this. */
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

    /**
     * @param durableThrough records through this offset are durable already
     * @param failedFrom records from this offset on failed already ({@link Long#MAX_VALUE} if none did)
     * @param failure why they failed, or null
     */
    AppendFutures(long durableThrough, long failedFrom, StorageException failure) {
        this.durableThrough = durableThrough;
        this.failedFrom = failedFrom;
        this.failure = failure;
    }

    /** The next generation after a cut after {@code last}: records through it keep what was reported for them. */
    AppendFutures next(long last) {
        long failed = failedFrom;
        return failed <= last
                ? new AppendFutures(Math.min(durableThrough, last), failed, failure)
                : new AppendFutures(Math.min(durableThrough, last), Long.MAX_VALUE, null);
    }

    /** The future of the record at {@code offset} of this generation; any thread. */
    CompletableFuture<Long> future(long offset) {
        CompletableFuture<Long> done = outcome(offset);
        if (done != null) {
            return done;
        }
        synchronized (this) {
            done = outcome(offset);
            if (done != null) {
                return done;
            }
            CompletableFuture<Long> future = new CompletableFuture<>();
            Waiter waiter = new Waiter(offset, future);
            if (waiters.isEmpty() || waiters.peekLast().offset() <= offset) {
                waiters.addLast(waiter); // the usual case: asked for right after the append
            } else {
                List<Waiter> sorted = new ArrayList<>(waiters);
                sorted.add(waiter);
                sorted.sort(Comparator.comparingLong(Waiter::offset));
                waiters.clear();
                waiters.addAll(sorted);
            }
            waiting = true;
            // Look again after announcing the waiter: the completer raises durableThrough, then reads waiting; this
            // thread sets waiting, then reads durableThrough (all volatile). One of the two sees the other's write,
            // so a report racing with this call either finds the waiter or is seen here. (Checking only before
            // setting waiting lost a report that came in between: a future that never completed.) A waiter
            // completed here stays queued; completing it again later does nothing.
            CompletableFuture<Long> now = outcome(offset);
            if (now != null) {
                now.whenComplete((value, failed) -> {
                    if (failed == null) {
                        future.complete(value);
                    } else {
                        future.completeExceptionally(failed);
                    }
                });
            }
            return future;
        }
    }

    private CompletableFuture<Long> outcome(long offset) {
        if (offset <= durableThrough) {
            return CompletableFuture.completedFuture(offset);
        }
        if (offset >= failedFrom) {
            return CompletableFuture.failedFuture(failure);
        }
        return null;
    }

    /** Records through {@code offset} are durable; on the completer. */
    void durable(long offset) {
        if (offset <= durableThrough) {
            return;
        }
        durableThrough = offset;
        if (waiting) {
            for (Waiter waiter : takeThrough(offset)) {
                waiter.future().complete(waiter.offset());
            }
        }
    }

    /** Records from {@code from} on failed; on the completer. */
    void failed(long from, StorageException cause) {
        if (from < failedFrom) {
            failure = cause; // before failedFrom: whoever sees the offset failed sees why
            failedFrom = from;
        }
        if (waiting) {
            for (Waiter waiter : takeFrom(from)) {
                waiter.future().completeExceptionally(cause);
            }
        }
    }

    /** Removes the waiters at or below {@code through}. */
    private synchronized List<Waiter> takeThrough(long through) {
        List<Waiter> taken = new ArrayList<>();
        while (!waiters.isEmpty() && waiters.peekFirst().offset() <= through) {
            taken.add(waiters.pollFirst());
        }
        waiting = !waiters.isEmpty();
        return taken;
    }

    /** Removes the waiters at or above {@code from}. */
    private synchronized List<Waiter> takeFrom(long from) {
        List<Waiter> taken = new ArrayList<>();
        while (!waiters.isEmpty() && waiters.peekLast().offset() >= from) {
            taken.add(waiters.pollLast());
        }
        waiting = !waiters.isEmpty();
        return taken;
    }
}
