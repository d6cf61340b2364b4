package io.ganglion.storage;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/** The producers' end of the {@link JournalQueue}, a cache line away from the consumer's. */
abstract class JournalQueueTail extends LinePadding {
    volatile JournalQueue.Node tail;
    volatile Thread waiting;
}

/** Padding between the producers' end and the consumer's. */
abstract class JournalQueueMiddle extends JournalQueueTail {
    long p10;
    long p11;
    long p12;
    long p13;
    long p14;
    long p15;
    long p16;
    long p17;
}

/** The consumer's end. */
abstract class JournalQueueHead extends JournalQueueMiddle {
    JournalQueue.Node head;
}

/**
 * The journal writer's input: a lock-free queue of many producers (shard threads) and one consumer, linked through
 * the nodes themselves (D. Vyukov's intrusive MPSC queue with a stub), so that adding costs one atomic exchange and no
 * allocation or lock. The nodes are the replicas' journal cursors (a replica with records or control records to
 * journal is in the queue once, however many it has) and the writer's stop marker. The consumer parks when the queue
 * is empty and the producer that finds it parked wakes it.
 *
 * <p>Implementation notes. {@code tail} is swapped by producers; {@code head} belongs to the consumer. A node the
 * consumer returns is unlinked from the queue (the consumer's {@code head} moved past it, or the stub was put behind
 * it), so it may be added again at once: a replica's cursor is re-added as soon as the writer took it. Between a
 * producer's swap and its link ({@code prev.next = node}) the queue looks empty to the consumer; that producer then
 * reads {@code waiting} after linking, so a consumer that went to sleep meanwhile is woken. Both sides store one field
 * and then load the other, so both need a full fence in between: the link is a release store, and a release store
 * followed by a load of another field may be reordered (a lost wake-up that left the writer asleep with a replica's
 * records queued until the next append came, for ever in a test with no next append). Only the producer that
 * takes {@code waiting} (swaps it to null) wakes the consumer: a wake-up is a system call, and while a woken consumer
 * waits to be scheduled every other producer would otherwise make one too. One thread at a time consumes: the journal
 * writer, or the closing thread after it stopped.
 */
final class JournalQueue extends JournalQueueHead {
    /** A queue node; a node is in at most one queue at a time, once. */
    static class Node {
        @SuppressWarnings("unused") // through NEXT
        private volatile Node next;
    }

    private static final VarHandle TAIL;
    private static final VarHandle NEXT;
    private static final VarHandle WAITING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TAIL = lookup.findVarHandle(JournalQueueTail.class, "tail", Node.class);
            WAITING = lookup.findVarHandle(JournalQueueTail.class, "waiting", Thread.class);
            NEXT = lookup.findVarHandle(Node.class, "next", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Node stub = new Node();

    long p20;
    long p21;
    long p22;
    long p23;
    long p24;
    long p25;
    long p26;
    long p27;

    JournalQueue() {
        head = stub;
        tail = stub;
    }

    /** Adds a node that is in no queue; any thread, never blocks. */
    void add(Node node) {
        link(node);
        // The link is a release store, which a later load may overtake (x86's store buffer does): without a fence
        // this thread could read waiting as null while the consumer, announcing its sleep, still saw no link.
        VarHandle.fullFence();
        if (waiting != null) {
            Thread sleeper = (Thread) WAITING.getAndSet(this, (Thread) null);
            if (sleeper != null) {
                LockSupport.unpark(sleeper);
            }
        }
    }

    private void link(Node node) {
        NEXT.set(node, (Node) null); // published by the exchange below
        Node previous = (Node) TAIL.getAndSet(this, node);
        NEXT.setRelease(previous, node);
    }

    /** The oldest node, unlinked; null if none is (fully) added. Consumer only. */
    Node poll() {
        Node first = head;
        Node next = (Node) NEXT.getAcquire(first);
        if (first == stub) {
            if (next == null) {
                return null;
            }
            head = next;
            first = next;
            next = (Node) NEXT.getAcquire(next);
        }
        if (next != null) {
            head = next;
            return first;
        }
        if (first != (Node) TAIL.getVolatile(this)) {
            return null; // a producer swapped the tail and has not linked yet: it will soon
        }
        link(stub); // first is the last node: put the stub behind it so that it can leave
        next = (Node) NEXT.getAcquire(first);
        if (next != null) {
            head = next;
            return first;
        }
        return null;
    }

    /** The oldest node, waiting for one; consumer only. */
    Node take() throws InterruptedException {
        Node node = poll();
        while (node == null) {
            waiting = Thread.currentThread();
            VarHandle.fullFence(); // the announcement before the look: the other half of add's fence
            node = poll();
            if (node == null) {
                LockSupport.park(this);
                if (Thread.interrupted()) {
                    waiting = null;
                    throw new InterruptedException();
                }
                node = poll();
            }
            waiting = null;
        }
        return node;
    }
}
