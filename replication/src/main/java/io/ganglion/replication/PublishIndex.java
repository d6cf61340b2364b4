package io.ganglion.replication;

import java.util.Comparator;
import java.util.HashMap;
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
 * <p>Entries are added in offset order; a truncation removes the newest. Not thread-safe (the replica's shard).
 */
final class PublishIndex {
    private final Map<PublishId, Long> offsets = new HashMap<>();
    private final PublishId[] ids;
    private final long[] ringOffsets;
    private int head;
    private int size;

    PublishIndex(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.ids = new PublishId[capacity];
        this.ringOffsets = new long[capacity];
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
        if (size == ids.length) {
            forget(ids[head], ringOffsets[head]);
            ids[head] = null;
            head = (head + 1) % ids.length;
            size--;
        }
        int tail = (head + size) % ids.length;
        ids[tail] = id;
        ringOffsets[tail] = offset;
        size++;
        offsets.put(id, offset);
    }

    /** The offset {@code id} was appended at, or null when it is not remembered. */
    Long get(PublishId id) {
        return offsets.get(id);
    }

    /** Forgets the messages at {@code from} and above (the log was truncated there). */
    void removeFrom(long from) {
        while (size > 0) {
            int tail = (head + size - 1) % ids.length;
            if (ringOffsets[tail] < from) {
                break;
            }
            forget(ids[tail], ringOffsets[tail]);
            ids[tail] = null;
            size--;
        }
    }

    /** Drops {@code id} from the map unless it was appended again later (a re-send older than the window). */
    private void forget(PublishId id, long offset) {
        Long at = offsets.get(id);
        if (at != null && at == offset) {
            offsets.remove(id);
        }
    }

    void clear() {
        offsets.clear();
        java.util.Arrays.fill(ids, null);
        head = 0;
        size = 0;
    }

    int size() {
        return size;
    }
}
