package io.ganglion.storage;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The journal writer's input: a lock-free queue of many producers (shard threads) and one consumer, linked through
 * the entries themselves (D. Vyukov's intrusive MPSC queue), so that an append costs one atomic exchange and no
 * allocation or lock. The consumer parks when the queue is empty and the producer that finds it parked wakes it.
 *
 * <p>Implementation notes. {@code tail} is swapped by producers; {@code head} (a consumed entry kept as the stub, or
 * the initial stub) belongs to the consumer. Between a producer's swap and its link ({@code prev.next = entry}) the
 * queue looks empty to the consumer; that producer then reads {@code waiting} after linking, so a consumer that went
 * to sleep meanwhile is woken. Only the producer that takes {@code waiting} (swaps it to null) wakes the consumer: a
 * wake-up is a system call, and while a woken consumer waits to be scheduled every other producer would otherwise
 * make one too (it was the largest CPU cost of appending with many objects). One thread at a time consumes: the journal writer, or the closing thread after it
 * stopped.
 */
final class JournalQueue {
    private static final VarHandle TAIL;
    private static final VarHandle NEXT;
    private static final VarHandle WAITING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TAIL = lookup.findVarHandle(JournalQueue.class, "tail", JournalWriter.Entry.class);
            WAITING = lookup.findVarHandle(JournalQueue.class, "waiting", Thread.class);
            NEXT = MethodHandles.privateLookupIn(JournalWriter.Entry.class, lookup)
                    .findVarHandle(JournalWriter.Entry.class, "next", JournalWriter.Entry.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through TAIL
    private volatile JournalWriter.Entry tail;

    private JournalWriter.Entry head;
    private volatile Thread waiting;

    JournalQueue(JournalWriter.Entry stub) {
        head = stub;
        tail = stub;
    }

    /** Adds an entry; any thread, never blocks. */
    void add(JournalWriter.Entry entry) {
        NEXT.setOpaque(entry, (JournalWriter.Entry) null);
        JournalWriter.Entry previous = (JournalWriter.Entry) TAIL.getAndSet(this, entry);
        NEXT.setVolatile(previous, entry);
        if (waiting != null) {
            Thread sleeper = (Thread) WAITING.getAndSet(this, (Thread) null);
            if (sleeper != null) {
                LockSupport.unpark(sleeper);
            }
        }
    }

    /** The oldest entry, or null if none is (fully) added; consumer only. */
    JournalWriter.Entry poll() {
        JournalWriter.Entry current = head;
        JournalWriter.Entry next = (JournalWriter.Entry) NEXT.getVolatile(current);
        if (next == null) {
            return null;
        }
        head = next;
        NEXT.setOpaque(current, (JournalWriter.Entry) null); // no consumed entry keeps later ones reachable
        return next;
    }

    /** The oldest entry, waiting for one; consumer only. */
    JournalWriter.Entry take() throws InterruptedException {
        JournalWriter.Entry entry = poll();
        while (entry == null) {
            waiting = Thread.currentThread();
            entry = poll();
            if (entry == null) {
                LockSupport.park(this);
                if (Thread.interrupted()) {
                    waiting = null;
                    throw new InterruptedException();
                }
                entry = poll();
            }
            waiting = null;
        }
        return entry;
    }

    /** Moves up to {@code max} entries to {@code into}; consumer only. */
    void drainTo(List<JournalWriter.Entry> into, int max) {
        for (int i = 0; i < max; i++) {
            JournalWriter.Entry entry = poll();
            if (entry == null) {
                return;
            }
            into.add(entry);
        }
    }
}
