package io.ganglion.replication;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;

/**
 * Where the newest messages of a log sit, by publish id: the owner looks a publish up here before it appends it, so a
 * publish re-sent with the same id (its first owner moved before it could answer) is confirmed at the offset it
 * already has instead of being appended twice.
 *
 * <p>Bounded: it remembers the last {@code capacity} messages appended and forgets older ones, oldest first. A re-send
 * comes within a recovery's time of its first send, so a window of many seconds of traffic is enough; keeping every
 * id for the log's life would grow the heap by a hundred bytes per message, for ever. A re-send of a message older
 * than the window is appended again (a duplicate, as at-least-once allows).
 *
 * <p>Primitive arrays only, no object per message: an open-addressing hash table (linear probing, backward-shift
 * deletion) from (publisher, sequence) to offset, and a ring of the same entries in append order for forgetting the
 * oldest. Both start small and double up to the capacity. Entries are added in offset order; a truncation removes the
 * newest. Not thread-safe (the replica's shard).
 */
final class PublishIndex {
    private static final int INITIAL_ENTRIES = 64;
    private static final long EMPTY = -1;

    private final int capacity;
    // the table: twice the ring's length, so it is at most half full
    private long[] tablePublisher;
    private long[] tableSequence;
    private long[] tableOffset; // EMPTY marks a free slot
    // the ring, oldest first from head
    private long[] ringPublisher;
    private long[] ringSequence;
    private long[] ringOffset;
    private int head;
    private int size;

    PublishIndex(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.capacity = capacity;
        allocate(Math.min(capacity, INITIAL_ENTRIES));
    }

    /** An index of {@code published} (id to offset), the newest {@code capacity} of them. */
    static PublishIndex of(Map<PublishId, Long> published, int capacity) {
        PublishIndex index = new PublishIndex(capacity);
        published.entrySet().stream()
                .sorted(Map.Entry.comparingByValue(Comparator.naturalOrder()))
                .forEach(entry -> index.put(entry.getKey(), entry.getValue()));
        return index;
    }

    /** Remembers that {@code id} was appended at {@code offset}, above every offset remembered so far. */
    void put(PublishId id, long offset) {
        if (size == ringOffset.length) {
            if (ringOffset.length < capacity) {
                grow();
            } else {
                forget(ringPublisher[head], ringSequence[head], ringOffset[head]);
                head = (head + 1) % ringOffset.length;
                size--;
            }
        }
        int tail = (head + size) % ringOffset.length;
        ringPublisher[tail] = id.publisher();
        ringSequence[tail] = id.sequence();
        ringOffset[tail] = offset;
        size++;
        int slot = find(id.publisher(), id.sequence());
        tablePublisher[slot] = id.publisher();
        tableSequence[slot] = id.sequence();
        tableOffset[slot] = offset;
    }

    /** The offset {@code id} was appended at, or null when it is not remembered. */
    Long get(PublishId id) {
        long offset = tableOffset[find(id.publisher(), id.sequence())];
        return offset == EMPTY ? null : offset;
    }

    /** Forgets the messages at {@code from} and above (the log was truncated there). */
    void removeFrom(long from) {
        while (size > 0) {
            int tail = (head + size - 1) % ringOffset.length;
            if (ringOffset[tail] < from) {
                break;
            }
            forget(ringPublisher[tail], ringSequence[tail], ringOffset[tail]);
            size--;
        }
    }

    void clear() {
        Arrays.fill(tableOffset, EMPTY);
        head = 0;
        size = 0;
    }

    int size() {
        return size;
    }

    /** The slot holding (publisher, sequence), or the free slot where it would go. */
    private int find(long publisher, long sequence) {
        int mask = tableOffset.length - 1;
        int slot = home(publisher, sequence, mask);
        while (tableOffset[slot] != EMPTY && (tablePublisher[slot] != publisher || tableSequence[slot] != sequence)) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    /** Drops the entry unless its id was appended again later (a re-send older than the window). */
    private void forget(long publisher, long sequence, long offset) {
        int slot = find(publisher, sequence);
        if (tableOffset[slot] != offset) {
            return;
        }
        // backward-shift deletion: pull later entries of the probe run into the hole so lookups never stop early
        int mask = tableOffset.length - 1;
        int hole = slot;
        int next = slot;
        while (true) {
            next = (next + 1) & mask;
            if (tableOffset[next] == EMPTY) {
                break;
            }
            int wanted = home(tablePublisher[next], tableSequence[next], mask);
            boolean staysPut = hole <= next ? hole < wanted && wanted <= next : hole < wanted || wanted <= next;
            if (staysPut) {
                continue;
            }
            tablePublisher[hole] = tablePublisher[next];
            tableSequence[hole] = tableSequence[next];
            tableOffset[hole] = tableOffset[next];
            hole = next;
        }
        tableOffset[hole] = EMPTY;
    }

    private static int home(long publisher, long sequence, int mask) {
        long h = publisher * 0x9E3779B97F4A7C15L + sequence;
        h ^= h >>> 32;
        h *= 0xD6E8FEB86659FD93L;
        h ^= h >>> 29;
        return (int) h & mask;
    }

    private void allocate(int entries) {
        ringPublisher = new long[entries];
        ringSequence = new long[entries];
        ringOffset = new long[entries];
        int slots = Integer.highestOneBit(Math.max(2, entries * 2 - 1)) << 1;
        tablePublisher = new long[slots];
        tableSequence = new long[slots];
        tableOffset = new long[slots];
        Arrays.fill(tableOffset, EMPTY);
        head = 0;
        size = 0;
    }

    /** Doubles the ring (up to the capacity) and rebuilds the table from it. */
    private void grow() {
        long[] publishers = ringPublisher;
        long[] sequences = ringSequence;
        long[] offsets = ringOffset;
        int oldHead = head;
        int oldSize = size;
        allocate(Math.min(capacity, offsets.length * 2));
        for (int i = 0; i < oldSize; i++) {
            int at = (oldHead + i) % offsets.length;
            put(new PublishId(publishers[at], sequences[at]), offsets[at]);
        }
    }
}
