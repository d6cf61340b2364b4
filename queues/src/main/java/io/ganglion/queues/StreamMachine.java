package io.ganglion.queues;

import java.util.LinkedHashMap;
import java.util.Map;
import org.agrona.collections.LongHashSet;

/**
 * The semantics of a stream over its log: every consumer reads every committed message from where it started, at its
 * own pace, and nothing is removed by reading. Acknowledgements only give a consumer credit back (its prefetch bounds
 * the messages it holds unacknowledged), as in RabbitMQ's streams.
 *
 * <p>Implementation notes. A consumer is a cursor (the next offset to read) and the offsets it holds unacknowledged.
 * The machine reads nothing itself: it asks {@link StreamEffects#deliver} for up to the consumer's credit from its
 * cursor to the readable end ({@link #advance}), which the broker keeps at the commit offset, so nothing is delivered
 * before it is durable on enough copies. An acknowledgement names an offset, not a consumer (the channel remembers
 * only the queue and the offset of a delivery tag); two consumers holding the same offset are told apart by nothing,
 * so the credit goes to the first that holds it, and the other gets its own back with the second acknowledgement of
 * that offset: credit is conserved, it may only move between consumers of the same offset for a moment.
 *
 * <p>Not thread-safe: one stream lives on one shard, and only that shard's thread calls it.
 */
public final class StreamMachine {
    private static final class Reader {
        final int prefetch;
        final boolean exclusive;
        long next;
        final LongHashSet unacked = new LongHashSet();

        Reader(int prefetch, boolean exclusive, long next) {
            this.prefetch = prefetch;
            this.exclusive = exclusive;
            this.next = next;
        }
    }

    private final Map<ConsumerKey, Reader> readers = new LinkedHashMap<>();
    private long end;
    private boolean held;

    /** @param end the last readable offset now (the commit offset), -1 for none */
    public StreamMachine(long end) {
        this.end = end;
    }

    /** The last readable offset, -1 for none. */
    public long end() {
        return end;
    }

    public int consumerCount() {
        return readers.size();
    }

    /**
     * Adds a consumer that reads from {@code from} on (clamped to the readable end + 1 by the caller when it asks for a
     * later one), holding at most {@code prefetch} messages unacknowledged; delivers what it may at once.
     *
     * @param prefetch at least 1: a stream consumer needs a prefetch (RabbitMQ refuses one without)
     */
    public ConsumeOutcome consume(ConsumerKey key, int prefetch, boolean exclusive, long from, StreamEffects effects) {
        if (prefetch < 1) {
            throw new IllegalArgumentException("a stream consumer needs a prefetch of at least 1: " + prefetch);
        }
        if (readers.containsKey(key)) {
            return ConsumeOutcome.DUPLICATE_TAG;
        }
        if (!readers.isEmpty() && (exclusive || readers.values().stream().anyMatch(r -> r.exclusive))) {
            return ConsumeOutcome.EXCLUSIVE_CONFLICT;
        }
        Reader reader = new Reader(prefetch, exclusive, Math.max(0, from));
        readers.put(key, reader);
        pump(key, reader, effects);
        return ConsumeOutcome.ADDED;
    }

    public void cancel(ConsumerKey key) {
        readers.remove(key);
    }

    /** The offset a consumer reads next, or -1 for no such consumer. */
    public long cursor(ConsumerKey key) {
        Reader reader = readers.get(key);
        return reader == null ? -1 : reader.next;
    }

    /** A delivery of {@code offset} was settled (any settlement): its consumer gets the credit back and reads on. */
    public void ack(long offset, StreamEffects effects) {
        for (Map.Entry<ConsumerKey, Reader> entry : readers.entrySet()) {
            if (entry.getValue().unacked.remove(offset)) {
                pump(entry.getKey(), entry.getValue(), effects);
                return;
            }
        }
    }

    /** The readable end moved to {@code end} (the commit offset advanced): consumers with credit read on. */
    public void advance(long end, StreamEffects effects) {
        if (end <= this.end) {
            return;
        }
        this.end = end;
        pumpAll(effects);
    }

    /** Stops handing out messages (a deposed owner's lease may have run out) until {@link #resume}. */
    public void hold() {
        held = true;
    }

    public void resume(StreamEffects effects) {
        if (held) {
            held = false;
            pumpAll(effects);
        }
    }

    private void pumpAll(StreamEffects effects) {
        // a delivery may cancel a consumer (its channel closed): iterate over a copy
        for (Map.Entry<ConsumerKey, Reader> entry : java.util.List.copyOf(readers.entrySet())) {
            if (readers.get(entry.getKey()) == entry.getValue()) {
                pump(entry.getKey(), entry.getValue(), effects);
            }
        }
    }

    private void pump(ConsumerKey key, Reader reader, StreamEffects effects) {
        while (!held && reader.next <= end && reader.unacked.size() < reader.prefetch && readers.get(key) == reader) {
            int credit = reader.prefetch - reader.unacked.size();
            long next = effects.deliver(key, reader.next, end, credit, reader.unacked::add);
            if (next <= reader.next) {
                return; // nothing readable there now; the next advance or ack tries again
            }
            reader.next = next;
        }
    }
}
