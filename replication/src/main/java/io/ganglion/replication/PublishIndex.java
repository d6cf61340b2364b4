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
 *
 * <p>Growing never stops the shard for long: the ring is copied at once (sequential, under a millisecond at most),
 * but the entries move to the doubled table a few slots per {@link #put} ({@value #MIGRATE_SLOTS_PER_PUT}), while
 * lookups read the new table and then the old one. Rebuilding the table in one go takes tens of milliseconds at the
 * last doublings (65,536 entries into a table of 262,144 slots, a cache miss each), on every replica of every queue
 * that started together: all at once, a silence of every queue of the cluster (docs/benchmarks.md). The move is done
 * before the ring fills again (unless the capacity is just above the ring's size), so forgetting the oldest (a
 * deletion) finds it done; a truncation or a clear, both rare, finish it first.
 */
final class PublishIndex {
    private static final int INITIAL_ENTRIES = 64;
    private static final long EMPTY = -1;

    /**
     * Slots of the old table moved per put while the table grows. The old table has twice as many slots as the ring
     * had entries, and the ring has that many free places after a growth, so two a put would just do; eight finish a
     * quarter of the way.
     */
    static final int MIGRATE_SLOTS_PER_PUT = 8;

    private final int capacity;
    // the table: twice the ring's length, so it is at most half full
    private long[] tablePublisher;
    private long[] tableSequence;
    private long[] tableOffset; // EMPTY marks a free slot
    // the table before the last growth, while its entries move to the new one; null when none is moving
    private long[] oldPublisher;
    private long[] oldSequence;
    private long[] oldOffset;
    private int migrated; // old slots below this have moved
    // the ring, oldest first from head
    private long[] ringPublisher;
    private long[] ringSequence;
    private long[] ringOffset;
    private int head;
    private int size;

    PublishIndex(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative: " + capacity);
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
        if (capacity == 0) {
            return; // remembers nothing: every publish is new
        }
        if (oldOffset != null) {
            migrate(MIGRATE_SLOTS_PER_PUT);
        }
        if (size == ringOffset.length) {
            if (ringOffset.length < capacity) {
                grow();
            } else {
                finishMigration(); // long done, unless the capacity is just above the ring's last size
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
        if (offset == EMPTY && oldOffset != null) {
            offset = oldOffset[find(oldPublisher, oldSequence, oldOffset, id.publisher(), id.sequence())];
        }
        return offset == EMPTY ? null : offset;
    }

    /** Forgets the messages at {@code from} and above (the log was truncated there). */
    void removeFrom(long from) {
        finishMigration();
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
        dropOldTable();
        Arrays.fill(tableOffset, EMPTY);
        head = 0;
        size = 0;
    }

    int size() {
        return size;
    }

    /** Whether entries are still moving from the table before the last growth. For tests. */
    boolean migrating() {
        return oldOffset != null;
    }

    /** The slot holding (publisher, sequence), or the free slot where it would go. */
    private int find(long publisher, long sequence) {
        return find(tablePublisher, tableSequence, tableOffset, publisher, sequence);
    }

    private static int find(long[] publishers, long[] sequences, long[] offsets, long publisher, long sequence) {
        int mask = offsets.length - 1;
        int slot = home(publisher, sequence, mask);
        while (offsets[slot] != EMPTY && (publishers[slot] != publisher || sequences[slot] != sequence)) {
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
        allocateTable(entries);
        head = 0;
        size = 0;
    }

    private void allocateTable(int entries) {
        int slots = Integer.highestOneBit(Math.max(2, entries * 2 - 1)) << 1;
        tablePublisher = new long[slots];
        tableSequence = new long[slots];
        tableOffset = new long[slots];
        Arrays.fill(tableOffset, EMPTY);
    }

    /**
     * Doubles the ring (up to the capacity), copying it in order, and starts a doubled table; the old table's entries
     * move to it a few per put ({@link #migrate}).
     */
    private void grow() {
        finishMigration();
        int entries = Math.min(capacity, ringOffset.length * 2);
        ringPublisher = grown(ringPublisher, entries);
        ringSequence = grown(ringSequence, entries);
        ringOffset = grown(ringOffset, entries);
        head = 0;
        oldPublisher = tablePublisher;
        oldSequence = tableSequence;
        oldOffset = tableOffset;
        migrated = 0;
        allocateTable(entries);
    }

    /** A ring of {@code entries} holding {@code ring}'s entries oldest first from 0 (reads {@code head} and size). */
    private long[] grown(long[] ring, int entries) {
        long[] grown = new long[entries];
        int first = Math.min(size, ring.length - head);
        System.arraycopy(ring, head, grown, 0, first);
        System.arraycopy(ring, 0, grown, first, size - first);
        return grown;
    }

    /**
     * Moves up to {@code slots} slots of the old table into the new one. An id the new table already holds was put
     * again after the growth, at a later offset, which wins.
     */
    private void migrate(int slots) {
        int end = Math.min(oldOffset.length, migrated + slots);
        for (int slot = migrated; slot < end; slot++) {
            if (oldOffset[slot] == EMPTY) {
                continue;
            }
            int to = find(oldPublisher[slot], oldSequence[slot]);
            if (tableOffset[to] == EMPTY) {
                tablePublisher[to] = oldPublisher[slot];
                tableSequence[to] = oldSequence[slot];
                tableOffset[to] = oldOffset[slot];
            }
        }
        migrated = end;
        if (migrated == oldOffset.length) {
            dropOldTable();
        }
    }

    private void finishMigration() {
        if (oldOffset != null) {
            migrate(oldOffset.length);
        }
    }

    private void dropOldTable() {
        oldPublisher = null;
        oldSequence = null;
        oldOffset = null;
        migrated = 0;
    }
}
