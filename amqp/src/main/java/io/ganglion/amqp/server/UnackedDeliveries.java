package io.ganglion.amqp.server;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The deliveries of one channel that wait for {@code basic.ack}, {@code basic.nack} or {@code basic.reject}: delivery
 * tag to {@code (queue, offset)}, in tag order.
 *
 * <p>Which tags an ack takes follows RabbitMQ's {@code rabbit_channel:collect_acks/3}: tag 0 with {@code multiple} takes
 * all; otherwise the tag must be outstanding ({@code 406 PRECONDITION_FAILED "unknown delivery tag N"} if not, even with
 * {@code multiple}), and {@code multiple} also takes every outstanding tag below it.
 *
 * <p>Implementation notes: owned by the channel's event loop. Tags are added in increasing order, so insertion order is
 * tag order; {@link #restore} (a rolled back transaction) re-sorts.
 */
final class UnackedDeliveries {
    /** One delivery awaiting settlement. */
    record Entry(long tag, QueueHandle queue, long offset) {}

    private LinkedHashMap<Long, Entry> byTag = new LinkedHashMap<>();

    void add(long tag, QueueHandle queue, long offset) {
        byTag.put(tag, new Entry(tag, queue, offset));
    }

    int size() {
        return byTag.size();
    }

    boolean isEmpty() {
        return byTag.isEmpty();
    }

    /**
     * Removes and returns the entries an ack of {@code tag} settles, in tag order.
     *
     * @throws ServerFault {@code 406 PRECONDITION_FAILED} when {@code tag} is not outstanding (and not 0 with
     *     {@code multiple}); nothing is removed then
     */
    List<Entry> take(long tag, boolean multiple) {
        if (tag == 0 && multiple) {
            return takeAll();
        }
        if (!byTag.containsKey(tag)) {
            throw ServerFault.preconditionFailed("unknown delivery tag " + Long.toUnsignedString(tag));
        }
        if (!multiple) {
            return List.of(byTag.remove(tag));
        }
        List<Entry> taken = new ArrayList<>();
        Iterator<Entry> it = byTag.values().iterator();
        while (it.hasNext()) {
            Entry entry = it.next();
            if (Long.compareUnsigned(entry.tag(), tag) > 0) {
                break;
            }
            taken.add(entry);
            it.remove();
        }
        return taken;
    }

    /** Removes and returns every entry, in tag order. */
    List<Entry> takeAll() {
        List<Entry> all = new ArrayList<>(byTag.values());
        byTag.clear();
        return all;
    }

    /** Puts back entries taken by an ack that a transaction rollback undoes. */
    void restore(List<Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        List<Entry> all = new ArrayList<>(byTag.values());
        all.addAll(entries);
        all.sort(Comparator.comparingLong(Entry::tag));
        LinkedHashMap<Long, Entry> sorted = new LinkedHashMap<>();
        for (Entry entry : all) {
            sorted.put(entry.tag(), entry);
        }
        byTag = sorted;
    }

    /**
     * Settles {@code entries} with the broker: one {@link BrokerBackend#settle} per queue handle, offsets ascending.
     */
    static void settle(BrokerBackend backend, List<Entry> entries, Settlement settlement) {
        // one pass per queue, the queues in the order they first appear; an ack rarely spans more than one queue, so
        // the usual ack costs one array of offsets and no map
        int count = entries.size();
        boolean[] taken = new boolean[count];
        long[] offsets = new long[count];
        for (int first = 0; first < count; first++) {
            if (taken[first]) {
                continue;
            }
            QueueHandle queue = entries.get(first).queue();
            int found = 0;
            for (int i = first; i < count; i++) {
                if (!taken[i] && entries.get(i).queue().equals(queue)) {
                    taken[i] = true;
                    offsets[found++] = entries.get(i).offset();
                }
            }
            long[] ofQueue = found == count ? offsets : Arrays.copyOf(offsets, found);
            Arrays.sort(ofQueue);
            backend.settle(queue, ofQueue, settlement);
        }
    }
}
