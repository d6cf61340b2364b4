package io.ganglion.amqp.server;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
        if (entries.isEmpty()) {
            return;
        }
        if (oneQueue(entries)) {
            // the usual ack: one queue, often one delivery; no maps
            long[] offsets = new long[entries.size()];
            for (int i = 0; i < offsets.length; i++) {
                offsets[i] = entries.get(i).offset();
            }
            Arrays.sort(offsets);
            backend.settle(entries.get(0).queue(), offsets, settlement);
            return;
        }
        Map<QueueHandle, long[]> byQueue = new LinkedHashMap<>();
        Map<QueueHandle, Integer> counts = new LinkedHashMap<>();
        for (Entry entry : entries) {
            int count = counts.merge(entry.queue(), 1, Integer::sum);
            long[] offsets = byQueue.computeIfAbsent(entry.queue(), q -> new long[4]);
            if (count > offsets.length) {
                offsets = Arrays.copyOf(offsets, offsets.length * 2);
                byQueue.put(entry.queue(), offsets);
            }
            offsets[count - 1] = entry.offset();
        }
        for (Map.Entry<QueueHandle, long[]> queue : byQueue.entrySet()) {
            long[] offsets = Arrays.copyOf(queue.getValue(), counts.get(queue.getKey()));
            Arrays.sort(offsets);
            backend.settle(queue.getKey(), offsets, settlement);
        }
    }

    private static boolean oneQueue(List<Entry> entries) {
        QueueHandle first = entries.get(0).queue();
        for (int i = 1; i < entries.size(); i++) {
            if (!entries.get(i).queue().equals(first)) {
                return false;
            }
        }
        return true;
    }
}
